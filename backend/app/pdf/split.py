"""Cut each chunk's pages into its own PDF, once, at planning time.

pypdfium2 (`PdfDocument.new()` + `import_pages`) copies page objects inside
PDFium without parsing them in Python, which is several times faster and
lighter than pypdf on the same cut (`python -m bench split` measures it against
pypdf; the README's benchmark table has the last figures).

Pieces are yielded one at a time, so memory holds at most one chunk's pages
(PDFium's copy of them), never the document's; split_pdf_to_files writes each
piece to a file, so not even one chunk is copied into a Python buffer. A file
PDFium cannot open, or one cut short, is rebuilt first, exactly as inspect_pdf
did when it counted the pages (source.py). A page PDFium cannot copy (its page
tree is broken there) does not fail the chunk: it becomes a blank placeholder
page marked with why (lost.py), as inspect_pdf reported it, and the other pages
are copied as they are.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

import pypdfium2 as pdfium

from app.core.logging import get_logger
from app.pdf._pdfium import PDFIUM_LOCK, release_freed_memory
from app.pdf.errors import DamagedPdfError
from app.pdf.lost import LETTER, placeholder_pdf
from app.pdf.plan import PageRange
from app.pdf.source import missing_pages, readable_source

log = get_logger(__name__)


def split_pdf(path: Path, ranges: Sequence[PageRange]) -> Iterator[tuple[PageRange, bytes]]:
    """(range, PDF bytes of exactly those pages, in order) for each range, lazily."""
    with tempfile.TemporaryDirectory(prefix="chunk-ocr-split-") as scratch:
        for page_range, piece in split_pdf_to_files(path, ranges, Path(scratch)):
            data = piece.read_bytes()
            piece.unlink()
            yield page_range, data


# PDFium keeps in the source document every stream it has read to copy pages out of it, until the
# document is closed: cutting a large scan held the whole file by its last chunk. The source is
# opened afresh once this many bytes have been cut from it, so what a planning holds stays about
# one chunk deep, whatever the file's size; born-digital files, megabytes in all, seldom reopen.
# (Three concurrent plannings of a 190 MB, 8-page scan in one process: 195 MB above idle at the
# peak with 32 MiB here, 80 MB with 8; opening a file again costs PDFium its cross-reference.)
REOPEN_AFTER_BYTES = 8 * 1024 * 1024


def split_pdf_to_files(
    path: Path, ranges: Sequence[PageRange], directory: Path
) -> Iterator[tuple[PageRange, Path]]:
    """(range, a file in `directory` holding the PDF of exactly those pages) for each range, lazily.

    PDFium writes each piece straight to its file, so a large chunk is never copied into a Python
    buffer; the caller uploads the file and may delete it before asking for the next.
    """
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="chunk-ocr-split-") as scratch:
        readable = readable_source(path, Path(scratch)).path
        reasons = _LostReasons(readable)
        source: pdfium.PdfDocument | None = None
        cut_since_open = 0
        try:
            for page_range in ranges:
                piece = directory / f"chunk-{page_range.chunk_index:05d}.pdf"
                with PDFIUM_LOCK:
                    if source is None:
                        source = pdfium.PdfDocument(readable)
                    with piece.open("wb") as sink:
                        _cut(source, reasons, page_range, sink)
                        cut_since_open += sink.tell()
                    if cut_since_open >= REOPEN_AFTER_BYTES:
                        source.close()  # before yielding: a planning waiting on its upload holds nothing
                        source, cut_since_open = None, 0
                        release_freed_memory()
                yield page_range, piece  # never yield while holding the lock
        finally:
            if source is not None:
                with PDFIUM_LOCK:
                    source.close()
                release_freed_memory()
    log.debug(
        "pdf_split",
        path=str(path),
        chunks=len(ranges),
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )


def cut_to_files(path: str, ranges: list[PageRange], directory: str) -> list[tuple[PageRange, str]]:
    """split_pdf_to_files, every piece at once: run in an OCR process (the planner's, for a file
    too large to cut in the process that plans; app.services.text_reader.TextReader.cut)."""
    pieces = split_pdf_to_files(Path(path), ranges, Path(directory))
    return [(page_range, str(piece)) for page_range, piece in pieces]


class _LostReasons:
    """Why pages of one source cannot be copied: read with pypdf once, when the first is needed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._known: dict[int, str] | None = None

    def of(self, source: pdfium.PdfDocument, index: int) -> str:
        if self._known is None:
            from app.pdf.source import missing_page_reasons  # pypdf, for a damaged file only

            numbers = [i + 1 for i in missing_pages(source)]
            self._known = missing_page_reasons(self.path, numbers, len(source)) if numbers else {}
        return self._known.get(index + 1, "PDFium cannot copy the page")


def _cut(source: pdfium.PdfDocument, reasons: _LostReasons, page_range: PageRange, sink: BinaryIO) -> None:
    """Copy page_range's pages into a new PDF written to sink; a page PDFium cannot copy becomes a
    marked placeholder (lost.py), so the chunk keeps its page count and the other pages go on."""
    if page_range.page_end > len(source):
        raise DamagedPdfError(
            f"pages {page_range.page_start}-{page_range.page_end} are past the end of the PDF "
            f"({len(source)} pages)"
        )
    first, stop = page_range.page_start - 1, page_range.page_end
    target = pdfium.PdfDocument.new()
    try:
        missing = missing_pages(source, first, stop)
        if not missing:
            try:
                target.import_pages(source, pages=list(range(first, stop)))
            except pdfium.PdfiumError:  # not a page PDFium cannot find: some other copy failure
                target.close()
                target = pdfium.PdfDocument.new()
                missing = list(range(first, stop))  # page by page below, to find which
        if missing:
            _cut_around(source, reasons, first, stop, set(missing), target)
        if len(target) != page_range.page_count:
            raise DamagedPdfError(f"pages {page_range.page_start}-{page_range.page_end} could not be copied")
        target.save(sink)
    finally:
        target.close()


def _cut_around(
    source: pdfium.PdfDocument,
    reasons: _LostReasons,
    first: int,
    stop: int,
    suspect: set[int],
    target: pdfium.PdfDocument,
) -> None:
    """Copy pages [first, stop) into target: runs of sound pages at once, each suspect page alone,
    and a marked placeholder for a page that cannot be copied."""
    index = first
    lost: list[tuple[int, int]] = []  # (position in target, page index in source)
    while index < stop:
        if index in suspect:
            if not _import(target, source, [index]):
                lost.append((len(target), index))
            index += 1
            continue
        run_end = next((i for i in range(index, stop) if i in suspect), stop)
        if not _import(target, source, list(range(index, run_end))):  # unexpected: one by one instead
            suspect.update(range(index, run_end))
            continue
        index = run_end
    if not lost:
        return
    for inserted, (position, page_index) in enumerate(lost):
        _insert_placeholder(target, position + inserted, reasons.of(source, page_index))
    log.warning("pdf_pages_not_copied", path=str(reasons.path), pages=[i + 1 for _, i in lost])


def _import(target: pdfium.PdfDocument, source: pdfium.PdfDocument, indexes: list[int]) -> bool:
    before = len(target)
    try:
        target.import_pages(source, pages=indexes)
    except pdfium.PdfiumError:
        # a failed import may leave part of the pages behind: drop them, so numbering stays exact
        while len(target) > before:
            target.del_page(len(target) - 1)
        return False
    return True


def _insert_placeholder(target: pdfium.PdfDocument, position: int, reason: str) -> None:
    """A blank page marked with why the page is lost, the size of the page before it, at position."""
    size = LETTER
    if position > 0:
        before = target[position - 1]
        size = before.get_size()
        before.close()
    placeholder = pdfium.PdfDocument(placeholder_pdf(reason, size))
    try:
        target.import_pages(placeholder, index=position)
    finally:
        placeholder.close()
