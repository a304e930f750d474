"""Open and validate a PDF before anything is written about it.

Order of checks, cheapest first: the file exists and is not empty, it starts
with a PDF header, PDFium opens it (encrypted and empty page trees are told
apart with pypdf, because PDFium's error code is process-wide and can be
stale), and, when PDFium cannot open it, pypdf rebuilds it (repair.py) with a
warning naming the pages that were lost. split_pdf makes the same repair, so
the page count reported here is the page count it cuts.

A PDF encrypted with an owner password only (a "permissions" password: no
password is needed to open it, as every viewer shows) is read, with a
warning; one that needs a password to open is refused.

A file with more pages than max_pages (MAX_PAGES_PER_DOCUMENT) is refused
with TooManyPagesError as soon as its page count is known, before it is
hashed or repaired: a page tree may name one small page 100,000 times, so
the page count, not the file's size, is what planning and OCR cost.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from app.core.logging import get_logger
from app.pdf._pdfium import PDFIUM_LOCK
from app.pdf.errors import (
    DamagedPdfError,
    EmptyFileError,
    EncryptedPdfError,
    NoPagesError,
    NotAPdfError,
    PdfNotFoundError,
    TooManyPagesError,
)

if TYPE_CHECKING:  # repair.py imports pypdf (slow to import), needed only for a damaged file
    from app.pdf.repair import RepairReport

log = get_logger(__name__)

_HEADER_WINDOW = 1024  # the PDF header may follow some junk; readers accept it within the first 1 KiB
_TAIL_WINDOW = 2048  # %%EOF must be near the end of a complete file


@dataclass(frozen=True, slots=True)
class PdfInfo:
    path: Path
    page_count: int
    sha256: str
    size_bytes: int
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Opened:
    page_count: int
    owner_locked: bool  # encrypted, but with an empty user password


def inspect_pdf(path: Path, *, max_pages: int | None = None) -> PdfInfo:
    """Validate path as a PDF we can OCR; raise a PdfError subclass naming what is wrong."""
    started = time.perf_counter()
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
        handle.seek(max(0, size - _TAIL_WINDOW))
        truncated = b"%%EOF" not in handle.read()
    if b"%PDF-" not in head:
        raise NotAPdfError("not a PDF (no %PDF- header)")

    warnings: list[str] = []
    opened = _open_with_pdfium(path, max_pages)
    if opened is not None:
        page_count = opened.page_count
        _check_page_count(page_count, max_pages)
        if opened.owner_locked:
            warnings.append(
                "the PDF is encrypted with an owner password only; its pages are read without one"
            )
        if truncated:
            warnings.append(_truncation_warning(path, page_count))
    else:
        report = _repair_or_refuse(path)
        page_count = report.page_count
        _check_page_count(page_count, max_pages)
        warnings.append(_repair_warning(report, truncated))
        # info, not warning: the warning itself travels in PdfInfo.warnings, for the caller to show once
        log.info("pdf_repaired", path=str(path), pages=page_count, lost_pages=list(report.lost_pages))
    info = PdfInfo(path, page_count, _sha256(path), size, tuple(warnings))
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


def _open_with_pdfium(path: Path, max_pages: int | None = None) -> _Opened | None:
    """Page count as PDFium reads the file, or None when PDFium cannot open it (damaged)."""
    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(path)
        except pdfium.PdfiumError:
            document = None
        if document is not None:
            try:
                count = len(document)
                owner_locked = pdfium_c.FPDF_GetSecurityHandlerRevision(document.raw) != -1
            finally:
                document.close()
    if document is None:
        encrypted, declared = _second_opinion(path)
        if encrypted:
            raise EncryptedPdfError("the PDF is encrypted; decrypt it first")
        if declared == 0:
            raise NoPagesError("the PDF has no pages")
        if declared is not None:
            _check_page_count(declared, max_pages)  # before a repair that costs time per page
        return None
    if count == 0:
        raise NoPagesError("the PDF has no pages")
    return _Opened(count, owner_locked)


def _repair_or_refuse(path: Path) -> RepairReport:
    """Rebuild the file in a scratch directory and check that PDFium reads the result."""
    from app.pdf.repair import repair_pdf

    with tempfile.TemporaryDirectory(prefix="chunk-ocr-repair-") as scratch:
        repaired = Path(scratch) / "repaired.pdf"
        report = repair_pdf(path, repaired)
        opened = _open_with_pdfium(repaired)
    if opened is None or opened.page_count != report.page_count:
        raise DamagedPdfError("the PDF is damaged beyond repair (the rebuilt file does not open)")
    return report


def _second_opinion(path: Path) -> tuple[bool, int | None]:
    """(encrypted, declared page count or None) as pypdf reads the file."""
    from pypdf import PdfReader

    try:
        with path.open("rb") as handle:
            reader = PdfReader(handle, strict=False)
            if reader.is_encrypted:
                return True, None
            return False, len(reader.pages)
    except Exception:  # a second opinion only: any failure means "unknown"
        return False, None


def _truncation_warning(path: Path, recovered: int) -> str:
    """The file ends early and PDFium rebuilt what it could: say how much that is."""
    _, declared = _second_opinion(path)
    if declared is not None and declared > recovered:
        return (
            f"the file is truncated: {recovered} of {declared} pages recovered, "
            f"pages {_ranges(range(recovered + 1, declared + 1))} are lost"
        )
    return f"the file is truncated (no %%EOF); {recovered} pages recovered"


def _repair_warning(report: RepairReport, truncated: bool) -> str:
    kind = "truncated" if truncated else "damaged"
    if not report.lost_pages:
        return f"the file is {kind}: rebuilt with pypdf, all {report.page_count} pages recovered"
    return (
        f"the file is {kind}: rebuilt with pypdf, {len(report.lost_pages)} of {report.page_count} "
        f"pages lost (pages {_ranges(report.lost_pages)}, left blank)"
    )


def _ranges(numbers: range | tuple[int, ...]) -> str:
    """1, 2, 3, 7, 9, 10 -> '1-3, 7, 9-10'."""
    spans: list[list[int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
