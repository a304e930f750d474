"""Reading the text layers render_text_layer wrote, one file at a time, for grafting.

A layer's characters beyond the BMP have codes of their own file's table (glyphless.Codes);
grafted into one document with one font, they are renumbered into the document's table, and
the content of a page whose codes change is rewritten (the others are copied as stored).
"""

from __future__ import annotations

import io
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pikepdf
from pikepdf import Name

from app.pdf import glyphless
from app.pdf.errors import TextLayerError
from app.pdf.page_space import PageGeometry, page_geometry
from app.pdf.text_layer import FONT_RESOURCE

Layer = bytes | Path  # a layer file's bytes, or its path
_HEX_STRING = re.compile(rb"<([0-9A-Fa-f]*)>")


@dataclass(frozen=True, slots=True)
class LayerPage:
    """One page of a layer file: its words' content stream (Flate-encoded, codes in the
    output's table), or None when it has none."""

    content: bytes | None
    bbox: bytes  # the layer page's media box, written out
    geometry: PageGeometry


def layer_pages(
    layers: Iterable[tuple[int, Layer]], codes: glyphless.Codes, pages: int
) -> Iterator[tuple[int, LayerPage]]:
    """(page number, layer page) for every page of every layer, in order, one layer file open
    at a time; TextLayerError for layers out of order or past the original's last page."""
    next_page = 1
    for first, layer in layers:
        if first < next_page:
            raise TextLayerError(
                f"the layer from page {first} overlaps the one before it (to page {next_page - 1})"
            )
        read = read_layer(layer, codes)
        if first + len(read) - 1 > pages:
            raise TextLayerError(
                f"the layer of pages {first}-{first + len(read) - 1} goes past the last page, {pages}"
            )
        for offset, layer_page in enumerate(read):
            yield first + offset, layer_page
        next_page = first + len(read)


def read_layer(layer: Layer, codes: glyphless.Codes) -> list[LayerPage]:
    """The pages of a layer file, their characters beyond the BMP renumbered into codes."""
    try:
        pdf = pikepdf.open(io.BytesIO(layer) if isinstance(layer, bytes) else layer)
    except (pikepdf.PdfError, OSError) as exc:
        raise TextLayerError(f"a text layer cannot be read: {exc}") from None
    with pdf:
        renumber: dict[int, int] | None = None
        pages = []
        for page in pdf.pages:
            bbox = page.obj.get(Name.MediaBox)
            contents = page.obj.get(Name.Contents)
            if not isinstance(bbox, pikepdf.Array):
                raise TextLayerError("a text layer's page has no media box")
            content = None
            if isinstance(contents, pikepdf.Stream):
                font = _glyphless_font(page.obj)
                if renumber is None:
                    renumber = _renumbering(font, codes)
                content = _content(contents, renumber)
            pages.append(LayerPage(content, bbox.unparse(resolved=True), page_geometry(page.obj)))
    return pages


def _glyphless_font(page: pikepdf.Dictionary) -> pikepdf.Dictionary:
    """The font a layer page's text is written in, which must be the glyphless font."""
    resources = page.get(Name.Resources)
    fonts = resources.get(Name.Font) if isinstance(resources, pikepdf.Dictionary) else None
    font = fonts.get(Name(FONT_RESOURCE.decode())) if isinstance(fonts, pikepdf.Dictionary) else None
    if not isinstance(font, pikepdf.Dictionary) or font.get(Name.BaseFont) != Name(
        glyphless.BASE_FONT.decode()
    ):
        raise TextLayerError("a text layer's page is not written in the glyphless font")
    return font


def _renumbering(font: pikepdf.Dictionary, codes: glyphless.Codes) -> dict[int, int]:
    """The layer's codes for characters beyond the BMP that differ in codes: old -> new."""
    cmap = font.get(Name.ToUnicode)
    if not isinstance(cmap, pikepdf.Stream):
        raise TextLayerError("a text layer's font has no ToUnicode CMap")
    astral = glyphless.astral_from_cmap(cmap.read_bytes())
    return {old: new for old, char in astral.items() if (new := codes.code(char)) != old}


def _content(stream: pikepdf.Stream, renumber: dict[int, int]) -> bytes:
    """The stream's data as Flate: as stored when no code changes, else decoded and rewritten."""
    if not renumber and stream.get(Name.Filter) == Name.FlateDecode and Name.DecodeParms not in stream:
        return stream.read_raw_bytes()

    def rewrite(match: re.Match[bytes]) -> bytes:
        hex_codes = match.group(1)
        out = []
        for start in range(0, len(hex_codes), 4):
            code = int(hex_codes[start : start + 4], 16)
            out.append(b"%04X" % renumber.get(code, code))
        return b"<%s>" % b"".join(out)

    return zlib.compress(_HEX_STRING.sub(rewrite, stream.read_bytes()), 9)
