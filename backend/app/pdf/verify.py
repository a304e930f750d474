"""PDFium's word on a repaired file: which kept pages it still cannot draw.

pypdf's check decides what a page needs; PDFium is what will draw it. So every
kept page is loaded, and a page that got a substitute is also drawn at low
resolution: one that shows an image or visible text but draws nothing at all
is lost after all (a substitute PDFium does not accept, a resource it reads
differently), and is reported so instead of coming out silently blank.

The check is bounded in time (a repair of a large file must not take minutes);
pages past the bound are kept unchecked, and the log says how far it got.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from app.core.logging import get_logger
from app.pdf._pdfium import PDFIUM_LOCK

log = get_logger(__name__)

CHECK_SECONDS = 30.0
_CHECK_DPI = 24  # enough for text and images to leave grey pixels, cheap on any page size
_BLANK = 250  # a page whose darkest pixel is lighter than this shows nothing
_INK_TYPES = (pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_TEXT)
_INVISIBLE_TEXT = (pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE, pdfium_c.FPDF_TEXTRENDERMODE_CLIP)


def undrawable_pages(
    path: Path, kept: Sequence[int], substituted: Collection[int], *, seconds: float = CHECK_SECONDS
) -> dict[int, str]:
    """{page number: why} for kept pages (1-based) PDFium cannot load, or cannot draw after a substitute."""
    started = time.monotonic()
    found: dict[int, str] = {}
    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(path)
        except pdfium.PdfiumError:
            return {number: "the repaired file does not open in PDFium" for number in kept}
    try:
        for checked, number in enumerate(kept):
            if time.monotonic() - started > seconds:
                log.warning("pdf_repair_check_cut_short", path=str(path), checked=checked, pages=len(kept))
                break
            with PDFIUM_LOCK:  # per page: other threads' PDFium work goes on between pages
                reason = _page_problem(document, number, number in substituted)
            if reason is not None:
                found[number] = reason
    finally:
        with PDFIUM_LOCK:
            document.close()
    return found


def _page_problem(document: pdfium.PdfDocument, number: int, substituted: bool) -> str | None:
    try:
        page = document[number - 1]
    except pdfium.PdfiumError:
        return "PDFium cannot load the page after the repair"
    try:
        if substituted and _shows_something(page) and _renders_blank(page):
            return "PDFium draws nothing on the page after the repair"
        return None
    finally:
        page.close()


def _shows_something(page: pdfium.PdfPage) -> bool:
    """Whether the page holds an image or visible text, which must leave pixels when drawn."""
    for obj in page.get_objects(filter=list(_INK_TYPES), max_depth=4):
        if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            return True
        if pdfium_c.FPDFTextObj_GetTextRenderMode(obj.raw) not in _INVISIBLE_TEXT:
            return True
    return False


def _renders_blank(page: pdfium.PdfPage) -> bool:
    bitmap = page.render(scale=_CHECK_DPI / 72, grayscale=True)
    try:
        darkest, _ = bitmap.to_pil().convert("L").getextrema()
    finally:
        bitmap.close()
    return bool(darkest >= _BLANK)
