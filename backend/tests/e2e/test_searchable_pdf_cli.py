"""`chunk-ocr run --output ... pdf` and `chunk-ocr result --format pdf`, with real worker processes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.pdf.samples import make_born_digital_pdf
from tests.e2e.conftest import run_cli
from tests.pdf_factories import cer, make_mixed_pdf
from tests.pdf_tools import pdftotext, qpdf_check


@pytest.mark.timeout(300)
async def test_run_writes_the_outputs_asked_for_and_result_gives_the_pdf_again(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    texts = make_mixed_pdf(tmp_path / "scan.pdf", "sd", seed=71)
    out = tmp_path / "out"
    ran = run_cli(
        ["run", str(tmp_path / "scan.pdf"), "--out", str(out), "--output", "pdf,txt", "--json"], cli_env
    )
    assert ran.returncode == 0, ran.stderr
    (doc,) = json.loads(ran.stdout)["documents"]
    assert sorted(p.name for p in out.iterdir()) == ["scan.ocr.pdf", "scan.txt"]  # no JSON: not asked for
    assert doc["pdf_path"] == str(out / "scan.ocr.pdf")
    assert "json_path" not in doc
    mask = os.umask(0o022)
    os.umask(mask)
    assert (out / "scan.ocr.pdf").stat().st_mode & 0o777 == 0o666 & ~mask  # the user's file, not the store's
    pages = pdftotext(out / "scan.ocr.pdf").split("\f")
    for text, page in zip(texts, pages, strict=False):
        assert cer(text, page) < 0.05
    qpdf_check(out / "scan.ocr.pdf")

    again = run_cli(
        ["result", doc["document_id"], "--format", "pdf", "--out", str(tmp_path / "again")], cli_env
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == str(tmp_path / "again" / "scan.ocr.pdf")
    assert (tmp_path / "again" / "scan.ocr.pdf").read_bytes() == (out / "scan.ocr.pdf").read_bytes()


@pytest.mark.timeout(300)
async def test_a_born_digital_file_asked_for_as_pdf_is_its_own_searchable_pdf(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    make_born_digital_pdf(tmp_path / "born.pdf", pages=3, seed=72)
    ran = run_cli(["run", str(tmp_path / "born.pdf"), "--out", str(tmp_path), "--output", "pdf"], cli_env)
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "born.ocr.pdf").read_bytes() == (tmp_path / "born.pdf").read_bytes()
    assert not (tmp_path / "born.txt").exists()
    assert ran.stdout.strip().endswith(f"-> {tmp_path / 'born.ocr.pdf'}")  # the summary names what it wrote


@pytest.mark.parametrize("value", ["docx", "txt,html", ","])
async def test_an_unknown_output_is_one_line_and_exit_2(
    cli_env: dict[str, str], tmp_path: Path, value: str
) -> None:
    make_born_digital_pdf(tmp_path / "a.pdf", pages=1, seed=73)
    ran = run_cli(["run", str(tmp_path / "a.pdf"), "--output", value], cli_env)
    assert ran.returncode == 2
    assert "give one or more of txt, json, pdf" in ran.stderr
    assert "Traceback" not in ran.stderr
