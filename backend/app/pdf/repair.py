"""Rebuild a PDF that PDFium refuses, with pypdf in non-strict mode.

The usual damage is a cut-off download: the cross-reference table, the
trailer and the last objects are gone. pypdf can rebuild the table by scanning
for objects, but it needs a trailer to start from, so when the file has none
we drop the partial last object and append a trailer that only says how many
objects to look through; pypdf then finds the catalog by its /Type.

Pages keep their numbers: a page whose object, content stream or images are
missing is replaced by a blank page and named in the report, so page N of the
result is page N of the original. Damaged files are read into memory (pypdf's
rebuild does that anyway), so files above MAX_REPAIR_BYTES are refused.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypdf import PdfReader, PdfWriter
from pypdf.generic import DictionaryObject, IndirectObject, StreamObject

from app.pdf.errors import DamagedPdfError, EncryptedPdfError

MAX_REPAIR_BYTES = 512 * 2**20
_MAX_TREE_DEPTH = 64  # real page trees are a few levels deep; a cycle or a bomb is not
_LETTER = (612.0, 792.0)
_OBJECT_HEADER = re.compile(rb"(\d{1,10})\s+\d{1,5}\s+obj\b")


@dataclass(frozen=True, slots=True)
class RepairReport:
    page_count: int  # pages in the repaired file, lost ones included as blank pages
    lost_pages: tuple[int, ...]  # 1-based numbers of the pages replaced by blank pages


def repair_pdf(source: Path, target: Path) -> RepairReport:
    """Write a clean copy of source to target; raise DamagedPdfError if no page can be saved."""
    if source.stat().st_size > MAX_REPAIR_BYTES:
        raise DamagedPdfError(
            f"the PDF is damaged and larger than {MAX_REPAIR_BYTES // 2**20} MiB; repair it first (e.g. qpdf)"
        )
    reader = _lenient_reader(source.read_bytes())
    # pypdf raises many exception types on damaged input (its own, ValueError, KeyError, ...):
    # any of them here means the file cannot be rebuilt, which is what DamagedPdfError says.
    try:
        pages_by_object = {
            page.indirect_reference.idnum: page
            for page in reader.pages
            if page.indirect_reference is not None
        }
        slots = list(_leaf_pages(reader.root_object["/Pages"], 0, set()))
        writer = PdfWriter()
        lost: list[int] = []
        size = _LETTER
        for number, object_number in enumerate(slots, start=1):
            page = pages_by_object.get(object_number) if object_number is not None else None
            if page is not None and _is_whole(page):
                writer.add_page(page)
                size = (float(page.mediabox.width), float(page.mediabox.height))
            else:  # keep the numbering: a blank page where the lost one was
                writer.add_blank_page(*size)
                lost.append(number)
        if len(lost) == len(slots):
            raise DamagedPdfError("the PDF is damaged beyond repair: no page could be recovered")
        with target.open("wb") as handle:
            writer.write(handle)
    except DamagedPdfError:
        raise
    except Exception as exc:
        raise DamagedPdfError(
            f"the PDF is damaged beyond repair ({type(exc).__name__}: {_one_line(exc)})"
        ) from None
    return RepairReport(len(slots), tuple(lost))


def _lenient_reader(data: bytes) -> PdfReader:
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        _ = reader.root_object  # the catalog lookup is lazy; force it while we can still fall back
    except Exception:  # no usable trailer: rebuild one below
        reader = PdfReader(io.BytesIO(_with_synthetic_trailer(data)), strict=False)
        try:
            _ = reader.root_object
        except Exception as exc:
            raise DamagedPdfError(
                f"the PDF is damaged beyond repair (no document catalog: {_one_line(exc)})"
            ) from None
    if reader.is_encrypted and not reader.decrypt(""):
        raise EncryptedPdfError("the PDF is encrypted; decrypt it first")
    return reader


def _with_synthetic_trailer(data: bytes) -> bytes:
    """data cut after its last complete object, plus a trailer that makes pypdf scan for objects."""
    end = data.rfind(b"endobj")
    if end >= 0:
        data = data[: end + len(b"endobj")]
    size = max((int(number) for number in _OBJECT_HEADER.findall(data)), default=0) + 1
    # startxref 0 points at no table: pypdf rebuilds it by scanning, then searches /Size objects for
    # the one whose /Type is /Catalog.
    return data + b"\ntrailer\n<< /Size %d >>\nstartxref\n0\n%%%%EOF\n" % size


def _leaf_pages(node_ref: Any, depth: int, seen: set[int]) -> Iterator[int | None]:
    """Object numbers of the pages under a page-tree node, in order; None for a kid that is gone."""
    if depth > _MAX_TREE_DEPTH:
        raise DamagedPdfError("the PDF's page tree is too deep (a loop?)")
    node = node_ref.get_object() if isinstance(node_ref, IndirectObject) else node_ref
    if not isinstance(node, DictionaryObject):
        raise DamagedPdfError("the PDF's page tree is missing")
    for kid_ref in node.get("/Kids", []):
        object_number = kid_ref.idnum if isinstance(kid_ref, IndirectObject) else None
        if object_number is not None:
            if object_number in seen:
                raise DamagedPdfError("the PDF's page tree loops back on itself")
            seen.add(object_number)
        try:
            kid = kid_ref.get_object()
        except Exception:  # the kid's object is cut off or unreadable: one lost page
            kid = None
        if not isinstance(kid, DictionaryObject):
            yield None
        elif "/Kids" in kid:
            yield from _leaf_pages(kid, depth + 1, seen)
        else:
            yield object_number


def _is_whole(page: DictionaryObject) -> bool:
    """Every stream the page draws directly (contents, images, forms) is present and decodes."""
    try:
        if "/Contents" in page:
            contents = page["/Contents"].get_object()
            streams = contents if isinstance(contents, list) else [contents]
            for ref in streams:
                stream = ref.get_object() if ref is not None else None
                if not isinstance(stream, StreamObject):
                    return False
                stream.get_data()
        resources = page.get("/Resources")
        resources = resources.get_object() if resources is not None else DictionaryObject()
        xobjects = resources.get("/XObject")
        for ref in (xobjects.get_object() if xobjects is not None else DictionaryObject()).values():
            xobject = ref.get_object()
            if not isinstance(xobject, StreamObject):
                return False
            xobject.get_data()
    except Exception:  # a truncated or corrupt stream: the page cannot be drawn as it was
        return False
    return True


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:200] or "no detail"
