"""Tesseract for real on 300 DPI scans (a missing tesseract fails these tests, by design)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from PIL import Image
from pypdf import PdfReader, PdfWriter

from app.engines._tesseract_api import reader
from app.engines.errors import EngineUnavailableError, PageRenderError, TesseractFailedError
from app.engines.tesseract import TesseractEngine
from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf
from tests.integration.engines.conftest import Sample
from tests.pdf_factories import cer, make_huge_page_pdf, make_oversized_page_pdf, make_wide_page_pdf


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


def test_a_page_wider_than_tesseract_accepts_is_read_at_a_lower_resolution(tmp_path: Path) -> None:
    make_wide_page_pdf(tmp_path / "wide.pdf")  # 58,334 pixels wide at 300 DPI: tesseract refuses that
    (page,) = TesseractEngine().recognize((tmp_path / "wide.pdf").read_bytes(), 4)
    assert page.error is None
    assert "banner far too wide" in page.text
    assert page.dpi == 32_767 * 72 // 14_000  # the widest tesseract takes: 168 DPI
    assert all(word.bbox[2] <= 32_767 for word in page.words)  # boxes in pixels of that render


def test_a_page_too_large_for_300_dpi_is_read_at_the_resolution_that_fits(tmp_path: Path) -> None:
    make_oversized_page_pdf(tmp_path / "poster.pdf")  # 200 x 200 inches: 3,600 megapixels at 300 DPI
    (page,) = TesseractEngine().recognize((tmp_path / "poster.pdf").read_bytes(), 1)
    assert page.error is None
    assert page.dpi == 63  # 160 megapixels
    assert cer("A poster nobody can render at 300 DPI", page.text) < 0.1


def test_one_unreadable_page_fails_alone_inside_a_batch(tmp_path: Path) -> None:
    """Scan, a page too large even at 50 DPI, text: the first and last are read, the middle one
    is a failed page that says why."""
    make_scanned_pdf(tmp_path / "scan.pdf", pages=1, seed=9)
    make_huge_page_pdf(tmp_path / "huge.pdf")
    make_born_digital_pdf(tmp_path / "text.pdf", pages=1)
    writer = PdfWriter()
    for part in ("scan", "huge", "text"):
        writer.append(PdfReader(tmp_path / f"{part}.pdf"))
    writer.write(tmp_path / "mixed.pdf")
    pages = TesseractEngine().recognize((tmp_path / "mixed.pdf").read_bytes(), 20)
    assert [p.page_number for p in pages] == [20, 21, 22]
    assert pages[0].error is None
    assert pages[2].error is None
    assert len(pages[0].text) > 500
    assert len(pages[2].text) > 100
    failed = pages[1]
    assert (failed.text, failed.words, failed.confidence) == ("", (), 0.0)
    assert failed.error is not None
    assert failed.error.code == "page_too_large"
    assert failed.error.message.startswith("page 21 is 2778 x 1389 inches")
    assert "too large to OCR even at 50 DPI" in failed.error.message


def test_an_image_tesseract_refuses_is_a_page_failure_with_its_reason_and_the_next_one_reads(
    scan_2p: Sample,
) -> None:
    pdf = pdfium.PdfDocument(scan_2p.data)
    image = pdf[0].render(scale=300 / 72).to_pil().convert("L")
    with pytest.raises(TesseractFailedError) as refused:
        reader("eng").read(Image.new("L", (40_000, 10), 255), dpi=300)  # wider than tesseract takes
    assert "Image too large" in refused.value.message
    assert not refused.value.retryable
    words = reader("eng").read(image, dpi=300)
    assert cer(scan_2p.texts[0], " ".join(w.text for w in words)) < 0.05


def test_a_chunk_that_is_not_a_pdf_is_a_render_error() -> None:
    with pytest.raises(PageRenderError):
        TesseractEngine().recognize(b"%PDF-1.7\n" + bytes(100), 1)


def test_a_missing_language_is_a_deployment_error_before_any_page() -> None:
    with pytest.raises(EngineUnavailableError) as raised:
        TesseractEngine(language="xyz")
    assert "tesseract-ocr-xyz" in str(raised.value)
    assert not raised.value.retryable
