"""Tesseract on pages rendered at 300 DPI, with per-word confidences."""

from __future__ import annotations

from app.engines._pages import RENDER_DPI, is_empty, load_page, open_pdf, render_pnm
from app.engines._tesseract_exec import run_tesseract_tsv, tesseract_binary, tesseract_version, words_to_text
from app.engines.base import PageResult, Word


class TesseractEngine:
    name = "tesseract"

    def __init__(self, language: str = "eng") -> None:
        self.language = language
        tesseract_binary()  # fail at construction, not on the first page, when it is missing

    def version(self) -> str:
        return tesseract_version()

    def recognize(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        with open_pdf(pdf_bytes) as document:
            results = []
            for index in range(len(document)):
                number = first_page_number + index
                page = load_page(document, index, number)
                try:
                    results.append(self.recognize_page(page, number))
                finally:
                    page.close()
            return results

    def recognize_page(self, page: object, number: int) -> PageResult:
        from pypdfium2 import PdfPage

        assert isinstance(page, PdfPage)
        if is_empty(page):
            return PageResult(number, "", 0.0, "ocr")
        words = run_tesseract_tsv(render_pnm(page, number), dpi=RENDER_DPI, language=self.language)
        confidence = sum(w.confidence for w in words) / len(words) / 100 if words else 0.0
        return PageResult(
            number,
            words_to_text(words),
            round(confidence, 4),
            "ocr",
            tuple(
                Word(
                    w.text, round(w.confidence / 100, 4), (w.left, w.top, w.left + w.width, w.top + w.height)
                )
                for w in words
            ),
        )
