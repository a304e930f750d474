"""Placeholder pages: the blank page that stands where a page could not be recovered.

A repaired file keeps the original's numbering, so a page that is lost is
replaced by a blank page of the same size whose page dictionary carries
LOST_PAGE_KEY, a text string saying why ("the page's content stream is cut
off"). PDFium copies the key with the page when a chunk is cut, so an engine
reads it back from the chunk's own PDF with lost_page_reason and reports the
page as failed with that reason instead of as an empty page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.pdf._writer import write_pdf

if TYPE_CHECKING:  # pypdf is imported only when a chunk may hold a placeholder
    from pypdf import PdfReader

LOST_PAGE_KEY = "/ChunkOcrLost"
_KEY_BYTES = LOST_PAGE_KEY.encode()
LETTER = (612.0, 792.0)


def lost_page_reason(pdf: bytes | PdfReader, index: int) -> str | None:
    """Why page `index` (0-based) of pdf is a placeholder for a lost page, or None when it is a real page.

    Cheap on the usual chunk: the key's bytes do not occur in a file without
    placeholders (chunk files have no compressed object streams), so pypdf is
    not even imported for it.
    """
    if isinstance(pdf, bytes):
        if not may_hold_placeholders(pdf):
            return None
        import io

        from pypdf import PdfReader

        pdf = PdfReader(io.BytesIO(pdf), strict=False)
    page = pdf.pages[index]
    reason = page.get(LOST_PAGE_KEY)
    return None if reason is None else str(reason)


class PlaceholderPages:
    """The placeholder pages of one PDF (a chunk), asked page by page; pypdf reads the file once,
    on the first question."""

    def __init__(self, pdf: bytes) -> None:
        self._data = pdf
        self._reader: PdfReader | None = None

    def reason(self, index: int) -> str | None:
        """Why page `index` (0-based) is a placeholder, or None when it is a real page."""
        if self._reader is None:
            import io

            from pypdf import PdfReader

            self._reader = PdfReader(io.BytesIO(self._data), strict=False)
        return lost_page_reason(self._reader, index)


def placeholder_pages(pdf: bytes) -> PlaceholderPages | None:
    """The PDF's placeholder pages to ask about, or None when it certainly has none (the usual
    chunk: nothing is parsed)."""
    return PlaceholderPages(pdf) if may_hold_placeholders(pdf) else None


def may_hold_placeholders(pdf: bytes) -> bool:
    """False when pdf certainly has no placeholder page: the key's bytes are not in it, and it
    has no compressed object streams that could hide them (chunk files have none)."""
    return _KEY_BYTES in pdf or b"/ObjStm" in pdf


def placeholder_pdf(reason: str, size: tuple[float, float] = LETTER) -> bytes:
    """A one-page PDF whose blank page is marked lost with reason (for PDFium to import into a chunk)."""
    width, height = size
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %s %s] /Resources << >> %s %s >>"
        % (_number(width), _number(height), _KEY_BYTES, text_string(reason)),
    ]
    return write_pdf(objects, root=1)


def text_string(text: str) -> bytes:
    """text as a PDF text string: UTF-16BE with a byte-order mark, in hex (any character, no escaping)."""
    return b"<" + ("\ufeff" + text).encode("utf-16-be").hex().encode() + b">"


def _number(value: float) -> bytes:
    return (b"%.2f" % value).rstrip(b"0").rstrip(b".")
