"""The pages to graft text layers onto: the original when it is sound, else the chunks joined.

A damaged original (truncated, a broken cross-reference table) was repaired before it was cut,
and its chunks hold the pages OCR read, lost pages as marked placeholders. Grafting onto the
original itself would put QPDF's own, different repair under the layers (other pages, another
count), so such a document's searchable PDF is built on its chunks joined back together.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

import pikepdf

from app.core.logging import get_logger
from app.pdf.errors import DamagedPdfError

log = get_logger(__name__)


def is_sound(original: Path, page_count: int) -> bool:
    """The original opens without repair and has the pages the document was planned with."""
    try:
        with pikepdf.open(original) as pdf:
            sound = not pdf.get_warnings() and len(pdf.pages) == page_count
    except pikepdf.PdfError:
        return False
    if not sound:
        log.info("searchable_pdf_on_joined_chunks", reason="the original needs repair")
    return sound


def join_chunks(chunks: Sequence[Path], output: Path) -> None:
    """The chunk PDFs' pages, in order, as one PDF. Objects a chunk shares among its pages stay
    shared; those the chunks share with each other are copied into each (the cut wrote them so)."""
    try:
        with contextlib.ExitStack() as opened, pikepdf.new() as joined:
            for path in chunks:
                # QPDF reads a copied page's streams when the copy is saved: each chunk stays open
                chunk = opened.enter_context(pikepdf.open(path))
                joined.pages.extend(chunk.pages)
            joined.save(output)
    except pikepdf.PdfError as exc:
        raise DamagedPdfError(f"the chunks cannot be joined: {exc}") from None
