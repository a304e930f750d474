"""Open and validate a PDF before anything is written about it."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium

from app.pdf._pdfium import PDFIUM_LOCK
from app.pdf.errors import (
    DamagedPdfError,
    EmptyFileError,
    EncryptedPdfError,
    NoPagesError,
    NotAPdfError,
    PdfNotFoundError,
)

# We report damage ourselves, in one line; pypdf's own log lines would only repeat it.
logging.getLogger("pypdf").setLevel(logging.ERROR)

_HEADER_WINDOW = 1024  # the PDF header may follow some junk; readers accept it within the first 1 KiB
_TAIL_WINDOW = 2048


@dataclass(frozen=True, slots=True)
class PdfInfo:
    path: Path
    page_count: int
    sha256: str
    size_bytes: int
    warnings: tuple[str, ...] = ()


def inspect_pdf(path: Path) -> PdfInfo:
    """Validate path as a PDF we can OCR; raise a PdfError subclass naming what is wrong."""
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
        tail = handle.read()
    if b"%PDF-" not in head:
        raise NotAPdfError("not a PDF (no %PDF- header)")
    page_count = _page_count(path)
    warnings: tuple[str, ...] = ()
    if b"%%EOF" not in tail:
        warnings = (_truncation_warning(path, page_count),)
    return PdfInfo(path, page_count, _sha256(path), size, warnings)


def _page_count(path: Path) -> int:
    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(path)
        except pdfium.PdfiumError:
            # PDFium's error code is process-wide and stale after some failures (an empty page
            # tree reports the previous file's error), so pypdf gives the second opinion.
            encrypted, declared = _second_opinion(path)
            if encrypted:
                raise EncryptedPdfError("the PDF is encrypted; decrypt it first") from None
            if declared == 0:
                raise NoPagesError("the PDF has no pages") from None
            raise DamagedPdfError("the PDF is damaged beyond repair (PDFium cannot read it)") from None
        try:
            count = len(document)
        finally:
            document.close()
    if count == 0:
        raise NoPagesError("the PDF has no pages")
    return count


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
    """The file ends early; PDFium rebuilt what it could. Say how much that is."""
    _, declared = _second_opinion(path)
    if declared is not None and declared > recovered:
        return (
            f"the file is truncated: {recovered} of {declared} pages recovered, "
            f"pages {recovered + 1}-{declared} are lost"
        )
    return f"the file is truncated (no %%EOF); {recovered} pages recovered"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
