"""Rebuild a damaged or truncated PDF with pypdf, keeping every page that can still be drawn.

The usual damage is a cut-off download: the cross-reference table, the
trailer and the last objects are gone. pypdf can rebuild the table by scanning
for objects, but it needs a trailer to start from, so when the file has none
we drop the partial last object and append a trailer that only says how many
objects to look through; pypdf then finds the catalog by its /Type.

Every page is then checked for everything it draws (page_check.py): a lost
ICC profile, font program or annotation appearance gets a substitute and the
page is kept, named in the report with what was substituted; a page whose
drawing cannot be recovered (its content stream or an image's data is lost)
is replaced by a blank placeholder page marked with why (lost.py), so page N
of the result is page N of the original. PDFium then loads each kept page of
the result, and draws each page that got a substitute at low resolution: a
page it still cannot draw is reported lost too, not left silently blank.

Damaged files are read into memory (pypdf's rebuild does that anyway), so
files above MAX_REPAIR_BYTES are refused.
"""

from __future__ import annotations

import io
import re
import time
from dataclasses import dataclass
from pathlib import Path

from pypdf import PdfReader, PdfWriter
from pypdf.generic import (
    DictionaryObject,
    IndirectObject,
    NameObject,
    NullObject,
    PdfObject,
    TextStringObject,
)

from app.core.logging import get_logger
from app.pdf.damage import PageDamage
from app.pdf.errors import DamagedPdfError, EncryptedPdfError, UnsupportedCompressionError
from app.pdf.lost import LETTER, LOST_PAGE_KEY
from app.pdf.page_check import DrawingCheck, PageVerdict
from app.pdf.page_tree import Locator, PageSlot, page_slots, scanned_page_slots
from app.pdf.source import is_cut_short
from app.pdf.streams import resolve
from app.pdf.verify import CHECK_SECONDS, undrawable_pages

log = get_logger(__name__)

MAX_REPAIR_BYTES = 512 * 2**20
# An object's header, "12 0 obj", as it ends at the end of a window searched (endpos).
_HEADER_AT_END = re.compile(rb"(\d{1,10})\s+\d{1,5}\s+obj$")
_HEADER_REACH = 40  # bytes from a header's first digit to its keyword's end, whitespace included


@dataclass(frozen=True, slots=True)
class RepairReport:
    page_count: int  # pages in the repaired file, lost ones included as placeholder pages
    damage: tuple[PageDamage, ...] = ()  # in page order: each page lost or kept with substitutes
    # The page tree was cut off: the pages are those found in the file, in the order they come in it,
    # and pages whose objects went with the cut are not counted.
    in_file_order: bool = False

    @property
    def lost_pages(self) -> tuple[int, ...]:
        """1-based numbers of the pages replaced by placeholder pages."""
        return tuple(item.page for item in self.damage if item.lost)

    @property
    def repaired_pages(self) -> tuple[int, ...]:
        """1-based numbers of the pages kept with something substituted or dropped."""
        return tuple(item.page for item in self.damage if not item.lost)


def is_truncated(data: bytes) -> bool:
    """Whether a file with this content was cut short (app.pdf.source.is_truncated)."""
    return is_cut_short(data)


def repair_pdf(source: Path, target: Path, *, check_seconds: float = CHECK_SECONDS) -> RepairReport:
    """Write a clean copy of source to target; raise DamagedPdfError if no page can be saved."""
    started = time.perf_counter()
    if source.stat().st_size > MAX_REPAIR_BYTES:
        raise DamagedPdfError(
            f"the PDF is damaged and larger than {MAX_REPAIR_BYTES // 2**20} MiB; repair it first (e.g. qpdf)"
        )
    data = source.read_bytes()
    reader, no_catalog = lenient_reader(data)
    locator = Locator(reader, data, truncated=is_truncated(data))
    # pypdf raises many exception types on damaged input (its own, ValueError, KeyError, ...): one
    # that escapes the checks (which catch what they expect) means the file cannot be rebuilt.
    try:
        slots, in_file_order = _slots(reader, locator, no_catalog)
        check = DrawingCheck(locator.missing)
        verdicts = [
            check.page(slot.page) if slot.page is not None else PageVerdict(slot.reason, ()) for slot in slots
        ]
        check.apply_substitutes()
        _refuse_if_nothing_left(slots, verdicts, locator)
        _write(target, slots, verdicts)
    except DamagedPdfError:
        raise
    except Exception as exc:
        log.warning("pdf_repair_failed", path=str(source), error=f"{type(exc).__name__}: {exc}"[:500])
        raise DamagedPdfError("the PDF is damaged beyond repair: its structure cannot be rebuilt") from None
    kept = [number for number, verdict in enumerate(verdicts, start=1) if verdict.lost is None]
    substituted = {number for number in kept if verdicts[number - 1].notes}
    undrawable = undrawable_pages(target, kept, substituted, seconds=check_seconds)
    if undrawable:  # write again with those pages as placeholders too
        for number, reason in undrawable.items():
            verdicts[number - 1] = PageVerdict(reason, ())
        _refuse_if_nothing_left(slots, verdicts, locator)
        _write(target, slots, verdicts)
    damage = tuple(
        PageDamage(number, verdict.lost is not None, (verdict.lost,) if verdict.lost else verdict.notes)
        for number, verdict in enumerate(verdicts, start=1)
        if verdict.lost is not None or verdict.notes
    )
    report = RepairReport(len(slots), damage, in_file_order)
    # info, not warning: the warning itself travels in PdfInfo.warnings, for the caller to show once
    log.info(
        "pdf_repaired",
        path=str(source),
        pages=report.page_count,
        lost_pages=list(report.lost_pages),
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
    return report


def _slots(
    reader: PdfReader, locator: Locator, no_catalog: DamagedPdfError | None
) -> tuple[list[PageSlot], bool]:
    """The file's pages by its page tree; by their place in the file when a cut took the tree away."""
    try:
        if no_catalog is not None:
            raise no_catalog
        return page_slots(reader, locator), False
    except UnsupportedCompressionError:
        raise
    except DamagedPdfError:
        scanned = scanned_page_slots(reader) if locator.truncated else []
        if not scanned:
            raise
        return scanned, True


def page_tree_reasons(path: Path, numbers: list[int], page_count: int) -> dict[int, str]:
    """Why PDFium cannot find these pages (1-based) of a file it opens, as pypdf's walk of the page tree
    tells: a kid that is gone, compressed with a filter nobody reads, or a /Count above the pages held."""
    fallback = "the page is missing from the PDF's page tree"
    try:
        data = path.read_bytes()
        reader, _ = lenient_reader(data)
        slots = page_slots(reader, Locator(reader, data, truncated=is_truncated(data)))
    except Exception:  # pypdf cannot walk the tree either: say what PDFium says
        return dict.fromkeys(numbers, fallback)
    reasons = {}
    for number in numbers:
        if number > len(slots):
            reasons[number] = f"the page tree counts {page_count} pages but holds only {len(slots)}"
        else:
            reasons[number] = slots[number - 1].reason or fallback
    return reasons


def _refuse_if_nothing_left(slots: list[PageSlot], verdicts: list[PageVerdict], locator: Locator) -> None:
    if any(verdict.lost is None for verdict in verdicts):
        return
    filters = {locator.unreadable_filter(slot.reference) for slot in slots}
    if slots and None not in filters and len(filters) == 1:
        raise UnsupportedCompressionError(
            f"the PDF's objects are compressed with {filters.pop()}, which cannot be read"
        )
    first = verdicts[0].lost if verdicts else "the page tree holds no page"
    raise DamagedPdfError(f"the PDF is damaged beyond repair: no page could be recovered (page 1: {first})")


def _write(target: Path, slots: list[PageSlot], verdicts: list[PageVerdict]) -> None:
    writer = PdfWriter()
    size = LETTER
    for slot, verdict in zip(slots, verdicts, strict=True):
        own_size = _page_size(slot.page) if slot.page is not None else None
        size = own_size or size
        if slot.page is not None and verdict.lost is None:
            writer.add_page(slot.page)  # type: ignore[arg-type]  # a PageObject, built by page_tree
        else:  # keep the numbering: a marked blank page where the lost one was
            placeholder = writer.add_blank_page(*size)
            placeholder[NameObject(LOST_PAGE_KEY)] = TextStringObject(verdict.lost or "the page is lost")
    with target.open("wb") as handle:
        writer.write(handle)


def _page_size(page: DictionaryObject) -> tuple[float, float] | None:
    box = resolve(page.raw_get("/MediaBox")) if "/MediaBox" in page else None
    try:
        left, bottom, right, top = (float(resolve(value)) for value in box)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        return None
    width, height = abs(right - left), abs(top - bottom)
    return (width, height) if width >= 1 and height >= 1 else None


def lenient_reader(data: bytes) -> tuple[PdfReader, DamagedPdfError | None]:
    """pypdf's reader of data, and why it has no document catalog if it has none.

    A file cut short is read through a synthetic trailer at once: pypdf would look for its %%EOF
    line by line back from the end (49 s through the image data of a 350 MB scan), to find at best
    an earlier revision's (a linearized file's first page, an update's predecessor), whose table
    leaves out what came after it."""
    reader: PdfReader | None = None
    if not is_truncated(data):
        try:
            reader = PdfReader(io.BytesIO(data), strict=False)
            _ = reader.root_object  # the catalog lookup is lazy; force it while we can still fall back
        except Exception:  # no usable trailer: rebuild one below
            reader = None
    if reader is None:
        reader = _ScannedReader(io.BytesIO(_with_synthetic_trailer(data)), strict=False)
        try:
            _ = reader.root_object
        except Exception:
            return reader, _no_catalog(reader, data)
    if reader.is_encrypted and not reader.decrypt(""):
        raise EncryptedPdfError("the PDF is encrypted; decrypt it first")
    return reader, None


class _ScannedReader(PdfReader):
    """pypdf's reader of a file whose cross-reference table it rebuilt by scanning the whole file
    (the synthetic trailer points at no table): an object the table does not hold, directly or in an
    object stream, is not in the file. pypdf would search the whole file again for each reference
    to one (a page tree naming 2,642 cut-off pages took 10 s on a 1.9 MB file, and each search of a
    350 MB scan 2 s); it is a null object here, as pypdf gives after its search."""

    def get_object(self, indirect_reference: int | IndirectObject) -> PdfObject | None:
        if isinstance(indirect_reference, int):
            number, generation = indirect_reference, 0
        else:
            number, generation = indirect_reference.idnum, indirect_reference.generation
        in_stream = generation == 0 and number in self.xref_objStm
        if not in_stream and number not in self.xref.get(generation, {}):
            return NullObject()
        return super().get_object(indirect_reference)


def _no_catalog(reader: PdfReader, data: bytes) -> DamagedPdfError:
    """The error for a file whose document catalog cannot be found, naming why as far as the bytes tell."""
    truncated = is_truncated(data)
    broken = Locator(reader, data, truncated=truncated).broken_object_streams()
    names = sorted({name for name, _ in broken if name is not None})
    if names:
        return UnsupportedCompressionError(
            f"the PDF's objects are compressed with {', '.join(names)}, which cannot be read"
        )
    if broken:
        return DamagedPdfError(f"the PDF is damaged beyond repair: its compressed objects {broken[0][1]}")
    if truncated:
        return DamagedPdfError(
            "the PDF is damaged beyond repair: the file is cut off before its document catalog"
        )
    return DamagedPdfError("the PDF is damaged beyond repair: it has no document catalog")


def _with_synthetic_trailer(data: bytes) -> bytes:
    """data cut after its last complete object, plus a trailer that makes pypdf scan for objects."""
    end = data.rfind(b"endobj")
    kept = memoryview(data)[: end + len(b"endobj")] if end >= 0 else memoryview(data)
    size = _highest_object_number(data, len(kept)) + 1
    # startxref 0 points at no table: pypdf rebuilds it by scanning, then searches /Size objects for
    # the one whose /Type is /Catalog. Joined from a view: one copy of the file, not two.
    return b"".join((kept, b"\ntrailer\n<< /Size %d >>\nstartxref\n0\n%%%%EOF\n" % size))


def _highest_object_number(data: bytes, stop: int) -> int:
    """The highest object number an object header in data[:stop] gives (0 when there is none). Found from
    each "obj" keyword back: a pattern tried at every digit of a scan's image data took 5 s for
    350 MB, and the keyword is rare there."""
    highest = 0
    at = data.find(b"obj", 0, stop)
    while at >= 0:
        end = at + 3
        after = data[end : min(end + 1, stop)]
        if not (after.isalnum() or after == b"_"):  # obj, not objects
            header = _HEADER_AT_END.search(data, max(0, end - _HEADER_REACH), end)
            if header is not None:
                highest = max(highest, int(header.group(1)))
        at = data.find(b"obj", end, stop)
    return highest
