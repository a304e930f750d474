"""Which file PDFium reads for a document, and which of its pages PDFium cannot find.

inspect_pdf and split_pdf must agree on both, or the pages counted are not the
pages cut. A file is read as it is when PDFium opens it and it is whole; a
file PDFium cannot open, or one that is cut short (a linearized download opens
in PDFium from its first-page table even when its shared fonts and colour
spaces are gone), is rebuilt with pypdf (repair.py), which checks what every
page draws. A cut-short file pypdf cannot rebuild but PDFium opens is still
read as PDFium reads it.

Cut short: no %%EOF in the file, or more of the PDF after the last one (an
object, a cross-reference table, a trailer: the update or the rest of a
linearized file that was being written or sent). Whatever else follows a %%EOF
is not the PDF's (zeros a transfer padded the file with, an HTML error page a
server appended, however long): readers skip it, and so does this, where taking
it for a cut rebuilt the whole file in memory (2.4 GB for a 390 MB scan with
8 KB of zeros after its end). The end of almost every file is in its last 4 KiB;
only when it is not is the whole file searched (mapped, not read into memory).

A page PDFium counts but cannot find (a kid of the page tree that is gone, a
/Count larger than the pages under it) cannot be copied into a chunk; the
size lookup that tells is cheap (no content is parsed: 2,000 pages in about
10 ms).
"""

from __future__ import annotations

import ctypes
import mmap
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

_NEAR_END = 4096
_EOF = b"%%EOF"
# What only a PDF's body has: an object's header, a cross-reference table or stream's keyword
# (startxref included), a trailer. An object header is looked for at each "obj" found.
_BODY_KEYWORDS = (b"xref", b"trailer")
_OBJECT_HEADER = re.compile(rb"\d+\s+\d+\s+obj\b")
_HEADER_REACH = 64  # bytes before an "obj" its numbers are looked for in
# Bytes after a PDF's end PDFium still finds its startxref past (it looks in the last 4 KiB;
# with 2 KiB of zeros after the end a 2 MB file opened in 1.2 ms, with 4 KiB in 33 ms).
PDFIUM_TAIL = 2048


@dataclass(frozen=True, slots=True)
class Readable:
    path: Path  # the file PDFium reads: the original, or a rebuilt copy
    report: RepairReport | None  # what the rebuild found, when there was one


def is_truncated(path: Path) -> bool:
    """Whether the file was cut short (see above)."""
    return pdf_end(path) is None


def pdf_end(path: Path) -> int | None:
    """Where the PDF in the file ends: just after its last %%EOF; None when it was cut short."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        start = max(0, size - _NEAR_END)
        handle.seek(start)
        tail = handle.read()
        if _EOF in tail or size <= _NEAR_END:
            return None if is_cut_short(tail) else start + tail.rfind(_EOF) + len(_EOF)
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as whole:
            return None if is_cut_short(whole) else whole.rfind(_EOF) + len(_EOF)


def without_trailing_bytes(path: Path, scratch: Path, end: int | None) -> Path:
    """path, or a copy in scratch of the PDF in it when more than PDFIUM_TAIL bytes follow its end
    (`end`, pdf_end's answer: None for a file cut short, which is left as it is).

    PDFium looks for the cross-reference's offset (startxref) in a file's last few KiB only. Past
    that it rebuilds its table by parsing the whole file, at every open: 25 ms for a 2 MB file,
    seconds for a scan of hundreds of MB, and planning opens a file many times."""
    if end is None or path.stat().st_size - end <= PDFIUM_TAIL:
        return path
    copy = scratch / "without-trailing-bytes.pdf"
    with path.open("rb") as source, copy.open("wb") as sink:
        while end > 0:
            block = source.read(min(end, 1 << 20))
            if not block:
                break
            sink.write(block)
            end -= len(block)
        sink.write(b"\n")
    return copy


def is_cut_short(data: bytes | mmap.mmap) -> bool:
    """Whether a file that is these bytes (or ends in them, from before its last %%EOF) was cut
    short: no %%EOF, or more of the PDF after the last one."""
    end = data.rfind(_EOF)
    return end < 0 or _more_pdf(data, end + len(_EOF))


def _more_pdf(data: bytes | mmap.mmap, start: int) -> bool:
    """Whether data holds PDF body from start on. Plain finds, then a regex only around each "obj":
    a regex tried at every byte took seconds over a hundred MB of junk."""
    if any(data.find(keyword, start) >= 0 for keyword in _BODY_KEYWORDS):
        return True
    at = start
    while (found := data.find(b"obj", at)) >= 0:
        if _OBJECT_HEADER.search(data[max(start, found - _HEADER_REACH) : found + 4]):
            return True
        at = found + 3
    return False


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
    """The file to read path's pages from: path itself, a copy without what follows its end (see
    without_trailing_bytes), or a rebuilt copy, written into scratch."""
    end = pdf_end(path)
    whole = without_trailing_bytes(path, scratch, end)
    opens = pdfium_page_count(whole) is not None
    if opens and end is not None:  # whole, and what followed its end (if much) left out
        return Readable(whole, None)
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
