"""Which file PDFium reads for a document, and which of its pages PDFium cannot find.

inspect_pdf and split_pdf must agree on both, or the pages counted are not the
pages cut. A file is read as it is when PDFium opens it and it is whole; a
file PDFium cannot open, or one that is cut short (a linearized download opens
in PDFium from its first-page table even when its shared fonts and colour
spaces are gone), is rebuilt with pypdf (repair.py), which checks what every
page draws. A cut-short file pypdf cannot rebuild but PDFium opens is still
read as PDFium reads it.

Cut short: no %%EOF in the file's last TAIL_WINDOW bytes, or more of the PDF
after the last one (an object, a cross-reference table, a trailer: the update
or the rest of a linearized file that was being written or sent). Whatever
else follows a %%EOF is not the PDF's (zeros a transfer padded the file with,
an HTML error page a server appended): readers skip it, and so does this, where
taking it for a cut rebuilt the whole file in memory (2.4 GB for a 390 MB
scan with 8 KB of zeros after its end).

A page PDFium counts but cannot find (a kid of the page tree that is gone, a
/Count larger than the pages under it) cannot be copied into a chunk; the
size lookup that tells is cheap (no content is parsed: 2,000 pages in about
10 ms).
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from app.pdf._pdfium import PDFIUM_LOCK
from app.pdf.errors import DamagedPdfError

if TYPE_CHECKING:  # repair.py imports pypdf (slow to import), needed only for a damaged file
    from app.pdf.repair import RepairReport

TAIL_WINDOW = 1 << 20  # the last %%EOF of a complete file is in its last MiB
_NEAR_END = 4096
_EOF = b"%%EOF"
# What only a PDF's body has: an object's header, a cross-reference table or stream's keyword
# (startxref included), a trailer.
_MORE_PDF = re.compile(rb"\d+\s+\d+\s+obj\b|xref|trailer")


@dataclass(frozen=True, slots=True)
class Readable:
    path: Path  # the file PDFium reads: the original, or a rebuilt copy
    report: RepairReport | None  # what the rebuild found, when there was one


def is_truncated(path: Path) -> bool:
    """Whether the file was cut short (see above)."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        for window in (_NEAR_END, TAIL_WINDOW):  # the end of almost every file is in its last 4 KiB
            handle.seek(max(0, size - window))
            tail = handle.read()
            if _EOF in tail or window >= size:
                break
        return is_cut_short(tail)


def is_cut_short(tail: bytes) -> bool:
    """Whether a file whose last TAIL_WINDOW bytes (or fewer) are these was cut short: no %%EOF, or
    more of the PDF after the last one."""
    end = tail.rfind(_EOF)
    return end < 0 or _MORE_PDF.search(tail, end + len(_EOF)) is not None


def pdfium_page_count(path: Path) -> int | None:
    """How many pages PDFium counts in the file, or None when it cannot open it or finds none of
    the pages it counts (a page tree that loops back on itself above them all)."""
    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(path)
        except pdfium.PdfiumError:
            return None
        try:
            count = len(document)
            return count if count == 0 or _finds_a_page(document, count) else None
        finally:
            document.close()


def readable_source(path: Path, scratch: Path) -> Readable:
    """The file to read path's pages from: path itself, or a rebuilt copy written into scratch."""
    opens = pdfium_page_count(path) is not None
    if opens and not is_truncated(path):
        return Readable(path, None)
    from app.pdf.repair import repair_pdf  # pypdf: imported only for a damaged file

    repaired = scratch / "repaired.pdf"
    try:
        report = repair_pdf(path, repaired)
    except DamagedPdfError:
        if opens:  # cut short, but PDFium reads what is there
            return Readable(path, None)
        raise
    if pdfium_page_count(repaired) != report.page_count:
        raise DamagedPdfError("the PDF is damaged beyond repair: the rebuilt file does not open")
    return Readable(repaired, report)


def _finds_a_page(document: pdfium.PdfDocument, count: int) -> bool:
    """Whether PDFium finds any of the document's pages (the first, in any real file)."""
    size = pdfium_c.FS_SIZEF()
    return any(
        pdfium_c.FPDF_GetPageSizeByIndexF(document.raw, index, ctypes.byref(size)) for index in range(count)
    )


def missing_pages(document: pdfium.PdfDocument, first: int = 0, stop: int | None = None) -> list[int]:
    """0-based indexes in [first, stop) of the pages PDFium counts but cannot find (caller holds the lock)."""
    size = pdfium_c.FS_SIZEF()
    stop = len(document) if stop is None else stop
    return [
        index
        for index in range(first, stop)
        if not pdfium_c.FPDF_GetPageSizeByIndexF(document.raw, index, ctypes.byref(size))
    ]


def missing_page_reasons(path: Path, numbers: list[int], page_count: int) -> dict[int, str]:
    """Why each of these pages (1-based) is missing, as far as pypdf's reading of the page tree tells."""
    from app.pdf.repair import page_tree_reasons

    return page_tree_reasons(path, numbers, page_count)
