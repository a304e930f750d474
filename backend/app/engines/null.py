"""Empty pages, instantly: for measuring the pipeline without OCR."""

from __future__ import annotations

from app.engines._pages import open_pdf
from app.engines.base import PageResult


class NullEngine:
    name = "null"

    def version(self) -> str:
        return "null 1"

    def recognize(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        with open_pdf(pdf_bytes) as document:
            count = len(document)
        return [PageResult(first_page_number + i, "", 0.0, "ocr") for i in range(count)]
