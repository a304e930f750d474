"""Per-page PDFium helpers shared by the engines (run inside OCR processes, so no lock)."""

from __future__ import annotations

import contextlib
import io
import math
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image

from app.core.errors import OCRError
from app.core.logging import get_logger
from app.engines._accents import accents_on_letters, may_have_spacing_accents
from app.engines._annotations import with_annotation_text
from app.engines._cluster_text import may_have_copies, without_copies
from app.engines._column_order import Reader, column_text, may_have_columns
from app.engines._cyrillic_codes import with_cyrillic_codes
from app.engines._glued_text import drawn_in_touching_pieces, may_be_glued, unglued_text
from app.engines._letter_spacing import may_be_letter_spaced
from app.engines._limits import current_limits, memory_error
from app.engines._page_chars import Bounds, bounded_text, level_text, rect_count, whole_text
from app.engines._page_clock import start_page_clock
from app.engines._page_content import PageContents
from app.engines._page_meter import PageMeter
from app.engines._rtl_order import may_have_rtl, reading_order
from app.engines._scan_image import ScanPages, scan_image
from app.engines._superscripts import marks_apart, may_have_marks
from app.engines._tex_ligatures import code_decisions, has_codes, with_tex_ligatures
from app.engines._vertical_order import column_order, may_be_vertical
from app.engines.base import PageResult, PageSource
from app.engines.errors import PageLostError, PageRenderError, PageTooLargeError, is_page_failure
from app.pdf._pdfium import shown_chars
from app.pdf.lost import PlaceholderPages, placeholder_pages

RENDER_DPI = 300
# A page larger than this at 300 DPI is rendered at the highest resolution that fits: 160 MP is a
# 36 x 48 inch drawing (A0 is 139 MP) at 300 DPI; past it one page would take gigabytes.
MAX_RENDER_PIXELS = 160_000_000
# tesseract refuses images over 32,767 pixels a side (a long strip, a roll of paper).
MAX_RENDER_SIDE = 32_767
# Below this the page is refused (page_too_large): text small enough to need a page that large
# is unreadable at lower resolutions. Every page up to PDF's own 200 x 200 inch limit fits at it.
MIN_RENDER_DPI = 50
# PDFium renders colour and lets PIL convert to gray in about half the time of its own grayscale
# mode, but the colour bitmap
# takes 3 bytes a pixel: above this size, grayscale mode keeps memory at 1 byte a pixel.
_COLOUR_RENDER_MAX_PIXELS = 40_000_000
_IMAGE_OR_FORM = (pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_FORM)


log = get_logger(__name__)

# The page meter of each open document (by id), when the process has a decoded-size limit.
_meters: dict[int, PageMeter] = {}


# Documents (by id) that may hold placeholder pages: only chunks of a repaired file do.
_placeholders: dict[int, PlaceholderPages] = {}

# Which pages of each open document are bare scans (_scan_image), read on first use.
_scans: dict[int, ScanPages] = {}

# Each open document's content streams, asked of pages PDFium found nothing on (_page_content).
_contents: dict[int, PageContents] = {}


@contextmanager
def open_pdf(pdf_bytes: bytes) -> Iterator[pdfium.PdfDocument]:
    try:
        document = pdfium.PdfDocument(pdf_bytes)
    except pdfium.PdfiumError as exc:
        raise PageRenderError(f"the chunk's PDF cannot be opened: {exc}") from None
    # Before any page is loaded: PDFium draws form fields only through a form environment (and
    # _annotations reads them best through it). A file without a form costs one lookup.
    with suppress(pdfium.PdfiumError):  # without one, renders leave the fields out
        document.init_forms()
    limit = current_limits().page_decoded_bytes
    if limit is not None:
        _meters[id(document)] = PageMeter(pdf_bytes, limit)
    if (placeholders := placeholder_pages(pdf_bytes)) is not None:
        _placeholders[id(document)] = placeholders
    _scans[id(document)] = ScanPages(pdf_bytes)
    _contents[id(document)] = PageContents(pdf_bytes)
    try:
        yield document
    finally:
        _meters.pop(id(document), None)
        _placeholders.pop(id(document), None)
        _scans.pop(id(document), None)
        _contents.pop(id(document)).close()
        document.close()


# The file that names the task this OCR process runs (opened by pool._tracked). load_page writes
# the page into it: when PDFium kills the process on a page (it aborts on a failed allocation,
# or crashes on a malformed page), the pool reads which page it was, and that page alone fails.
# One pwrite of a fixed-width record per page (about 1 us; opening the file each time was 11).
_task_marker: tuple[int, int] | None = None  # (descriptor, task token)
_MARKER_WIDTH = 20
_REORDERED_SLACK = 0.01  # of a page's characters that a text rebuilt in another order may differ by


def marker_record(token: int, page_number: int | None = None) -> bytes:
    """What the marker holds: the task's token, then the page it is on (blank before any)."""
    page = "" if page_number is None else str(page_number)
    return f"{token:>{_MARKER_WIDTH}} {page:>{_MARKER_WIDTH}}".encode()


def track_task(descriptor: int | None, token: int = 0) -> None:
    global _task_marker
    _task_marker = (descriptor, token) if descriptor is not None else None


def _mark_page(page_number: int) -> None:
    if _task_marker is not None:
        descriptor, token = _task_marker
        with contextlib.suppress(OSError):
            os.pwrite(descriptor, marker_record(token, page_number), 0)


def load_page(document: pdfium.PdfDocument, index: int, page_number: int) -> pdfium.PdfPage:
    """The page, once its decoded size is within the limit (PDFium decodes its content to load it).
    Its CPU time counts from here (_page_clock)."""
    _mark_page(page_number)
    start_page_clock()
    if (lost := lost_page(_placeholders.get(id(document)), index, page_number)) is not None:
        raise lost
    meter = _meters.get(id(document))
    if meter is not None:
        meter.check(index, page_number)
    try:
        return document[index]
    except pdfium.PdfiumError as exc:
        raise PageRenderError(f"page {page_number} cannot be loaded: {exc}", page=page_number) from None


def lost_page(placeholders: PlaceholderPages | None, index: int, page_number: int) -> PageLostError | None:
    """The page's PageLostError when it stands for a page lost in a damaged file (app.pdf.lost)."""
    reason = placeholders.reason(index) if placeholders is not None else None
    if reason is None:
        return None
    return PageLostError(f"page {page_number} was lost in the damaged file: {reason}", page=page_number)


def page_text(page: pdfium.PdfPage, page_number: int, *, annotations: bool = True) -> str:
    """The page's text layer, then (annotations=True) the visible text of its FreeText notes and
    filled form fields (_annotations)."""
    try:
        textpage = page.get_textpage()
        try:
            # The text inside the page's box; on a page turned a quarter (/Rotate 90 or 270: a
            # landscape page on a portrait sheet, as print-to-PDF drivers may make one), all of
            # the page's text instead: PDFium's bounded text runs the lines of such a page
            # together ("Q4North 120"), and its whole text keeps them apart. A page turned a
            # quarter over level text (a portrait page a viewer was told to turn) is read as if
            # it were not turned: PDFium gave the lines of one turned by 90 degrees last first.
            turn = page.get_rotation()
            if turn % 180 and level_text(textpage):
                textpage.close()
                textpage = _textpage_unturned(page)
                turn = 0
            turned = turn % 180
            raw = whole_text(textpage) if turned else bounded_text(textpage)
            reread, rects = None, 0
            if not turned:
                rects = rect_count(textpage)  # for the glued-words and the columns tests alike
                raw, reread = _unglued(textpage, raw, page.get_bbox(), rects)
            raw = _in_reading_order(raw, textpage, None if turned else page.get_bbox(), turn, reread, rects)
            if not turned and may_have_marks(raw):
                raw = marks_apart(textpage, raw)
            if not turned and may_have_spacing_accents(raw):
                raw = accents_on_letters(textpage, raw)
            if not turned and may_have_copies(raw):
                raw = without_copies(textpage, raw)
            if has_codes(raw):
                raw = with_tex_ligatures(raw, code_decisions(textpage, _glyph_names(page)))
            text = raw.replace("\r\n", "\n").replace("\r", "\n")
            text = with_cyrillic_codes(text)
            return with_annotation_text(text, page, textpage) if annotations else text
        finally:
            textpage.close()
    except pdfium.PdfiumError as exc:
        raise PageRenderError(f"page {page_number}'s text cannot be read: {exc}", page=page_number) from None


def _unglued(
    textpage: pdfium.PdfTextPage, text: str, bounds: Bounds, rects: int
) -> tuple[str, Reader | None]:
    """text (the page's bounded text), or the page's text put together again when PDFium ran a
    row's characters or two words together (_glued_text) or spaced out a letter-spaced word's
    letters (_letter_spacing), with how a part of such a page is read (the column pass reads its
    columns so); a count, a few rectangles or a search of text tell the pages that may have such."""

    def reread(part: Bounds) -> str:
        return unglued_text(textpage, part).text

    if may_be_glued(textpage, text):
        return unglued_text(textpage, bounds).text, reread
    if may_be_letter_spaced(text) or drawn_in_touching_pieces(textpage, text, rects):
        rebuilt = unglued_text(textpage, bounds)
        if rebuilt.respaced:
            return rebuilt.text, reread
    return text, None


def _glyph_names(page: pdfium.PdfPage) -> dict[str, dict[int, str]]:
    """The glyph names of the fonts of the page's document, where it is one read here (a chunk
    opened by open_pdf, a file the text pass reads in glyph_names_of)."""
    contents = _contents.get(id(page.pdf))
    return contents.glyph_names() if contents is not None else {}


@contextmanager
def glyph_names_of(document: pdfium.PdfDocument, contents: PageContents) -> Iterator[None]:
    """While open: the document's fonts' glyph names are read from contents (its own file)."""
    _contents[id(document)] = contents
    try:
        yield
    finally:
        _contents.pop(id(document), None)


def _textpage_unturned(page: pdfium.PdfPage) -> pdfium.PdfTextPage:
    """The page's text page as PDFium reads it with no /Rotate (which is set back after)."""
    rotation = page.get_rotation()
    page.set_rotation(0)
    try:
        return page.get_textpage()
    finally:
        page.set_rotation(rotation)


def _in_reading_order(
    text: str,
    textpage: pdfium.PdfTextPage,
    bounds: Bounds | None,
    turn: int,
    reread: Reader | None = None,
    rects: int = 0,
) -> str:
    """text, or the page's text rebuilt from where its characters are when PDFium's order is not
    the reading order: CJK set in columns (_vertical_order), Hebrew or Arabic stored out of
    reading order (_rtl_order), columns of prose stored a row at a time across the page
    (_column_order). Most pages have none, found by a search of text or a count in C. turn:
    the /Rotate the text page was read with; reread: how a part of a page whose text was put
    together again is read (_unglued), for its columns; rects: its rect_count (with bounds).
    A text rebuilt is taken only when it has text's characters (_same_characters)."""
    rebuilt: str | None = None
    if may_be_vertical(text):
        rebuilt = column_order(textpage, bounds, turn)
    if rebuilt is None and may_have_rtl(text):
        rebuilt = reading_order(textpage, bounds, turn)
    elif rebuilt is None and bounds is not None and may_have_columns(textpage, text, rects):
        rebuilt = column_text(textpage, bounds, reread)
    return rebuilt if rebuilt is not None and _same_characters(rebuilt, text) else text


def _same_characters(rebuilt: str, text: str) -> bool:
    """Whether a text rebuilt in another order has text's characters (spaces and line breaks
    aside), each as often, but for _REORDERED_SLACK of them: a rebuilding that reads a part twice
    or leaves one out is no reading order. Real pages of two kinds did: a parallel edition's
    columns with line numbers between (part of a row read again below it), and a Korean figure
    taken for vertical writing (its caption read twice)."""
    have, want = Counter("".join(rebuilt.split())), Counter("".join(text.split()))
    differ = sum(((have - want) + (want - have)).values())
    return differ <= max(_REORDERED_SLACK * sum(want.values()), 2)


def undecodable_content(document: pdfium.PdfDocument, index: int, page_number: int) -> PageRenderError | None:
    """For a page PDFium found nothing on: the error to fail it with when its content streams
    cannot be decoded (PDFium draws nothing of them, and says nothing), else None (it is blank)."""
    contents = _contents.get(id(document))
    reason = contents.undecodable(index) if contents is not None else None
    if reason is None:
        return None
    return PageRenderError(f"page {page_number} cannot be drawn: {reason}", page=page_number)


def is_empty(page: pdfium.PdfPage) -> bool:
    """A page with no page objects draws nothing: blank, without rendering it."""
    return next(iter(page.get_objects(max_depth=1)), None) is None


def draws_images(page: pdfium.PdfPage) -> bool:
    """Whether the page may draw an image: an image, or a form (which may hold one), among its
    own objects. A few microseconds where image_coverage takes tens: it asks first."""
    raw = page.raw
    for index in range(pdfium_c.FPDFPage_CountObjects(raw)):
        if pdfium_c.FPDFPageObj_GetType(pdfium_c.FPDFPage_GetObject(raw, index)) in _IMAGE_OR_FORM:
            return True
    return False


def shown_text_area(page: pdfium.PdfPage) -> tuple[int, float]:
    """The characters the page draws (text in render mode 3 left out, and spaces), and the share
    of the page's area under them (each character's box from its font's ascent to descent, its
    advance wide)."""
    width, height = (float(side) for side in page.get_size())
    box = pdfium_c.FS_RECTF()
    count, covered = 0, 0.0
    textpage = page.get_textpage()
    try:
        for index, _ in shown_chars(textpage):
            count += 1
            if pdfium_c.FPDFText_GetLooseCharBox(textpage.raw, index, box):
                covered += abs(box.right - box.left) * abs(box.top - box.bottom)
    finally:
        textpage.close()
    return count, min(1.0, covered / (width * height)) if width > 0 and height > 0 else 0.0


def image_coverage(page: pdfium.PdfPage) -> float:
    """Share of the page's area under images (0..1; overlaps are not subtracted, so it is capped)."""
    width, height = (float(side) for side in page.get_size())
    if width <= 0 or height <= 0:
        return 0.0
    covered = 0.0
    for image in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3):
        left, bottom, right, top = image.get_bounds()
        visible_width = max(0.0, min(right, width) - max(left, 0.0))
        visible_height = max(0.0, min(top, height) - max(bottom, 0.0))
        covered += visible_width * visible_height
    return min(1.0, covered / (width * height))


def render_dpi(page: pdfium.PdfPage, page_number: int) -> int:
    """RENDER_DPI, or for a page too large for it the highest resolution within MAX_RENDER_PIXELS
    and MAX_RENDER_SIDE; PageTooLargeError below MIN_RENDER_DPI."""
    width_pt, height_pt = (float(side) for side in page.get_size())
    if width_pt <= 0 or height_pt <= 0:
        raise PageRenderError(f"page {page_number} has no area ({width_pt:g} x {height_pt:g} points)")
    fits_pixels = 72 * math.sqrt(MAX_RENDER_PIXELS / (width_pt * height_pt))
    fits_side = 72 * MAX_RENDER_SIDE / max(width_pt, height_pt)
    dpi = min(RENDER_DPI, math.floor(fits_pixels), math.floor(fits_side))
    if dpi < MIN_RENDER_DPI:
        megapixels = width_pt * height_pt * (RENDER_DPI / 72) ** 2 / 1e6
        raise PageTooLargeError(
            f"page {page_number} is {width_pt / 72:.0f} x {height_pt / 72:.0f} inches "
            f"({megapixels:,.0f} megapixels at {RENDER_DPI} DPI): too large to OCR "
            f"even at {MIN_RENDER_DPI} DPI",
            page=page_number,
        )
    return dpi


def render_gray(page: pdfium.PdfPage, page_number: int, dpi: int = RENDER_DPI) -> Image.Image:
    """The page as an 8-bit grayscale image: tesseract binarises anyway, and gray is a third the bytes.
    dpi comes from render_dpi, which keeps the image within the pixel and side caps."""
    width_pt, height_pt = page.get_size()
    pixels = (width_pt * dpi / 72) * (height_pt * dpi / 72)
    try:
        bitmap = page.render(scale=dpi / 72, grayscale=pixels > _COLOUR_RENDER_MAX_PIXELS)
        image: Image.Image = bitmap.to_pil()
    except pdfium.PdfiumError as exc:
        raise PageRenderError(f"page {page_number} cannot be rendered: {exc}", page=page_number) from None
    if image.width < 2 or image.height < 2:
        raise PageRenderError(
            f"page {page_number} renders to {image.width}x{image.height} pixels", page=page_number
        )
    return image if image.mode == "L" else image.convert("L")


def page_image(
    document: pdfium.PdfDocument, page: pdfium.PdfPage, index: int, page_number: int, dpi: int
) -> Image.Image:
    """The page (at index in document) as an 8-bit grayscale image at dpi: a bare scan's own image
    (_scan_image) when it is one, else rendered."""
    scans = _scans.get(id(document))
    if scans is not None and scans.is_bare(index) and (image := scan_image(page, dpi)) is not None:
        return image
    return render_gray(page, page_number, dpi)


def failed_page(page_number: int, error: OCRError | MemoryError, source: PageSource = "ocr") -> PageResult:
    """The page recorded as failed with error's code and message, when error is about the page
    alone (engines.errors.is_page_failure, or memory it needed past OCR_PROCESS_MEMORY_MB);
    any other error is raised again, for the chunk's attempt to fail with it."""
    if isinstance(error, MemoryError):
        error = memory_error(page_number)
    elif not is_page_failure(error):
        raise error
    log.warning("page_failed", page=page_number, error_code=error.code, error=error.message)
    return PageResult.failed(page_number, error.code, error.message, source)


def without_pages(pdf_bytes: bytes, indices: list[int]) -> bytes:
    """pdf_bytes with each page at indices (0-based) replaced by a blank page of its size. Sizes
    come from the page tree and pages are copied whole: no page's content is parsed, so a page
    that crashes PDFium when it is loaded is left behind without being loaded."""
    source = pdfium.PdfDocument(pdf_bytes)
    target = pdfium.PdfDocument.new()
    try:
        skipped = set(indices)
        for index in range(len(source)):
            if index in skipped:
                width, height = source.get_page_size(index)
                target.new_page(width, height).close()
            else:
                target.import_pages(source, [index])
        out = io.BytesIO()
        target.save(out)
        return out.getvalue()
    finally:
        target.close()
        source.close()
