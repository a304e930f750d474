"""A page's CPU time in an OCR process (MAX_PAGE_CPU_SECONDS, app.engines._page_clock): a page
that uses it up ends its process and fails alone, at once, with the permanent `page_timeout`;
tesseract's reading is not counted."""

from __future__ import annotations

import resource
import time
from pathlib import Path
from typing import Any

import pytest

from app.engines._limits import Limits
from app.engines.errors import OcrProcessDiedError, PageTimeoutError
from app.engines.pool import make_ocr_pool, recognize_in_process, stop_ocr_pool
from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf
from tests.bombs import scattered_glyphs_pdf
from tests.pdf_factories import between_text_pages


def text_slow_text(tmp_path: Path) -> tuple[bytes, list[str]]:
    """Three pages: text, 40,000 scattered letters (PDFium's text page takes seconds), text."""
    texts = between_text_pages(tmp_path / "chunk.pdf", scattered_glyphs_pdf(tmp_path / "slow.pdf", 40_000))
    return (tmp_path / "chunk.pdf").read_bytes(), texts


def with_cpu_seconds(*args: Any) -> tuple[Any, float]:
    """Run in an OCR process: recognize_in_process(*args), and the CPU seconds it took there."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    result = recognize_in_process(*args)
    after = resource.getrusage(resource.RUSAGE_SELF)
    return result, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


@pytest.mark.timeout(120)
def test_a_page_that_uses_up_its_cpu_time_fails_alone_with_page_timeout(tmp_path: Path) -> None:
    chunk, texts = text_slow_text(tmp_path)
    pool = make_ocr_pool(1, Limits(page_cpu_seconds=1))
    try:
        with pytest.raises(PageTimeoutError) as raised:
            pool.submit(recognize_in_process, "text-layer", chunk, 11).result(timeout=60)
        error = raised.value
        assert isinstance(error, OcrProcessDiedError)  # the pool's death handling applies to it
        assert (error.code, error.retryable, error.context["page"]) == ("page_timeout", False, 12)
        assert "MAX_PAGE_CPU_SECONDS" in error.message
        assert pool.replaced == 1

        lost = {12: (error.code, error.message)}
        pages, _ = pool.submit(recognize_in_process, "text-layer", chunk, 11, lost=lost).result(timeout=60)
        assert [p.page_number for p in pages] == [11, 12, 13]
        assert [p.text.split() for p in (pages[0], pages[2])] == [t.split() for t in texts]
        assert pages[1].error is not None
        assert (pages[1].error.code, pages[1].error.message) == lost[12]
        assert pool.replaced == 1  # the rerun did not read the slow page
    finally:
        stop_ocr_pool(pool)


def spin(seconds: float) -> float:
    """Run in an OCR process: use `seconds` of CPU time without loading a page."""
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
    return time.process_time() - start


@pytest.mark.timeout(120)
def test_a_pages_clock_stops_with_its_task(tmp_path: Path) -> None:
    """A page's clock runs from its loading to the end of its task, not into the process's next
    task: work after it that loads no page is not timed."""
    texts = make_born_digital_pdf(tmp_path / "a.pdf", pages=1, seed=5)
    pool = make_ocr_pool(1, Limits(page_cpu_seconds=0.5))
    try:
        pages, _ = pool.submit(
            recognize_in_process, "text-layer", (tmp_path / "a.pdf").read_bytes(), 1
        ).result(timeout=60)
        assert pages[0].text.split() == texts[0].split()
        assert pool.submit(spin, 1.5).result(timeout=60) >= 1.5
        assert pool.replaced == 0
    finally:
        stop_ocr_pool(pool)


@pytest.mark.timeout(120)
def test_tesseracts_reading_is_not_counted_against_the_page(tmp_path: Path) -> None:
    texts = make_scanned_pdf(tmp_path / "scan.pdf", pages=1, seed=3)
    budget = 0.25
    pool = make_ocr_pool(1, Limits(page_cpu_seconds=budget))
    try:
        (pages, _), cpu_seconds = pool.submit(
            with_cpu_seconds, "tesseract", (tmp_path / "scan.pdf").read_bytes(), 1
        ).result(timeout=100)
    finally:
        stop_ocr_pool(pool)
    assert cpu_seconds > 2 * budget  # the page took more than its budget, nearly all of it tesseract's
    assert pages[0].error is None
    assert len(set(pages[0].text.split()) & set(texts[0].split())) > 50
    assert pool.replaced == 0
