"""Per-page PDFium helpers shared by the engines (run inside OCR processes, so no lock)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image

from app.engines._limits import PageMeter, current_limits
from app.engines.errors import PageRenderError

RENDER_DPI = 300
# A page larger than this at 300 DPI is refused rather than rendered: 160 MP is a 36 x 48 inch
# drawing (A0 is 139 MP); past it one page would take gigabytes, and tesseract refuses images
# over 32,767 pixels a side anyway.
MAX_RENDER_PIXELS = 160_000_000
# PDFium renders colour and lets PIL convert to gray in about half the time of its own grayscale
# mode, but the colour bitmap
# takes 3 bytes a pixel: above this size, grayscale mode keeps memory at 1 byte a pixel.
_COLOUR_RENDER_MAX_PIXELS = 40_000_000


# The page meter of each open document (by id), when the process has a decoded-size limit.
_meters: dict[int, PageMeter] = {}


@contextmanager
def open_pdf(pdf_bytes: bytes) -> Iterator[pdfium.PdfDocument]:
    try:
        document = pdfium.PdfDocument(pdf_bytes)
    except pdfium.PdfiumError as exc:
        raise PageRenderError(f"the chunk's PDF cannot be opened: {exc}") from None
    limit = current_limits().page_decoded_bytes
    if limit is not None:
        _meters[id(document)] = PageMeter(pdf_bytes, limit)
    try:
        yield document
    finally:
        _meters.pop(id(document), None)
        document.close()


def load_page(document: pdfium.PdfDocument, index: int, page_number: int) -> pdfium.PdfPage:
    """The page, once its decoded size is within the limit (PDFium decodes its content to load it)."""
    meter = _meters.get(id(document))
    if meter is not None:
        meter.check(index, page_number)
    try:
        return document[index]
    except pdfium.PdfiumError as exc:
        raise PageRenderError(f"page {page_number} cannot be loaded: {exc}") from None


def page_text(page: pdfium.PdfPage) -> str:
    textpage = page.get_textpage()
    try:
        return str(textpage.get_text_bounded()).replace("\r\n", "\n").replace("\r", "\n")
    finally:
        textpage.close()


def is_empty(page: pdfium.PdfPage) -> bool:
    """A page with no page objects draws nothing: blank, without rendering it."""
    return next(iter(page.get_objects(max_depth=1)), None) is None


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


def render_gray(page: pdfium.PdfPage, page_number: int, dpi: int = RENDER_DPI) -> Image.Image:
    """The page as an 8-bit grayscale image: tesseract binarises anyway, and gray is a third the bytes."""
    width_pt, height_pt = page.get_size()
    pixels = (width_pt * dpi / 72) * (height_pt * dpi / 72)
    if pixels > MAX_RENDER_PIXELS:
        raise PageRenderError(
            f"page {page_number} is {width_pt / 72:.0f} x {height_pt / 72:.0f} inches, "
            f"{pixels / 1e6:.0f} megapixels at {dpi} DPI: too large to render"
        )
    try:
        bitmap = page.render(scale=dpi / 72, grayscale=pixels > _COLOUR_RENDER_MAX_PIXELS)
        image: Image.Image = bitmap.to_pil()
    except pdfium.PdfiumError as exc:
        raise PageRenderError(f"page {page_number} cannot be rendered: {exc}") from None
    if image.width < 2 or image.height < 2:
        raise PageRenderError(f"page {page_number} renders to {image.width}x{image.height} pixels")
    return image if image.mode == "L" else image.convert("L")
