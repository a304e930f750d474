"""Cut each chunk's pages into its own PDF, once, at planning time.

pypdfium2 (`PdfDocument.new()` + `import_pages`) copies page objects inside
PDFium without parsing them in Python, which is several times faster and
lighter than pypdf on the same cut (`python -m bench split` measures it against
pypdf; the README's benchmark table has the last figures).

Pieces are yielded one at a time, so memory holds at most one chunk's pages
(PDFium's copy of them), never the document's; split_pdf_to_files writes each
piece to a file, so not even one chunk is copied into a Python buffer. A file
PDFium cannot open is rebuilt first, exactly as inspect_pdf did when it
counted the pages (repair.py).
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
from app.pdf.plan import PageRange

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
# one chunk deep, whatever the file's size; born-digital files, megabytes in all, never reopen.
REOPEN_AFTER_BYTES = 32 * 1024 * 1024


def split_pdf_to_files(
    path: Path, ranges: Sequence[PageRange], directory: Path
) -> Iterator[tuple[PageRange, Path]]:
    """(range, a file in `directory` holding the PDF of exactly those pages) for each range, lazily.

    PDFium writes each piece straight to its file, so a large chunk is never copied into a Python
    buffer; the caller uploads the file and may delete it before asking for the next.
    """
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="chunk-ocr-split-") as scratch:
        readable = _readable_source(path, Path(scratch))
        source: pdfium.PdfDocument | None = None
        cut_since_open = 0
        try:
            for page_range in ranges:
                piece = directory / f"chunk-{page_range.chunk_index:05d}.pdf"
                with PDFIUM_LOCK:
                    if source is None:
                        source = pdfium.PdfDocument(readable)
                    with piece.open("wb") as sink:
                        _cut(source, page_range, sink)
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


def _readable_source(path: Path, scratch: Path) -> Path:
    """The file PDFium opens: `path`, or a repaired copy of it in `scratch` if it is damaged."""
    with PDFIUM_LOCK:
        try:
            pdfium.PdfDocument(path).close()
            return path
        except pdfium.PdfiumError:
            pass  # damaged: rebuild it below, outside the lock (pypdf is pure Python)
    from app.pdf.repair import repair_pdf  # pypdf: imported only for a damaged file

    repaired = scratch / "repaired.pdf"
    repair_pdf(path, repaired)
    with PDFIUM_LOCK:
        try:
            pdfium.PdfDocument(repaired).close()
        except pdfium.PdfiumError as exc:
            raise DamagedPdfError(f"the PDF is damaged beyond repair: {exc}") from None
    return repaired


def _cut(source: pdfium.PdfDocument, page_range: PageRange, sink: BinaryIO) -> None:
    if page_range.page_end > len(source):
        raise DamagedPdfError(
            f"pages {page_range.page_start}-{page_range.page_end} are past the end of the PDF "
            f"({len(source)} pages)"
        )
    target = pdfium.PdfDocument.new()
    try:
        target.import_pages(source, pages=list(range(page_range.page_start - 1, page_range.page_end)))
        if len(target) != page_range.page_count:
            raise DamagedPdfError(f"pages {page_range.page_start}-{page_range.page_end} could not be copied")
        target.save(sink)
    except pdfium.PdfiumError as exc:
        raise DamagedPdfError(
            f"pages {page_range.page_start}-{page_range.page_end} could not be copied: {exc}"
        ) from None
    finally:
        target.close()
