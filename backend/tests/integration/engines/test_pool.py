"""Engines in OCR worker processes: built there by name, results pickled back."""

from __future__ import annotations

from pathlib import Path

from app.engines.null import NullEngine
from app.engines.pool import make_ocr_pool, recognize_in_process
from app.pdf.samples import make_born_digital_pdf


def test_pool_runs_engines_in_other_processes(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "b.pdf", pages=2)
    data = (tmp_path / "b.pdf").read_bytes()
    with make_ocr_pool(2) as pool:
        futures = [pool.submit(recognize_in_process, "text-layer", data, n) for n in (1, 3)]
        results = [f.result(timeout=60) for f in futures]
    assert [[p.page_number for p in pages] for pages, _ in results] == [[1, 2], [3, 4]]
    assert all(version.startswith("pdfium") for _, version in results)


def test_null_engine_is_instant_and_empty(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "b.pdf", pages=40, seed=2)
    pages = NullEngine().recognize((tmp_path / "b.pdf").read_bytes(), 101)
    assert [(p.page_number, p.text) for p in pages] == [(n, "") for n in range(101, 141)]
