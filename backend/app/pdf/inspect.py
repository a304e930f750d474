"""Open and validate a PDF before anything is written about it.

Order of checks, cheapest first: the file exists and is not empty, it starts
with a PDF header, its object streams are not a decompression bomb (object_scan, before any
library inflates them), PDFium opens it (encrypted and empty page trees are told
apart with pypdf, because PDFium's error code is process-wide and can be
stale), and, when PDFium cannot open it or the file is cut short, pypdf
rebuilds it (repair.py, chosen in source.py). The warning names the pages that
were lost and why, and the pages kept with a substitute (a lost ICC profile
drawn as DeviceRGB); PdfInfo carries the same as lost_pages, repaired_pages
and damage, for the caller to record. A file PDFium opens whose page tree
misses pages is read with those pages as marked blanks, named the same way.
split_pdf makes the same choices, so the pages reported here are the pages it
cuts.

A PDF encrypted with an owner password only (a "permissions" password: no
password is needed to open it, as every viewer shows) is read, with a
warning; one that needs a password to open is refused.

A file with more pages than max_pages (MAX_PAGES_PER_DOCUMENT) is refused
with TooManyPagesError as soon as its page count is known, before it is
hashed or repaired: a page tree may name one small page 100,000 times, so
the page count, not the file's size, is what planning and OCR cost.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from app.core.digests import file_sha256
from app.core.filenames import shown_name
from app.core.logging import get_logger
from app.pdf._pdfium import PDFIUM_LOCK
from app.pdf.damage import PageDamage
from app.pdf.errors import (
    EmptyFileError,
    EncryptedPdfError,
    NoPagesError,
    NotAPdfError,
    PdfNotFoundError,
    TooManyPagesError,
)
from app.pdf.object_scan import scan_objects
from app.pdf.source import (
    missing_page_reasons,
    missing_pages,
    pdf_end,
    readable_source,
    without_trailing_bytes,
)

if TYPE_CHECKING:  # repair.py imports pypdf (slow to import), needed only for a damaged file
    from app.pdf.repair import RepairReport

log = get_logger(__name__)

_HEADER_WINDOW = 1024  # the PDF header may follow some junk; readers accept it within the first 1 KiB


@dataclass(frozen=True, slots=True)
class PdfInfo:
    path: Path
    page_count: int
    sha256: str
    size_bytes: int
    warnings: tuple[str, ...] = ()
    lost_pages: tuple[int, ...] = ()  # 1-based: pages that could not be recovered (blank placeholders)
    repaired_pages: tuple[int, ...] = ()  # 1-based: pages kept with a substitute for something lost
    damage: tuple[PageDamage, ...] = ()  # each lost or repaired page, with why or what was substituted
    may_have_text: bool = True  # False: no page can have a text layer (no font is named anywhere)
    may_hide_layers: bool = False  # True: the file names optional content (app.pdf.object_scan)
    objects: int = 0  # the objects the file holds, as its bytes say (app.pdf.object_scan)
    # The file the pages are read and cut from: `path`, or, when inspect_pdf was given a directory
    # to keep one in, its repaired copy or a copy without the bytes after its end (split_pdf then
    # reads it as it is, not repairing or copying again).
    readable: Path | None = None

    @property
    def pages_file(self) -> Path:
        return self.readable or self.path


@dataclass(frozen=True, slots=True)
class _Opened:
    page_count: int
    owner_locked: bool  # encrypted, but with an empty user password
    missing: tuple[int, ...] = ()  # 0-based indexes of pages PDFium counts but cannot find
    dynamic_form: bool = False  # an XFA form drawn by the viewer (its pages are a placeholder)
    attachments: int = 0  # files attached to the document
    attachment_names: tuple[str, ...] = ()  # the first few's


def check_pdf_header(path: Path) -> int:
    """The file's size, once it is a file, not empty, and has a PDF header where readers look for
    one: what can be said of a file from its first kilobyte, before anything reads it whole (a
    1 GB file of zeros was hashed for 5 s before it was found not to be a PDF)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise PdfNotFoundError(f"no such file: {path}") from None
    if not path.is_file():
        raise PdfNotFoundError(f"not a file: {path}")
    if size == 0:
        raise EmptyFileError("the file is empty")
    with path.open("rb") as handle:
        head = handle.read(_HEADER_WINDOW)
    if b"%PDF-" not in head:
        raise NotAPdfError(f"not a PDF (no %PDF- header in its first {_HEADER_WINDOW} bytes)")
    return size


def inspect_pdf(path: Path, *, max_pages: int | None = None, keep_repair_in: Path | None = None) -> PdfInfo:
    """Validate path as a PDF we can OCR; raise a PdfError subclass naming what is wrong.

    A damaged file is rebuilt to count its pages; with keep_repair_in (a directory the caller
    removes) the rebuilt copy stays there as PdfInfo.readable, for the cut to read instead of
    rebuilding the file a second time (seconds and ~4x its size in memory for a large scan), and
    so does a copy without what follows the file's end, when PDFium would parse it at each open."""
    started = time.perf_counter()
    size = check_pdf_header(path)
    end = pdf_end(path)
    truncated = end is None
    objects = scan_objects(path)  # a decompression bomb in its object streams is refused before it is opened
    # what PDFium reads: without the bytes after the file's end, which it parses at every open
    pages_file = path if keep_repair_in is None else without_trailing_bytes(path, keep_repair_in, end)

    warnings: list[str] = []
    damage: tuple[PageDamage, ...] = ()
    opened = _open_with_pdfium(pages_file, truncated, max_pages)
    if opened is not None:
        _check_page_count(opened.page_count, max_pages)  # before a repair that costs time per page
        if opened.owner_locked:
            warnings.append(
                "the PDF is encrypted with an owner password only; its pages are read without one"
            )
        warnings += _unread_content_warnings(opened)
    readable = pages_file if pages_file != path else None
    report = None
    if opened is None or truncated:
        readable, report = _repair(path, keep_repair_in)
    if report is not None:
        page_count = report.page_count
        _check_page_count(page_count, max_pages)
        damage = report.damage
        warnings.append(_repair_warning(report, truncated))  # repair_pdf logged it (pdf_repaired)
    else:
        assert opened is not None  # _repair raised, or returned None only for a file PDFium opens
        page_count = opened.page_count
        if truncated:
            warnings.append(_truncation_warning(path, page_count))
        if opened.missing:
            damage = _missing_damage(path, opened)
            warnings.append(_missing_warning(damage, page_count))
    lost = tuple(item.page for item in damage if item.lost)
    repaired = tuple(item.page for item in damage if not item.lost)
    info = PdfInfo(
        path,
        page_count,
        file_sha256(path),
        size,
        tuple(warnings),
        lost,
        repaired,
        damage,
        objects.may_have_text,
        objects.may_hide_layers,
        objects.objects,
        readable,
    )
    log.debug(
        "pdf_inspected",
        path=str(path),
        pages=page_count,
        size_bytes=size,
        warnings=len(warnings),
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
    return info


def _check_page_count(page_count: int, max_pages: int | None) -> None:
    if max_pages is not None and page_count > max_pages:
        raise TooManyPagesError(
            f"the PDF has {page_count} pages, more than the {max_pages} allowed (MAX_PAGES_PER_DOCUMENT)",
            page_count=page_count,
            max_pages=max_pages,
        )


def _open_with_pdfium(path: Path, truncated: bool, max_pages: int | None = None) -> _Opened | None:
    """Page count as PDFium reads the file, or None when PDFium cannot open it or finds none of the
    pages it counts (damaged: the file is repaired)."""
    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(path)
        except pdfium.PdfiumError:
            document = None
        if document is not None:
            try:
                count = len(document)
                owner_locked = pdfium_c.FPDF_GetSecurityHandlerRevision(document.raw) != -1
                missing = tuple(missing_pages(document)) if max_pages is None or count <= max_pages else ()
                dynamic_form = pdfium_c.FPDF_GetFormType(document.raw) == pdfium_c.FORMTYPE_XFA_FULL
                attachments, attachment_names = _attachment_names(document)
            finally:
                document.close()
    if document is None or (count and len(missing) == count):  # PDFium reads none of its pages: repair
        encrypted, declared = _second_opinion(path, truncated)
        if encrypted:
            raise EncryptedPdfError("the PDF is encrypted; decrypt it first")
        if declared == 0:
            raise NoPagesError("the PDF has no pages")
        if declared is not None:
            _check_page_count(declared, max_pages)  # before a repair that costs time per page
        return None
    if count == 0:
        raise NoPagesError("the PDF has no pages")
    return _Opened(count, owner_locked, missing, dynamic_form, attachments, attachment_names)


_NAMED_ATTACHMENTS = 5  # attachments a warning names; it counts the rest


def _attachment_names(document: pdfium.PdfDocument) -> tuple[int, tuple[str, ...]]:
    """How many files are attached to the document (its EmbeddedFiles, as PDFium lists them), and
    the names of the first _NAMED_ATTACHMENTS: as shown_name shows them."""
    count = max(0, pdfium_c.FPDFDoc_GetAttachmentCount(document.raw))
    names = []
    for index in range(min(count, _NAMED_ATTACHMENTS)):
        try:
            name = document.get_attachment(index).get_name()
        except pdfium.PdfiumError:
            name = ""
        name = shown_name(name)
        names.append(name or f"file {index + 1}")
    return count, tuple(names)


def _unread_content_warnings(opened: _Opened) -> list[str]:
    """What the document holds besides its pages, which is not read: a dynamic XFA form (its
    pages are what a viewer without XFA shows, often "Please wait..."), and attached files (a
    PDF portfolio's documents are attachments behind a cover page)."""
    said = []
    if opened.dynamic_form:
        said.append(
            "the PDF is a dynamic XFA form: its pages hold only what a viewer shows before it "
            "draws the form, and the form itself is not read"
        )
    if opened.attachments:
        listed = ", ".join(opened.attachment_names)
        rest = opened.attachments - len(opened.attachment_names)
        more = f" and {rest} more" if rest > 0 else ""
        count = f"{opened.attachments} attached file{'s' if opened.attachments > 1 else ''}"
        said.append(f"the PDF carries {count} ({listed}{more}): only its own pages are read, not them")
    return said


def _repair(path: Path, keep_in: Path | None) -> tuple[Path | None, RepairReport | None]:
    """Rebuild the file as split_pdf would: the copy kept in keep_in (None without it) and the
    report; no report when the file is read as it is."""
    if keep_in is not None:
        readable = readable_source(path, keep_in)
        return readable.path, readable.report
    with tempfile.TemporaryDirectory(prefix="chunk-ocr-repair-") as scratch:
        return None, readable_source(path, Path(scratch)).report


def _missing_damage(path: Path, opened: _Opened) -> tuple[PageDamage, ...]:
    numbers = [index + 1 for index in opened.missing]
    reasons = missing_page_reasons(path, numbers, opened.page_count)
    return tuple(PageDamage(number, True, (reasons[number],)) for number in numbers)


def _second_opinion(path: Path, truncated: bool) -> tuple[bool, int | None]:
    """(encrypted, declared page count or None) as pypdf reads the file. One cut short is read as
    its repair reads it (pypdf alone looks for its %%EOF line by line back through the whole file:
    40 s for a 350 MB scan), and one too large to repair is not read."""
    from pypdf import PdfReader

    from app.pdf.repair import MAX_REPAIR_BYTES, lenient_reader

    try:
        if truncated:
            if path.stat().st_size > MAX_REPAIR_BYTES:
                return False, None
            reader, no_catalog = lenient_reader(path.read_bytes())
            return False, None if no_catalog is not None else len(reader.pages)
        with path.open("rb") as handle:
            reader = PdfReader(handle, strict=False)
            if reader.is_encrypted:
                return True, None
            return False, len(reader.pages)
    except EncryptedPdfError:
        return True, None
    except NotImplementedError as exc:
        # From pypdf's encryption module: encryption it cannot read (a security handler other
        # than the standard one, an unknown version or method). Such a file had been repaired,
        # and said to be damaged beyond repair. (From elsewhere: a filter it does not know.)
        return _raised_in(exc, "pypdf._encryption"), None
    except Exception:  # a second opinion only: any failure means "unknown"
        return False, None


def _raised_in(exc: BaseException, module: str) -> bool:
    """Whether exc was raised by code of `module` (its traceback's last frame)."""
    frame = exc.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    return frame is not None and frame.tb_frame.f_globals.get("__name__") == module


def _truncation_warning(path: Path, recovered: int) -> str:
    """The file ends early and PDFium rebuilt what it could: say how much that is."""
    _, declared = _second_opinion(path, truncated=True)
    if declared is not None and declared > recovered:
        return (
            f"the file is truncated: {recovered} of {declared} pages recovered, "
            f"pages {_ranges(range(recovered + 1, declared + 1))} are lost"
        )
    return f"the file is truncated; {recovered} pages recovered"


def _repair_warning(report: RepairReport, truncated: bool) -> str:
    kind = "truncated" if truncated else "damaged"
    lost = report.lost_pages
    head = f"the file is {kind}: rebuilt with pypdf"
    if report.in_file_order:
        head += (
            f" from the {report.page_count} pages found in it, in the order they come in it (its page tree "
            "is cut off: pages whose objects went with it are not counted)"
        )
    if lost:
        head += f", {len(lost)} of {report.page_count} pages lost ({_label(lost)}, left blank)"
    elif not report.in_file_order:
        head += f", all {report.page_count} pages recovered"
    return f"{head}; {_damage_details(report.damage)}" if report.damage else head


def _missing_warning(damage: tuple[PageDamage, ...], page_count: int) -> str:
    numbers = tuple(item.page for item in damage)
    return (
        f"the PDF's page tree is broken: {len(numbers)} of {page_count} pages cannot be found "
        f"({_label(numbers)}, left blank); {_damage_details(damage)}"
    )


_MAX_DETAILS = 8  # groups of pages named in a warning; a file with more says how many it left out


def _damage_details(damage: tuple[PageDamage, ...]) -> str:
    """'pages 2-6: <why lost>; page 1 kept with substitutes: <what>' with pages of one story grouped."""
    groups: dict[tuple[bool, tuple[str, ...]], list[int]] = {}
    for item in sorted(damage, key=lambda item: not item.lost):  # the lost pages first
        groups.setdefault((item.lost, item.reasons), []).append(item.page)
    parts = []
    for (lost, reasons), pages in groups.items():
        label = _label(tuple(pages))
        parts.append(
            f"{label}: {', '.join(reasons)}"
            if lost
            else f"{label} kept with substitutes: {', '.join(reasons)}"
        )
    if len(parts) > _MAX_DETAILS:
        parts = [*parts[:_MAX_DETAILS], f"and {len(parts) - _MAX_DETAILS} more"]
    return "; ".join(parts)


def _label(numbers: tuple[int, ...]) -> str:
    """'page 3' or 'pages 2-6, 9'."""
    return f"{'page' if len(numbers) == 1 else 'pages'} {_ranges(numbers)}"


def _ranges(numbers: range | tuple[int, ...]) -> str:
    """1, 2, 3, 7, 9, 10 -> '1-3, 7, 9-10'."""
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
