"""Grafting by rewriting the whole file with pikepdf: for the originals an incremental update
cannot follow (encrypted with an owner password only, or repaired by QPDF on the way in).

QPDF keeps the file's encryption and structure, but holds every object in memory and writes
the file anew, so memory grows with the page count (about 10 KB a page measured on scans).
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Iterable
from pathlib import Path

import pikepdf
from pikepdf import Name

from app.pdf import glyphless
from app.pdf._page_edit import PageEdit, check_fits
from app.pdf._writer import write_pdf
from app.pdf.errors import DamagedPdfError
from app.pdf.layer_file import Layer, layer_pages
from app.pdf.prior_text import without_invisible_text
from app.pdf.text_layer import FONT_RESOURCE


def graft_rewriting(
    original: Path, layers: Iterable[tuple[int, Layer]], partial: Path
) -> tuple[int, int, int]:
    """graft_text_layers for the originals that are rewritten, to partial: (pages, pages with
    text, pages whose earlier invisible text was removed)."""
    try:
        pdf = pikepdf.open(original)
    except pikepdf.PdfError as exc:
        raise DamagedPdfError(f"the PDF cannot be read: {exc}") from None
    # QPDF copies a foreign stream's data when the file is written: the font's file stays open.
    with pdf, pikepdf.open(io.BytesIO(_font_file())) as font_file:
        font: pikepdf.Object | None = None
        codes = glyphless.Codes()
        wrappers: dict[bytes, pikepdf.Object] = {}
        grafted = replaced = 0
        for number, layer_page in layer_pages(layers, codes, len(pdf.pages)):
            if layer_page.content is None:
                continue
            page = pdf.pages[number - 1].obj
            check_fits(layer_page, page, number)
            edit = PageEdit.of(page)
            if font is None:
                font = pdf.copy_foreign(font_file.get_object((3, 0)))
            form = pikepdf.Stream(pdf, b"")
            form.write(layer_page.content, filter=Name.FlateDecode)
            form.Type, form.Subtype = Name.XObject, Name.Form
            form.BBox = pikepdf.Object.parse(layer_page.bbox)
            form.Resources = pikepdf.Dictionary({"/Font": pikepdf.Dictionary({FONT_RESOURCE.decode(): font})})
            resources = pikepdf.Dictionary(dict(edit.resources.items()) if edit.resources is not None else {})
            taken = resources.get(Name.XObject)
            xobjects = dict(taken.items()) if isinstance(taken, pikepdf.Dictionary) else {}
            resources[Name.XObject] = pikepdf.Dictionary({**xobjects, str(edit.name): form})
            page.Resources = resources
            contents = page.get(Name.Contents)
            items = [contents] if isinstance(contents, pikepdf.Stream) else list(contents or [])
            if (stripped := without_invisible_text(page, edit.resources)) is not None:
                items = [pdf.make_stream(stripped)]
                replaced += 1
            before, after = (_shared(pdf, wrappers, stream) for stream in edit.wrappers())
            page.Contents = pikepdf.Array([before, *items, after])
            grafted += 1
        if font is not None:
            to_unicode = zlib.compress(glyphless.to_unicode_cmap(codes.astral), 9)
            font.ToUnicode.write(to_unicode, filter=Name.FlateDecode)
        pdf.save(partial, encryption=pdf.is_encrypted)  # an owner-locked file stays locked
        pages = len(pdf.pages)
    return pages, grafted, replaced


def _font_file() -> bytes:
    """A PDF holding nothing but the glyphless font, as object 3."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [ ] /Count 0 >>"]
    return write_pdf([*objects, *glyphless.font_objects(3, {})], root=1)


def _shared(pdf: pikepdf.Pdf, written: dict[bytes, pikepdf.Object], content: bytes) -> pikepdf.Object:
    """A stream of content, made once and shared by every page."""
    if content not in written:
        written[content] = pdf.make_stream(content)
    return written[content]
