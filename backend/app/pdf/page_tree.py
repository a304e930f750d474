"""The pages of a damaged file, found by walking its page tree, and why each missing one is missing.

pypdf's own page list gives up on the first broken node ("Invalid object in
/Pages"); this walk keeps every page it can reach, in order, and puts a slot
with a reason where a kid is gone, loops back or is not a page, as pdftotext
does. Inheritable attributes (/Resources, /MediaBox, /CropBox, /Rotate) are
carried down from the tree's nodes to each page. When a cut took the page
tree itself (TeX and others write it last), scanned_page_slots finds the page
objects that are left, in the order they come in the file.

Locator says why a referenced object is not there: it was cut off with the end
of a truncated file, it is absent, or it sits in a compressed object stream
that cannot be read (a filter PDFium and pypdf do not decode, or corrupt
data), the usual cause of pypdf's "Invalid object in /Pages".
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pypdf import PdfReader
from pypdf.generic import DictionaryObject, IndirectObject, NameObject, StreamObject

from app.pdf.errors import DamagedPdfError, UnsupportedCompressionError
from app.pdf.streams import resolve, stream_fault, unreadable_filter

MAX_TREE_DEPTH = 64  # real page trees are a few levels deep; a cycle or a bomb is not
_INHERITED = ("/Resources", "/MediaBox", "/CropBox", "/Rotate")
_OBJECT_STREAM = re.compile(rb"/Type\s*/ObjStm\b")
_OBJECT_HEADER = re.compile(rb"(\d{1,10})\s+(\d{1,5})\s+obj\b")
_MAX_STREAMS_EXAMINED = 1000


@dataclass(frozen=True, slots=True)
class PageSlot:
    page: DictionaryObject | None  # the page, with what it inherits; None when it is lost
    reference: IndirectObject | None
    reason: str | None  # why the page is lost


class Locator:
    """Says why references of one file resolve to nothing."""

    def __init__(self, reader: PdfReader, data: bytes, *, truncated: bool) -> None:
        self._reader = reader
        self._data = data
        self._truncated = truncated
        self._stream_faults: dict[int, tuple[str | None, str | None]] = {}
        self._broken: list[tuple[str | None, str]] | None = None

    @property
    def truncated(self) -> bool:
        return self._truncated

    def missing(self, value: Any) -> str:
        """A predicate for a reference that resolves to nothing: "is cut off", "is missing", ..."""
        return self._why(value)[1]

    def unreadable_filter(self, value: Any) -> str | None:
        """The filter that keeps value's object from being read, if that is why it is missing."""
        return self._why(value)[0]

    def refusal(self, subject: str, value: Any) -> DamagedPdfError:
        """The error for an object the whole file needs (its catalog, its page tree) that is missing."""
        name, phrase = self._why(value)
        if name is not None:
            return UnsupportedCompressionError(
                f"the PDF's objects are compressed with {name}, which cannot be read"
            )
        return DamagedPdfError(f"the PDF is damaged beyond repair: {subject} {phrase}")

    def _why(self, value: Any) -> tuple[str | None, str]:
        holder = self._reader.xref_objStm.get(value.idnum) if isinstance(value, IndirectObject) else None
        if holder is not None:
            name, fault = self._object_stream_fault(int(holder[0]))
            if fault is not None:
                return name, fault if name is not None else f"is in an object stream that {fault}"
        if self._truncated:
            return None, "is cut off"
        broken = self.broken_object_streams()
        if broken:  # pypdf rebuilt the file by scanning and could not open these: the object was in one
            name, fault = broken[0]
            return name, fault if name is not None else f"is in an object stream that {fault}"
        return None, "is missing"

    def broken_object_streams(self) -> list[tuple[str | None, str]]:
        """(unreadable filter or None, fault) of each object stream in the file that cannot be read."""
        if self._broken is None:
            self._broken = []
            for number in self._object_stream_numbers():
                name, fault = self._object_stream_fault(number)
                if fault is not None:
                    self._broken.append((name, fault))
        return self._broken

    def _object_stream_fault(self, number: int) -> tuple[str | None, str | None]:
        if number not in self._stream_faults:
            stream = resolve(IndirectObject(number, 0, self._reader))
            if not isinstance(stream, StreamObject):
                self._stream_faults[number] = (None, self.missing(IndirectObject(number, 0, self._reader)))
            else:
                self._stream_faults[number] = (unreadable_filter(stream, image=False), stream_fault(stream))
        return self._stream_faults[number]

    def _object_stream_numbers(self) -> Iterator[int]:
        """Numbers of the objects whose dictionary says /Type /ObjStm, found in the raw bytes."""
        for examined, match in enumerate(_OBJECT_STREAM.finditer(self._data)):
            if examined >= _MAX_STREAMS_EXAMINED:
                return
            headers = list(_OBJECT_HEADER.finditer(self._data, max(0, match.start() - 4096), match.start()))
            if headers:
                yield int(headers[-1].group(1))


def page_slots(reader: PdfReader, locator: Locator) -> list[PageSlot]:
    """Every page the catalog's page tree names, in order, a lost one as a slot with its reason."""
    try:
        catalog = reader.root_object  # found by its /Type when a rebuilt trailer names none
    except Exception:  # pypdf raises many types on a damaged catalog
        catalog = None
    if not isinstance(catalog, DictionaryObject):
        raise locator.refusal("its document catalog", reader.trailer.raw_get("/Root"))
    if "/Pages" not in catalog:
        raise DamagedPdfError("the PDF is damaged beyond repair: its catalog names no page tree")
    pages_value = catalog.raw_get("/Pages")
    pages = resolve(pages_value)
    if pages is None:
        raise locator.refusal("its page tree", pages_value)
    if not isinstance(pages, DictionaryObject):
        raise DamagedPdfError("the PDF is damaged beyond repair: its page tree is not a dictionary")
    seen = {pages_value.idnum} if isinstance(pages_value, IndirectObject) else set()
    return list(_walk(reader, pages, {}, 0, seen, locator))


def scanned_page_slots(reader: PdfReader) -> list[PageSlot]:
    """The page objects in the file in the order they come in it: the pages of a file whose page
    tree is lost (cut off with the end of the file), as far as they can be found."""
    placed: list[tuple[int, int, IndirectObject]] = []  # (offset, index in an object stream, reference)
    for generation, entries in reader.xref.items():
        for number, offset in entries.items():
            placed.append((int(offset), 0, IndirectObject(number, generation, reader)))
    stream_offsets = {
        number: offset for entries in reader.xref.values() for number, offset in entries.items()
    }
    for number, (stream, index) in reader.xref_objStm.items():
        placed.append((int(stream_offsets.get(stream, 0)), int(index) + 1, IndirectObject(number, 0, reader)))
    slots = []
    for _, _, reference in sorted(placed, key=lambda item: item[:2]):
        node = resolve(reference)
        if isinstance(node, DictionaryObject) and node.get("/Type") == "/Page":
            slots.append(PageSlot(_page_object(reader, node, reference, _inherited(node)), reference, None))
    return slots


def _inherited(page: DictionaryObject) -> dict[str, Any]:
    """What a page inherits from the nodes above it that are still there, the nearest first."""
    inherited: dict[str, Any] = {}
    node, seen = page, {id(page)}
    for _ in range(MAX_TREE_DEPTH):
        parent = resolve(node.raw_get("/Parent")) if "/Parent" in node else None
        if not isinstance(parent, DictionaryObject) or id(parent) in seen:
            break
        seen.add(id(parent))
        for key in _INHERITED:
            if key in parent and key not in inherited:
                inherited[key] = parent.raw_get(key)
        node = parent
    return inherited


def _walk(
    reader: PdfReader,
    node: DictionaryObject,
    inherited: dict[str, Any],
    depth: int,
    seen: set[int],
    locator: Locator,
) -> Iterator[PageSlot]:
    if depth > MAX_TREE_DEPTH:
        raise DamagedPdfError("the PDF is damaged beyond repair: its page tree is too deep (a loop?)")
    inherited = {**inherited, **{key: node.raw_get(key) for key in _INHERITED if key in node}}
    kids = resolve(node.raw_get("/Kids")) if "/Kids" in node else None
    if kids is None:
        yield PageSlot(None, None, f"a branch of the page tree {locator.missing(node.raw_get('/Kids'))}")
        return
    for kid_value in kids if isinstance(kids, list) else []:
        reference = kid_value if isinstance(kid_value, IndirectObject) else None
        if reference is not None and reference.idnum in seen:
            yield PageSlot(None, reference, "the page tree loops back on itself here")
            continue
        if reference is not None:
            seen.add(reference.idnum)
        kid = resolve(kid_value)
        if kid is None:
            yield PageSlot(None, reference, f"the page's object {locator.missing(kid_value)}")
        elif not isinstance(kid, DictionaryObject):
            yield PageSlot(None, reference, "the page tree names something that is not a page here")
        elif "/Kids" in kid and kid.get("/Type") != "/Page":
            yield from _walk(reader, kid, inherited, depth + 1, seen, locator)
        else:
            yield PageSlot(_page_object(reader, kid, reference, inherited), reference, None)


def _page_object(
    reader: PdfReader, node: DictionaryObject, reference: IndirectObject | None, inherited: dict[str, Any]
) -> DictionaryObject:
    from pypdf import PageObject

    page = PageObject(reader, None)
    page.indirect_reference = reference
    page.update(node)
    for key, value in inherited.items():
        if key not in page:
            page[NameObject(key)] = value
    return page
