"""The command line's options as parsed (what each command then does is tested end to end)."""

from __future__ import annotations

import pytest

from app.cli import _parser, main
from app.engines.registry import available_engines


def test_ocr_processes_and_its_older_name() -> None:
    assert _parser().parse_args(["run", "a.pdf", "--ocr-processes", "3"]).ocr_processes == 3
    assert _parser().parse_args(["run", "a.pdf", "--workers", "2"]).ocr_processes == 2
    assert _parser().parse_args(["run", "a.pdf"]).ocr_processes is None  # OCR_PROCESSES, else the cores


def test_ocr_processes_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["run", "a.pdf", "--ocr-processes", "0"])
    assert exited.value.code == 2
    assert "must be at least 1" in capsys.readouterr().err


def test_every_engine_is_offered() -> None:
    for engine in available_engines():
        assert _parser().parse_args(["run", "a.pdf", "--engine", engine]).engine == engine
