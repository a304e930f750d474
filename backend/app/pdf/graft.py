"""A searchable PDF: the original document with each chunk's text layer laid over its pages.

Each page of a layer (text_layer.render_text_layer) that has words becomes a Form XObject
drawn over its original page at the end of the page's content, `q /OCRText Do Q`, after the
original content is closed in q ... Q (as many as it needs: its own unmatched Q are matched
first), so nothing the page leaves in the graphics state moves the text. Pages without words
are not touched. One glyphless font serves every page, its ToUnicode holding every chunk's
characters beyond the BMP (their codes renumbered into one table where chunks differ).

A sound, unencrypted original is updated incrementally (_append.py): its bytes are copied as
they are and the changed pages and the new objects follow, so outlines, annotations, forms,
metadata and the byte ranges signatures cover are kept. The original is read a page at a time
(_page_walk.py) and the layer files one at a time, so nothing of a page is held once it is
done: beyond QPDF's index of the file (about half a kilobyte a page), a 2,000-page graft
measured 1.4 MB against 0.2 MB for 200 pages, where rewriting the file took 20 MB. An
encrypted original (owner password only) or one QPDF had to repair is rewritten whole by
pikepdf instead (_rewrite.py), which keeps its encryption and structure but holds its objects
in memory (about 10 KB a page).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pikepdf
from pikepdf import Name

from app.core.logging import get_logger
from app.pdf import glyphless
from app.pdf._append import Appender, NotAppendable, last_xref
from app.pdf._page_edit import PageEdit, check_fits
from app.pdf._page_walk import PageWalk, UnsoundPageTree, reopen_pages
from app.pdf.errors import DamagedPdfError, EncryptedPdfError, PdfNotFoundError
from app.pdf.layer_file import Layer, LayerPage, layer_pages
from app.pdf.prior_text import without_invisible_text
from app.pdf.text_layer import FONT_RESOURCE

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class GraftSummary:
    pages: int  # of the original (and the output)
    pages_with_text: int  # pages a layer was laid over
    incremental: bool  # the original's bytes were kept and the layers appended (else rewritten)
    layers_replaced: int = 0  # pages of those whose invisible text (an earlier OCR's) was removed


def graft_text_layers(original: Path, layers: Iterable[tuple[int, Layer]], output: Path) -> GraftSummary:
    """Write to output the original with the text layers laid over its pages.

    layers: (first page number, layer) in page order, each layer a PDF from render_text_layer
    (bytes, or the path of a file) whose page i lies over page first + i of the original (page
    numbers from 1). Each is opened when its turn comes and let go after. The output has the
    original's pages, sizes and rotations; a page without words keeps its content untouched.
    output is replaced atomically (written beside it, then renamed).

    Raises PdfNotFoundError, EncryptedPdfError (a user password) or DamagedPdfError when the
    original cannot be read, TextLayerError
    when a layer is not one, covers pages the original does not have, or does not fit its page.
    """
    started = time.monotonic()
    if not original.is_file():
        raise PdfNotFoundError(f"no PDF at {original}")
    partial = output.with_name(output.name + ".partial")
    try:
        appendable = _appendable(original)
        if appendable is not None:
            summary = _graft_appending(original, appendable, layers, partial)
        else:
            from app.pdf._rewrite import graft_rewriting  # the exception: a damaged or encrypted file

            pages, grafted, replaced = graft_rewriting(original, layers, partial)
            summary = GraftSummary(pages, grafted, incremental=False, layers_replaced=replaced)
        os.replace(partial, output)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
    log.info(
        "text_layers_grafted",
        pages=summary.pages,
        pages_with_text=summary.pages_with_text,
        incremental=summary.incremental,
        layers_replaced=summary.layers_replaced,
        bytes=output.stat().st_size,
        duration_ms=round((time.monotonic() - started) * 1000),
    )
    return summary


@dataclass(frozen=True, slots=True)
class _Appendable:
    pages: int
    size: int  # the original's /Size: the first free object number
    prev: int  # the original's last cross-reference section
    xref_stream: bool
    trailer: bytes  # its /Root and /Info entries
    file_id: bytes | None
    reopen: int  # pages read between two openings of the file (_page_walk)


def _appendable(original: Path) -> _Appendable | None:
    """What an incremental update of original needs, or None when the file must be rewritten:
    encrypted, repaired by QPDF on the way in, or with a page tree PageWalk cannot follow."""
    try:
        pdf = pikepdf.open(original, inherit_page_attributes=False)
    except pikepdf.PasswordError:
        raise EncryptedPdfError("the PDF is encrypted; decrypt it first") from None
    except pikepdf.PdfError as exc:
        raise DamagedPdfError(f"the PDF cannot be read: {exc}") from None
    with pdf:
        size = pdf.trailer.get(Name.Size)
        pages_node = pdf.Root.get(Name.Pages)
        claimed = pages_node.get(Name.Count) if isinstance(pages_node, pikepdf.Dictionary) else None
        reopen = reopen_pages(claimed if isinstance(claimed, int) else 0)
        trailer = b" ".join(
            Name(key).unparse() + b" " + value.unparse()
            for key in ("/Root", "/Info")
            if isinstance(value := pdf.trailer.get(key), pikepdf.Object) and value.is_indirect
        )
        ids = pdf.trailer.get(Name.ID)
        file_id = bytes(ids[0]) if isinstance(ids, pikepdf.Array) and len(ids) == 2 else None
        why: str | None = None  # the file is rewritten, because
        if pdf.is_encrypted:
            why = "it is encrypted"
        elif pdf.get_warnings():
            why = "QPDF repaired it on opening"
        elif not isinstance(size, int):
            why = "its trailer has no /Size"
    try:
        if why is None:
            with original.open("rb") as handle:
                prev, xref_stream = last_xref(handle)
            with PageWalk(original, reopen) as walk:
                pages = sum(1 for _ in walk.pages())  # each page let go at once
            why = "QPDF repaired it while its pages were read" if walk.warnings else None
    except (NotAppendable, UnsoundPageTree) as exc:
        why = str(exc)
    if why is not None or not isinstance(size, int):
        log.info("graft_rewrites_the_file", reason=why)
        return None
    return _Appendable(pages, size, prev, xref_stream, trailer, file_id, reopen)


def _graft_appending(
    original: Path, plan: _Appendable, layers: Iterable[tuple[int, Layer]], partial: Path
) -> GraftSummary:
    with original.open("rb") as source, partial.open("wb") as out:
        shutil.copyfileobj(source, out, 1 << 20)
        appender = Appender(out, out.tell(), plan.size)
        font: list[int] = []  # its objects' numbers, once a page needs it
        codes = glyphless.Codes()
        wrappers: dict[bytes, int] = {}  # content of a q or Q ... Do stream: its object number
        grafted = replaced = 0
        with PageWalk(original, plan.reopen) as walk:
            pages = walk.pages()
            passed = 0  # pages of the original walked past
            for number, layer_page in layer_pages(layers, codes, plan.pages):
                for _ in range(number - passed - 1):
                    next(pages)
                page = next(pages)
                passed = number
                if layer_page.content is not None:
                    font = font or [appender.reserve() for _ in range(glyphless.FONT_OBJECTS)]
                    font_number = font[glyphless.FONT]
                    replaced += _append_page(appender, page, layer_page, number, font_number, wrappers)
                    grafted += 1
                # A page held keeps the file it came from in memory when the walk reopens it.
                del page
        if font:  # else no page had words: the original as it was (and an end of line) will do
            for number, body in zip(font, glyphless.font_objects(font[0], codes.astral), strict=True):
                appender.write(number, body)
            appender.finish(plan.trailer, plan.file_id, plan.prev, stream=plan.xref_stream)
    return GraftSummary(plan.pages, grafted, incremental=True, layers_replaced=replaced)


def _append_page(
    appender: Appender,
    page: pikepdf.Dictionary,
    layer_page: LayerPage,
    number: int,
    font: int,
    wrappers: dict[bytes, int],
) -> bool:
    """The page's form and the page again, its content wrapped and the form drawn after it;
    whether the page's own invisible text was removed (prior_text), its content written anew."""
    check_fits(layer_page, page, number)
    edit = PageEdit.of(page)
    form = appender.reserve()
    appender.write(form, _form(layer_page, font))
    contents = [_wrapper(appender, wrappers, stream) for stream in edit.wrappers()]
    own: int | None = None
    if (stripped := without_invisible_text(page, edit.resources)) is not None:
        own = appender.reserve()
        appender.write(own, glyphless.stream(b"", stripped))
    appender.write(page.objgen[0], _page_body(page, edit, form, contents, own), page.objgen[1])
    return own is not None


def _page_body(
    page: pikepdf.Dictionary, edit: PageEdit, form: int, wrappers: list[int], own: int | None
) -> bytes:
    """The page dictionary with the wrapped contents (own: the object of its content written
    anew, else the page's streams as they are) and resources naming the form."""
    entries = [
        Name(key).unparse() + b" " + _unparse(value)
        for key, value in page.items()
        if key not in ("/Contents", "/Resources")
    ]
    contents = page.get(Name.Contents)
    if own is not None:
        original = [b"%d 0 R" % own]
    elif isinstance(contents, pikepdf.Array):
        original = [_unparse(item) for item in contents]
    elif contents is not None:
        original = [_unparse(contents)]
    else:
        original = []
    before, after = (b"%d 0 R" % number for number in wrappers)
    entries.append(b"/Contents [ %s ]" % b" ".join([before, *original, after]))
    entries.append(b"/Resources %s" % _resources(edit, b"%d 0 R" % form))
    return b"<< %s >>" % b" ".join(entries)


def _resources(edit: PageEdit, form: bytes) -> bytes:
    """The page's resources with the form among its XObjects (a copy: another page may share them)."""
    entries, xobjects = [], []
    if edit.resources is not None:
        for key, value in edit.resources.items():
            if key == "/XObject" and isinstance(value, pikepdf.Dictionary):
                xobjects = [Name(name).unparse() + b" " + _unparse(item) for name, item in value.items()]
            else:
                entries.append(Name(key).unparse() + b" " + _unparse(value))
    xobjects.append(edit.name.unparse() + b" " + form)
    entries.append(b"/XObject << %s >>" % b" ".join(xobjects))
    return b"<< %s >>" % b" ".join(entries)


def _form(layer_page: LayerPage, font: int) -> bytes:
    assert layer_page.content is not None
    return b"<< /Type /XObject /Subtype /Form /BBox %s /Resources << /Font << %s %d 0 R >> >> " % (
        layer_page.bbox,
        FONT_RESOURCE,
        font,
    ) + b"/Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream" % (
        len(layer_page.content),
        layer_page.content,
    )


def _wrapper(appender: Appender, written: dict[bytes, int], content: bytes) -> int:
    """The object number of a stream of content, written once and shared by every page."""
    if content not in written:
        written[content] = appender.reserve()
        appender.write(written[content], glyphless.stream(b"", content))
    return written[content]


def _unparse(value: object) -> bytes:
    """A value of a dictionary read by pikepdf written back in PDF syntax (references as references)."""
    if isinstance(value, pikepdf.Object):
        return value.unparse()
    if isinstance(value, bool):
        return b"true" if value else b"false"
    return pikepdf.Array([value]).unparse()[1:-1].strip()
