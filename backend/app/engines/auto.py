"""The default: the text layer where a page has real text, tesseract elsewhere."""

from __future__ import annotations

from app.engines._pages import load_page, open_pdf, page_text
from app.engines.base import PageResult
from app.engines.tesseract import TesseractEngine

# "Real text": at least this many visible characters, nearly all of them
# printable. Scans with an empty or garbage text layer (unmapped glyphs come
# out as U+FFFD or control characters) fall through to OCR.
MIN_VISIBLE_CHARS = 16
MIN_PRINTABLE_SHARE = 0.9


def has_real_text(text: str) -> bool:
    visible = [c for c in text if not c.isspace()]
    if len(visible) < MIN_VISIBLE_CHARS:
        return False
    printable = sum(1 for c in visible if c.isprintable() and c != "\ufffd")
    return printable / len(visible) >= MIN_PRINTABLE_SHARE


class AutoEngine:
    name = "auto"

    def __init__(self) -> None:
        self.tesseract = TesseractEngine()

    def version(self) -> str:
        return f"auto (text layer + {self.tesseract.version()})"

    def recognize(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        results = []
        with open_pdf(pdf_bytes) as document:
            for index in range(len(document)):
                number = first_page_number + index
                page = load_page(document, index, number)
                try:
                    text = page_text(page)
                    if has_real_text(text):
                        results.append(PageResult(number, text, 1.0, "text-layer"))
                    else:
                        results.append(self.tesseract.recognize_page(page, number))
                finally:
                    page.close()
        return results
