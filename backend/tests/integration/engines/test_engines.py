"""Engines on real PDFs with real tesseract (missing tesseract fails these tests, by design)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.engines.errors import TesseractFailedError, UnknownEngineError
from app.engines.pool import make_ocr_pool, recognize_in_process
from app.engines.registry import available_engines, get_engine
from app.pdf.samples import cer, make_born_digital_pdf, make_mixed_pdf, make_scanned_pdf
from tests.factories import wide_page_pdf


def test_tesseract_reads_a_300_dpi_scan(tmp_path: Path) -> None:
    texts = make_scanned_pdf(tmp_path / "s.pdf", pages=2, seed=5)
    pages, version = recognize_in_process("tesseract", (tmp_path / "s.pdf").read_bytes(), 7)
    assert version.startswith("tesseract")
    assert [p.page_number for p in pages] == [7, 8]
    assert cer("\n".join(texts), "\n".join(p.text for p in pages)) < 0.02
    for page in pages:
        assert page.source == "ocr"
        assert 0.8 < page.confidence <= 1.0
        assert page.words
        assert all(0.0 <= w.confidence <= 1.0 for w in page.words)
        assert all(w.bbox[0] < w.bbox[2] and w.bbox[1] < w.bbox[3] for w in page.words)


def test_a_page_tesseract_refuses_is_a_permanent_error(tmp_path: Path) -> None:
    wide_page_pdf(tmp_path / "wide.pdf")
    with pytest.raises(TesseractFailedError) as raised:
        recognize_in_process("tesseract", (tmp_path / "wide.pdf").read_bytes(), 1)
    assert raised.value.code == "tesseract_failed"
    assert raised.value.retryable is False


def test_text_layer_is_exact(tmp_path: Path) -> None:
    texts = make_born_digital_pdf(tmp_path / "b.pdf", pages=3, seed=6)
    pages, _ = recognize_in_process("text-layer", (tmp_path / "b.pdf").read_bytes(), 1)
    assert [p.text.split() for p in pages] == [t.split() for t in texts]
    assert {(p.source, p.confidence) for p in pages} == {("text-layer", 1.0)}


def test_auto_uses_the_text_layer_where_there_is_one(tmp_path: Path) -> None:
    texts = make_mixed_pdf(tmp_path / "m.pdf", "dsd", seed=8)
    pages, version = recognize_in_process("auto", (tmp_path / "m.pdf").read_bytes(), 1)
    assert [p.source for p in pages] == ["text-layer", "ocr", "text-layer"]
    assert pages[0].text.split() == texts[0].split()  # exact, not OCR'd
    assert pages[2].text.split() == texts[2].split()
    assert cer(texts[1], pages[1].text) < 0.02
    assert "tesseract" in version


def test_blank_pages_cost_no_ocr(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "blank.pdf", pages=50, blank=True)
    for engine in ("auto", "tesseract", "null"):
        pages, _ = recognize_in_process(engine, (tmp_path / "blank.pdf").read_bytes(), 1)
        assert [(p.text, p.page_number) for p in pages] == [("", n) for n in range(1, 51)]


def test_registry() -> None:
    assert set(available_engines()) == {"auto", "tesseract", "text-layer", "google-vision", "null"}
    assert get_engine("null") is get_engine("null")
    with pytest.raises(UnknownEngineError):
        get_engine("magic")


def test_pool_runs_engines_in_other_processes(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "b.pdf", pages=2)
    with make_ocr_pool(2) as pool:
        futures = [
            pool.submit(recognize_in_process, "text-layer", (tmp_path / "b.pdf").read_bytes(), n)
            for n in (1, 3)
        ]
        assert [[p.page_number for p in f.result()[0]] for f in futures] == [[1, 2], [3, 4]]
