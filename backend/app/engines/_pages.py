"""Per-page PDFium helpers shared by the engines (run inside OCR processes)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager

import pypdfium2 as pdfium

from app.engines.errors import PageRenderError

RENDER_DPI = 300


@contextmanager
def open_pdf(pdf_bytes: bytes) -> Iterator[pdfium.PdfDocument]:
    try:
        document = pdfium.PdfDocument(pdf_bytes)
    except pdfium.PdfiumError as exc:
        raise PageRenderError(f"the chunk's PDF cannot be opened: {exc}") from None
    try:
        yield document
    finally:
        document.close()


def load_page(document: pdfium.PdfDocument, index: int, page_number: int) -> pdfium.PdfPage:
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


def render_pnm(page: pdfium.PdfPage, page_number: int, dpi: int = RENDER_DPI) -> bytes:
    """Render to an 8-bit grayscale PGM: tesseract binarises anyway, and PNM needs no encoding."""
    try:
        bitmap = page.render(scale=dpi / 72, grayscale=True)
        image = bitmap.to_pil()
    except pdfium.PdfiumError as exc:
        raise PageRenderError(f"page {page_number} cannot be rendered: {exc}") from None
    if image.width < 2 or image.height < 2:
        raise PageRenderError(f"page {page_number} renders to {image.width}x{image.height} pixels")
    buffer = io.BytesIO()
    image.convert("L").save(buffer, format="PPM")
    return buffer.getvalue()
