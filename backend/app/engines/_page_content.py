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
    """The content streams and font encodings of one document's pages (a chunk's bytes, or the
    file the text pass reads), opened with pikepdf on the first question."""

    def __init__(self, source: bytes | str) -> None:
        self._source = source
        self._names: dict[str, dict[int, str]] | None = None

    @cached_property
    def _pdf(self) -> pikepdf.Pdf | None:
        import pikepdf

        try:
            source = io.BytesIO(self._source) if isinstance(self._source, bytes) else self._source
            return pikepdf.open(source)
        except (pikepdf.PdfError, ValueError, OSError):  # PDFium opened it: not ours to judge
            return None

    def glyph_names(self) -> dict[str, dict[int, str]]:
        """For each font whose encoding names its glyphs (/Differences), on any page (its resources
        and its forms'): its base name, without a subset's tag, and code -> glyph name. Read once,
        for a page with characters only those names tell (app.engines._tex_ligatures)."""
        if self._names is None:
            self._names = self._read_names()
        return self._names

    def _read_names(self) -> dict[str, dict[int, str]]:
        import pikepdf

        found: dict[str, dict[int, str]] = {}
        if self._pdf is None:
            return found
        walk = _Walk(found)
        try:
            for page in self._pdf.pages:
                walk.resources(page.obj.get("/Resources"), _FORM_DEPTH)
                if walk.budget <= 0:
                    break
        except (pikepdf.PdfError, ValueError, KeyError, TypeError, IndexError, RecursionError):
            pass
        return found

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


_FORM_DEPTH = 3  # forms inside forms this deep: TeX's and office tools' pages draw text in none
# Fonts and forms looked at in one document, all pages together: a hostile file's millions of
# them cost no more than this (real documents have tens of fonts, shared by their pages).
_MAX_DICTIONARIES = 20_000


class _Walk:
    """Resources, fonts and forms met once each (pages share them), at most _MAX_DICTIONARIES."""

    def __init__(self, found: dict[str, dict[int, str]]) -> None:
        self.found = found
        self.budget = _MAX_DICTIONARIES
        self._seen: set[tuple[int, int]] = set()

    def _new(self, item: pikepdf.Object) -> bool:
        key = item.objgen
        if key != (0, 0):
            if key in self._seen:
                return False
            self._seen.add(key)
        self.budget -= 1
        return self.budget > 0

    def resources(self, resources: object, depth: int) -> None:
        import pikepdf

        if not isinstance(resources, pikepdf.Dictionary) or not self._new(resources):
            return
        fonts = resources.get("/Font")
        if isinstance(fonts, pikepdf.Dictionary):
            for _, font in fonts.items():
                if isinstance(font, pikepdf.Dictionary) and self._new(font) and (names := _differences(font)):
                    base = str(font.get("/BaseFont", "")).lstrip("/")
                    self.found.setdefault(base.split("+", 1)[-1], names)
                if self.budget <= 0:
                    return
        forms = resources.get("/XObject")
        if depth > 0 and isinstance(forms, pikepdf.Dictionary):
            for _, form in forms.items():
                if isinstance(form, pikepdf.Stream) and form.get("/Subtype") == "/Form" and self._new(form):
                    self.resources(form.get("/Resources"), depth - 1)
                if self.budget <= 0:
                    return


def _differences(font: pikepdf.Dictionary) -> dict[int, str]:
    """code -> glyph name from the font's /Encoding /Differences ([code /name /name code ...])."""
    import pikepdf

    encoding = font.get("/Encoding")
    differences = encoding.get("/Differences") if isinstance(encoding, pikepdf.Dictionary) else None
    if not isinstance(differences, pikepdf.Array):
        return {}
    names: dict[int, str] = {}
    code = 0
    for item in list(differences)[:512]:
        if isinstance(item, int):
            code = int(item)
        elif isinstance(item, pikepdf.Name):
            if 0 <= code < 256:
                names[code] = str(item).lstrip("/")
            code += 1
    return names
