"""Tesseract for real on 300 DPI scans (a missing tesseract fails these tests, by design)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pypdf import PdfReader, PdfWriter

from app.engines.errors import EngineUnavailableError, PageRenderError, TesseractFailedError
from app.engines.tesseract import TesseractEngine
from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf
from tests.integration.engines.conftest import Sample
from tests.pdf_factories import cer, make_oversized_page_pdf, make_wide_page_pdf


def test_tesseract_is_installed() -> None:
    assert shutil.which("tesseract"), "tesseract must be installed: apt-get install tesseract-ocr"


def test_a_300_dpi_scan_reads_with_under_2_percent_cer(scan_2p: Sample) -> None:
    engine = TesseractEngine()
    pages = engine.recognize(scan_2p.data, 7)
    assert [p.page_number for p in pages] == [7, 8]
    for page, text in zip(pages, scan_2p.texts, strict=True):
        assert cer(text, page.text) < 0.02
        assert page.source == "ocr"
        assert 0.8 < page.confidence <= 1.0
        assert page.words
        assert page.confidence == pytest.approx(
            sum(w.confidence for w in page.words) / len(page.words), abs=1e-3
        )
        assert all(0.0 <= w.confidence <= 1.0 for w in page.words)
        assert all(
            0 <= w.bbox[0] < w.bbox[2] <= 2550 and 0 <= w.bbox[1] < w.bbox[3] <= 3301 for w in page.words
        )
    # Line breaks come back where the page has them (paragraph breaks are tesseract's guess).
    for page, text in zip(pages, scan_2p.texts, strict=True):
        assert len([line for line in page.text.splitlines() if line]) == len(
            [line for line in text.splitlines() if line]
        )
    assert engine.version().startswith("tesseract 5")


def test_blank_pages_cost_no_ocr(tmp_path: Path) -> None:
    make_born_digital_pdf(tmp_path / "blank.pdf", pages=30, blank=True)
    pages = TesseractEngine().recognize((tmp_path / "blank.pdf").read_bytes(), 1)
    assert [(p.page_number, p.text, p.confidence, p.words) for p in pages] == [
        (n, "", 0.0, ()) for n in range(1, 31)
    ]


def test_a_page_tesseract_refuses_is_a_permanent_error(tmp_path: Path) -> None:
    make_wide_page_pdf(tmp_path / "wide.pdf")  # 58,334 pixels wide: tesseract exits 1, "Image too large"
    with pytest.raises(TesseractFailedError) as raised:
        TesseractEngine().recognize((tmp_path / "wide.pdf").read_bytes(), 4)
    assert raised.value.code == "tesseract_failed"
    assert raised.value.retryable is False
    assert str(raised.value).startswith("page 4: tesseract exited with 1")
    assert "Image too large" in str(raised.value)


def test_the_refused_page_is_named_inside_a_batch(tmp_path: Path) -> None:
    """A batch stops at the bad page; the error names it, not the batch."""
    make_scanned_pdf(tmp_path / "scan.pdf", pages=1, seed=9)
    make_wide_page_pdf(tmp_path / "wide.pdf")
    make_born_digital_pdf(tmp_path / "text.pdf", pages=1)
    writer = PdfWriter()
    for part in ("scan", "wide", "text"):
        writer.append(PdfReader(tmp_path / f"{part}.pdf"))
    writer.write(tmp_path / "mixed.pdf")
    with pytest.raises(TesseractFailedError) as raised:
        TesseractEngine().recognize((tmp_path / "mixed.pdf").read_bytes(), 20)
    assert raised.value.context["page"] == 21


def test_a_page_too_large_to_render_is_a_permanent_error(tmp_path: Path) -> None:
    make_oversized_page_pdf(tmp_path / "poster.pdf")  # 200 x 200 inches
    with pytest.raises(PageRenderError) as raised:
        TesseractEngine().recognize((tmp_path / "poster.pdf").read_bytes(), 1)
    assert raised.value.code == "page_render_failed"
    assert raised.value.retryable is False
    assert "page 1" in str(raised.value)


def test_a_chunk_that_is_not_a_pdf_is_a_render_error() -> None:
    with pytest.raises(PageRenderError):
        TesseractEngine().recognize(b"%PDF-1.7\n" + bytes(100), 1)


def test_a_missing_language_is_a_deployment_error_before_any_page() -> None:
    with pytest.raises(EngineUnavailableError) as raised:
        TesseractEngine(language="xyz")
    assert "tesseract-ocr-xyz" in str(raised.value)
    assert not raised.value.retryable
