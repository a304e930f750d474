"""Why a page PDFium found nothing on draws nothing: its content streams may not decode.

PDFium draws nothing of a content stream it cannot decode (a corrupt FlateDecode stream, a
filter it does not know) and says nothing, so such a page came out as a blank page, its text
silently missing. Only a page with no page objects is asked, and only its own streams are
decoded (pikepdf, once per chunk opened): each passed the page meter as the page was loaded.
"""

from __future__ import annotations

import io
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used, as in _scan_image: the planning process never asks
    import pikepdf

# The standard filters a content stream may use (ISO 32000-1, 7.4); image-only filters
# (DCTDecode, JPXDecode, CCITTFaxDecode, JBIG2Decode) cannot encode one.
_CONTENT_FILTERS = {"/FlateDecode", "/LZWDecode", "/ASCII85Decode", "/ASCIIHexDecode", "/RunLengthDecode"}
_ABBREVIATIONS = {
    "/Fl": "/FlateDecode",
    "/LZW": "/LZWDecode",
    "/A85": "/ASCII85Decode",
    "/AHx": "/ASCIIHexDecode",
    "/RL": "/RunLengthDecode",
}


class PageContents:
    """The content streams of one chunk's pages, opened with pikepdf on the first question."""

    def __init__(self, pdf_bytes: bytes) -> None:
        self._pdf_bytes = pdf_bytes

    @cached_property
    def _pdf(self) -> pikepdf.Pdf | None:
        import pikepdf

        try:
            return pikepdf.open(io.BytesIO(self._pdf_bytes))
        except (pikepdf.PdfError, ValueError):  # PDFium opened it: not ours to judge
            return None

    def undecodable(self, index: int) -> str | None:
        """Why the page's content cannot be decoded, or None when it can (or cannot be told)."""
        import pikepdf

        if self._pdf is None:
            return None
        try:
            contents = self._pdf.pages[index].obj.get("/Contents")
            streams = list(contents) if isinstance(contents, pikepdf.Array) else [contents]
            for stream in streams:
                if not isinstance(stream, pikepdf.Stream):
                    continue
                if unknown := [f for f in _filters(stream) if f not in _CONTENT_FILTERS]:
                    return f"its content stream's filter {unknown[0]} is not one a content stream may use"
                stream.read_bytes()
        except pikepdf.DataDecodingError:
            return "its content stream is corrupt"
        except (pikepdf.PdfError, ValueError, KeyError, TypeError, IndexError):
            return None
        return None

    def close(self) -> None:
        if "_pdf" in self.__dict__ and self._pdf is not None:
            self._pdf.close()


def _filters(stream: pikepdf.Stream) -> list[str]:
    import pikepdf

    value = stream.get("/Filter")
    names = list(value) if isinstance(value, pikepdf.Array) else [value] if value is not None else []
    return [_ABBREVIATIONS.get(str(name), str(name)) for name in names]
