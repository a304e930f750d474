"""The PDF's own text, exact and instant where the PDF has one."""

from __future__ import annotations

import pypdfium2 as pdfium

from app.core.errors import OCRError
from app.engines._pages import failed_page, load_page, open_pdf, page_text
from app.engines.base import PageResult


class TextLayerEngine:
    name = "text-layer"

    def version(self) -> str:
        return f"pdfium {pdfium.PDFIUM_INFO.build}"

    def recognize(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        results = []
        with open_pdf(pdf_bytes) as document:
            for index in range(len(document)):
                number = first_page_number + index
                try:
                    page = load_page(document, index, number)
                    try:
                        results.append(read_page(page, number))
                    finally:
                        page.close()
                except (OCRError, MemoryError) as exc:  # the page cannot be read: the others can
                    results.append(failed_page(number, exc, "text-layer"))
        return results


def read_page(page: pdfium.PdfPage, number: int) -> PageResult:
    """The page's text layer and the text of its notes and fields, as the page's result (also the
    planner's reading of a text-layer document, app.engines.text_pass)."""
    return PageResult(number, page_text(page, number), 1.0, "text-layer")
