"""Tesseract on pages rendered at 300 DPI, with per-word confidences.

Pages are rendered to grayscale TIFF files and read by one tesseract process
per batch of BATCH_PAGES (see _tesseract_exec.py for the measurements), so a
chunk pays tesseract's start-up once per batch, not once per page. Pages with
nothing on them are answered without OCR.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

import pypdfium2 as pdfium

from app.core.logging import get_logger
from app.engines._pages import RENDER_DPI, is_empty, load_page, open_pdf, render_gray
from app.engines._tesseract_exec import (
    TsvWord,
    check_language,
    run_tesseract,
    scratch_directory,
    tesseract_binary,
    tesseract_version,
    words_to_text,
)
from app.engines.base import PageResult, Word
from app.engines.errors import TesseractFailedError

log = get_logger(__name__)

BATCH_PAGES = 8  # pages per tesseract process: its start-up spread thin, its scratch images bounded


class TesseractEngine:
    name = "tesseract"

    def __init__(self, language: str = "eng") -> None:
        self.language = language
        # Fail at construction, not on the first page, when the binary or the language is missing.
        tesseract_binary()
        check_language(language)

    def version(self) -> str:
        return tesseract_version()

    def recognize(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        with open_pdf(pdf_bytes) as document:
            return self.recognize_pages(document, range(len(document)), first_page_number)

    def recognize_pages(
        self, document: pdfium.PdfDocument, indices: Iterable[int], first_page_number: int
    ) -> list[PageResult]:
        """OCR the pages at indices (0-based in document), numbered from first_page_number."""
        results: list[PageResult] = []
        with scratch_directory() as scratch:
            batch: list[tuple[int, Path]] = []
            for index in indices:
                number = first_page_number + index
                page = load_page(document, index, number)
                try:
                    if is_empty(page):
                        results.append(PageResult(number, "", 0.0, "ocr"))
                        continue
                    path = scratch / f"{number:06d}.tif"
                    render_gray(page, number).save(path, format="TIFF", dpi=(RENDER_DPI, RENDER_DPI))
                finally:
                    page.close()
                batch.append((number, path))
                if len(batch) == BATCH_PAGES:
                    results += self._ocr(batch)
                    batch = []
            if batch:
                results += self._ocr(batch)
        return sorted(results, key=lambda result: result.page_number)

    def _ocr(self, batch: list[tuple[int, Path]]) -> list[PageResult]:
        started = time.perf_counter()
        numbers = [number for number, _ in batch]
        try:
            pages = run_tesseract([path for _, path in batch], dpi=RENDER_DPI, language=self.language)
        except TesseractFailedError as exc:
            index = exc.context.get("image_index")
            number = numbers[index] if isinstance(index, int) else None
            where = f"page {number}: " if number is not None else f"pages {numbers[0]}-{numbers[-1]}: "
            raise TesseractFailedError(where + exc.message, page=number) from None
        finally:
            for _, path in batch:
                path.unlink(missing_ok=True)  # scratch is in memory: free it batch by batch
        log.debug(
            "tesseract_batch",
            pages=len(batch),
            first_page=numbers[0],
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        return [_page_result(number, words) for number, words in zip(numbers, pages, strict=True)]


def _page_result(number: int, words: list[TsvWord]) -> PageResult:
    confidence = sum(w.confidence for w in words) / len(words) / 100 if words else 0.0
    return PageResult(
        number,
        words_to_text(words),
        round(confidence, 4),
        "ocr",
        tuple(
            Word(w.text, round(w.confidence / 100, 4), (w.left, w.top, w.left + w.width, w.top + w.height))
            for w in words
        ),
    )
