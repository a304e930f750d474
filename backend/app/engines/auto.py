"""The default engine: the text layer where a page has real text, tesseract elsewhere.

The rule, per page:

1. Real text: at least MIN_VISIBLE_CHARS (16) non-whitespace characters, a
   CJK character (Han, kana, Hangul) counting as CJK_CHAR_WEIGHT (6): one
   carries about what a short word of an alphabet does, so a three-character
   Japanese title is as much text as a 16-letter English one. Of them, at
   least 90 % are printable (unmapped glyphs come out as U+FFFD or
   control characters) and at least half are letters or digits (a garbage
   OCR layer over a scan is mostly punctuation and stray marks: ``.,'~|``).
2. A page with real text but less than SUBSTANTIAL_CHARS (200) of it, on
   which images cover at least half the page, is a scan with a stamp (a Bates
   number, a page header) added as text: it is OCR'd, or its body would be
   lost.
3. Otherwise real text is used as is (source "text-layer", confidence 1.0);
   every other page goes to tesseract (source "ocr"), in batches.
"""

from __future__ import annotations

import re

import pypdfium2 as pdfium

from app.engines._pages import image_coverage, load_page, open_pdf, page_text
from app.engines.base import PageResult
from app.engines.tesseract import TesseractEngine

MIN_VISIBLE_CHARS = 16
CJK_CHAR_WEIGHT = 6
MIN_PRINTABLE_SHARE = 0.9
MIN_ALNUM_SHARE = 0.5
SUBSTANTIAL_CHARS = 200
SCAN_IMAGE_COVERAGE = 0.5


_NOT_ALNUM = re.compile(r"[\W_]")  # in str patterns \w is str.isalnum() plus "_"
# Han (with extension A and the compatibility block), hiragana, katakana and Hangul syllables
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def has_real_text(text: str) -> bool:
    return _is_real_text("".join(text.split()))


def _is_real_text(visible: str) -> bool:
    """Rule 1 on a page's characters without whitespace. String methods and a regex rather than
    a loop per character, which was a large share of the engine's time on text pages."""
    if len(visible) < MIN_VISIBLE_CHARS:
        cjk = len(_CJK.findall(visible))
        if len(visible) + cjk * (CJK_CHAR_WEIGHT - 1) < MIN_VISIBLE_CHARS:
            return False
    if visible.isprintable() and "\ufffd" not in visible:
        printable = len(visible)
    else:
        printable = sum(1 for c in visible if c.isprintable() and c != "\ufffd")
    alnum = len(visible) - len(_NOT_ALNUM.findall(visible))
    return printable >= MIN_PRINTABLE_SHARE * len(visible) and alnum >= MIN_ALNUM_SHARE * len(visible)


class AutoEngine:
    name = "auto"

    def __init__(self) -> None:
        self.tesseract = TesseractEngine()

    def version(self) -> str:
        return f"auto (text layer + {self.tesseract.version()})"

    def recognize(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        results: list[PageResult] = []
        to_ocr: list[int] = []
        with open_pdf(pdf_bytes) as document:
            for index in range(len(document)):
                number = first_page_number + index
                page = load_page(document, index, number)
                try:
                    text = page_text(page)
                    if _use_text_layer(text, page):
                        results.append(PageResult(number, text, 1.0, "text-layer"))
                    else:
                        to_ocr.append(index)
                finally:
                    page.close()
            if to_ocr:
                results += self.tesseract.recognize_pages(document, to_ocr, first_page_number)
        return sorted(results, key=lambda result: result.page_number)


def _use_text_layer(text: str, page: pdfium.PdfPage) -> bool:
    visible = "".join(text.split())
    if not _is_real_text(visible):
        return False
    if len(visible) >= SUBSTANTIAL_CHARS:
        return True
    return image_coverage(page) < SCAN_IMAGE_COVERAGE  # a short text over a full-page image: a stamp
