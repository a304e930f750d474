"""Cut each chunk's pages into its own PDF, once, at planning time.

pypdfium2's import_pages copies page objects inside PDFium without parsing
them in Python: on a 2,000-page file it is far faster and leaner than pypdf
(see bench/split.py). Pieces are yielded one at a time, so memory holds one
chunk's bytes, not the document's.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from pathlib import Path

import pypdfium2 as pdfium

from app.pdf._pdfium import PDFIUM_LOCK
from app.pdf.errors import DamagedPdfError
from app.pdf.plan import PageRange


def split_pdf(path: Path, ranges: Sequence[PageRange]) -> Iterator[tuple[PageRange, bytes]]:
    with PDFIUM_LOCK:
        source = pdfium.PdfDocument(path)
    try:
        for page_range in ranges:
            with PDFIUM_LOCK:
                data = _cut(source, page_range)
            yield page_range, data  # never yield while holding the lock
    finally:
        with PDFIUM_LOCK:
            source.close()


def _cut(source: pdfium.PdfDocument, page_range: PageRange) -> bytes:
    target = pdfium.PdfDocument.new()
    try:
        target.import_pages(source, pages=list(range(page_range.page_start - 1, page_range.page_end)))
        if len(target) != page_range.page_count:
            raise DamagedPdfError(f"pages {page_range.page_start}-{page_range.page_end} could not be copied")
        buffer = io.BytesIO()
        target.save(buffer)
        return buffer.getvalue()
    except pdfium.PdfiumError as exc:
        raise DamagedPdfError(
            f"pages {page_range.page_start}-{page_range.page_end} could not be copied: {exc}"
        ) from None
    finally:
        target.close()
