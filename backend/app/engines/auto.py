"""The default engine: the text layer where a page has real text, tesseract elsewhere.

The rule, per page, on the page's own text as PDFium gives it (before cleaning):

1. Real text: not short and not garbage, as _text_quality defines them. Short: under
   MIN_VISIBLE_CHARS (16) visible characters, each weighted by its script (a CJK character
   counts 6, an Arabic letter 3, ...: what one carries, and that OCR cannot read it back).
   Garbage: what a broken text layer leaves behind - control characters and U+FFFD, private-
   use characters from a symbol font, content-stream operators, mojibake, scripts mixed
   inside words, or mostly marks (a garbage OCR layer over a scan: ``.,'~|``).
2. A page with real text but less than SUBSTANTIAL_CHARS (200) of it, on which images cover
   at least half the page, is a scan with a stamp (a Bates number, a page header) added as
   text: it is OCR'd, or its body would be lost. So is one with more, up to LEGEND_CHARS
   (1000), whose drawn characters cover under LEGEND_AREA (3 %) of the page: a scan with a
   legend (a clerk's certification, an e-filing header and footer) in small print. Of those
   with more, a page whose text is mostly an OCR layer (less than SUBSTANTIAL_CHARS drawn,
   the rest in render mode 3) is not: that text is the scan's, read before; nor is a slide
   over a background picture, whose text is large. Under SUBSTANTIAL_CHARS, size tells
   nothing safe (a DRAFT watermark is large, and a sparse old OCR layer may have missed the
   body): a short slide or memo over a full-page picture is OCR'd too, which reads it.
3. Otherwise real text is used as is (source "text-layer", confidence 1.0), followed by the
   visible text of the page's FreeText notes and filled form fields (_annotations); every
   other page goes to tesseract (source "ocr"), in batches, whose render draws those fields
   and notes (in a chunk cut without the document's form, where PDFium cannot draw fields,
   their values follow the OCR'd text). The rule looks at the page's own text only: the
   answers of a form laid over a scanned page must not stand for the scan's text.
4. A page OCR reads nothing on whose text layer is short but no garbage (a lone page number,
   "A B C" drawn too large or too faint for tesseract) is that text, from its text layer.
"""

from __future__ import annotations

import pypdfium2 as pdfium

from app.core.errors import OCRError
from app.core.languages import DEFAULT_LANGUAGE
from app.core.logging import get_logger
from app.engines._annotations import with_annotation_text
from app.engines._pages import (
    draws_images,
    failed_page,
    image_coverage,
    is_empty,
    load_page,
    open_pdf,
    page_text,
    shown_text_area,
)
from app.engines._text_quality import garbage_reason, is_short
from app.engines.base import PageResult
from app.engines.tesseract import TesseractEngine

log = get_logger(__name__)

SUBSTANTIAL_CHARS = 200
SCAN_IMAGE_COVERAGE = 0.5
LEGEND_CHARS = 1000
LEGEND_AREA = 0.03


def has_real_text(text: str) -> bool:
    """Rule 1: text (a page's raw text layer) is long enough and not garbage."""
    visible = "".join(text.split())
    return not is_short(visible) and garbage_reason(text, visible) is None


class AutoEngine:
    name = "auto"

    def __init__(self, language: str = DEFAULT_LANGUAGE) -> None:
        self.tesseract = TesseractEngine(language)  # what pages without real text are read in

    def warm(self) -> None:
        self.tesseract.warm()

    def version(self) -> str:
        return f"auto (text layer + {self.tesseract.version()})"

    def recognize(self, pdf_bytes: bytes, first_page_number: int) -> list[PageResult]:
        results: list[PageResult] = []
        to_ocr: list[int] = []
        short: dict[int, str] = {}  # page number: a short text layer, if OCR reads nothing there
        with open_pdf(pdf_bytes) as document:
            for index in range(len(document)):
                number = first_page_number + index
                try:
                    page = load_page(document, index, number)
                    try:
                        read, fallback = _read_layer(page, number)
                        if fallback is not None:
                            short[number] = fallback
                    finally:
                        page.close()
                except (OCRError, MemoryError) as exc:  # the page cannot be read: the others can
                    results.append(failed_page(number, exc, "text-layer"))
                    continue
                if read is not None:
                    results.append(read)
                else:  # tesseract adds the form fields its render leaves out
                    to_ocr.append(index)
            if to_ocr:
                results += self.tesseract.recognize_pages(
                    document,
                    to_ocr,
                    first_page_number,
                    finish=lambda result: _or_short_text(result, short.get(result.page_number)),
                )
        return sorted(results, key=lambda result: result.page_number)


def text_layer_page(page: pdfium.PdfPage, number: int) -> PageResult | None:
    """The page read from its text layer by the rule above, or None: it needs OCR. (The planner
    asks this of every page of an auto document, app.engines.text_pass.)"""
    return _read_layer(page, number)[0]


def _read_layer(page: pdfium.PdfPage, number: int) -> tuple[PageResult | None, str | None]:
    """text_layer_page, and for a page it leaves to OCR whose text layer is short but no garbage
    ("A B C", a page number) that text, with its notes: what the page says if OCR reads nothing
    on it (rule 4). The page's text is extracted once for both."""
    text = page_text(page, number, annotations=False)
    if _use_text_layer(text, page, number):
        return PageResult(number, with_annotation_text(text, page), 1.0, "text-layer"), None
    if is_empty(page) and (notes := with_annotation_text("", page)):
        # nothing drawn for tesseract to read (it answers blank), but notes or fields
        return PageResult(number, notes, 1.0, "text-layer"), None
    visible = "".join(text.split())
    if visible and is_short(visible) and garbage_reason(text, visible) is None:
        return None, with_annotation_text(text, page)
    return None, None


def _or_short_text(result: PageResult, text: str | None) -> PageResult:
    """A page OCR read nothing on (a lone page number, letters too large or too faint for it),
    with its short text layer: that text, as a text-layer page."""
    if text is None or result.error is not None or result.text.strip():
        return result
    return PageResult(result.page_number, text, 1.0, "text-layer")


def _use_text_layer(text: str, page: pdfium.PdfPage, number: int) -> bool:
    visible = "".join(text.split())
    if is_short(visible):
        return False
    reason = garbage_reason(text, visible)
    if reason is not None:
        log.debug("text_layer_rejected", page=number, reason=reason, chars=len(visible))
        return False
    if len(visible) >= LEGEND_CHARS or not draws_images(page) or image_coverage(page) < SCAN_IMAGE_COVERAGE:
        return True
    if len(visible) < SUBSTANTIAL_CHARS:  # a short text over a full-page image: a stamp
        return False
    shown, area = shown_text_area(page)
    if shown >= SUBSTANTIAL_CHARS and area < LEGEND_AREA:  # small print over a full-page image: a legend
        log.debug("text_layer_rejected", page=number, reason="legend over a scan", chars=len(visible))
        return False
    return True
