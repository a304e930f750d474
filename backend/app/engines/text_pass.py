"""The planner's text pass: the pages whose own text layer is their text, read before any chunk
is queued, so that a born-digital document never waits on a worker.

Which pages: for engine auto, those the auto rule (app.engines.auto.text_layer_page) reads from
their text layer, exactly as a worker would; for engine text-layer, every page. Other engines
read no page here. A page the pass cannot read (it cannot be loaded, it decodes to more than
MAX_PAGE_DECODED_MB, it takes more than PAGE_SECONDS of CPU) is left to the workers, which
isolate and report it. The pass reads pages unmetered, so it may map only MAX_PAGE_DECODED_MB
more than its process did as it began.

It runs in OCR processes (app.engines.pool), never in the process that plans: PDFium parses
the pages' content here, which is where a hostile file crashes it or makes it allocate without
bound, and those processes run under the OCR limits and die alone. Slices of the file run in
parallel, one per process, each opening the file itself.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress

import pypdfium2 as pdfium

from app.core.errors import OCRError
from app.engines._limits import address_space_headroom, current_limits, text_within_limit
from app.engines._page_clock import page_seconds_at_most
from app.engines._page_content import PageContents
from app.engines._pages import glyph_names_of, load_page
from app.engines.auto import text_layer_page
from app.engines.base import PageResult
from app.engines.errors import PageRenderError
from app.engines.specs import engine_spec
from app.engines.text_layer import TextLayerEngine, read_page

MIN_SLICE_PAGES = 250  # below this a second process costs more than it saves
BYTES_PER_OPEN = 16 * 1024 * 1024
# CPU seconds a page may take here (at most MAX_PAGE_CPU_SECONDS): a born-digital page takes
# milliseconds. One that takes longer ends its process and is left to the workers, which read it
# within the whole budget; planning, which an upload waits for, is never held by it for longer.
PAGE_SECONDS = 5.0


def slices(page_count: int, processes: int) -> list[tuple[int, int]]:
    """[start, stop) page indexes: at most one slice per process, none under MIN_SLICE_PAGES
    (but the only one)."""
    count = max(1, min(processes, page_count // MIN_SLICE_PAGES))
    size = math.ceil(page_count / count)
    return [(start, min(start + size, page_count)) for start in range(0, page_count, size)]


def pass_version() -> str:
    """What reads the pages (run once in each process to start it ahead of the first file)."""
    return TextLayerEngine().version()


def read_text_pages(
    engine_name: str, pdf_path: str, page_count: int, start: int, stop: int, deadline: float | None = None
) -> tuple[list[PageResult | None], str]:
    """Run in an OCR process: for pages [start, stop) (0-based) of the file, each page's result
    when its text layer is its text, else None; and the version of what read them.

    Every page is None when the file does not open as the planner counted it (PDFium sees a
    different page count in a damaged file): the workers read its repaired cut instead.
    deadline (time.monotonic(), the same clock in every process): no page is begun after it,
    and the pages not begun are None (the workers read them).
    """
    version = pass_version()
    pages: list[PageResult | None] = [None] * (stop - start)
    if not engine_spec(engine_name).reads_text_layer:
        return pages, version
    # PDFium keeps every stream a page's loading read until the document closes (uncompressed
    # images included): it is opened again after about BYTES_PER_OPEN of the file's pages, so
    # the pass of a 200 MB scan holds a page or two, and a born-digital file is opened once.
    per_page = os.stat(pdf_path).st_size / max(1, page_count)
    pages_per_open = max(1, int(BYTES_PER_OPEN / max(1.0, per_page)))
    fonts = PageContents(pdf_path)  # glyph names, read once (for a page whose text needs them)
    try:
        with _headroom(), page_seconds_at_most(PAGE_SECONDS):
            for first in range(start, stop, pages_per_open):
                with _open(pdf_path) as document, glyph_names_of(document, fonts):
                    if len(document) != page_count:
                        return [None] * (stop - start), version
                    for index in range(first, min(first + pages_per_open, stop)):
                        if deadline is not None and time.monotonic() >= deadline:
                            return pages, version
                        pages[index - start] = _read(document, index, engine_name)
    except (OCRError, MemoryError):  # the file itself cannot be opened here: the workers will say why
        return [None] * (stop - start), version
    finally:
        fonts.close()
    return pages, version


def _headroom() -> AbstractContextManager[None]:
    """The pass reads pages unmetered: it may map MAX_PAGE_DECODED_MB more than the process maps
    as it starts, where the limits are set (a page that needs more is the workers', which
    measure it), not the whole OCR_PROCESS_MEMORY_MB (a bomb took the process there)."""
    limits = current_limits()
    if limits.address_space_bytes is None or limits.page_decoded_bytes is None:
        return nullcontext()
    return address_space_headroom(limits.page_decoded_bytes)


@contextmanager
def _open(pdf_path: str) -> Iterator[pdfium.PdfDocument]:
    """The file, opened by path: PDFium reads what each page needs as it loads it, so a 200 MB
    scan is never held whole (a chunk's bytes are what the workers' open_pdf takes). Not metered:
    the meter's pypdf reading doubled the pass, and a page that decodes to more than the pass may
    map (_headroom) ends it; its pages go to the workers, whose metered reading fails it with
    resource_limit. Placeholder pages exist only in chunk cuts, never here."""
    try:
        document = pdfium.PdfDocument(pdf_path)
    except pdfium.PdfiumError as exc:
        raise PageRenderError(f"the PDF cannot be opened: {exc}") from None
    try:
        with suppress(pdfium.PdfiumError):  # the form's values are part of a page's text
            document.init_forms()
        yield document
    finally:
        document.close()


def _read(document: pdfium.PdfDocument, index: int, engine_name: str) -> PageResult | None:
    number = index + 1
    try:
        page = load_page(document, index, number)
        try:
            result = read_page(page, number) if engine_name == "text-layer" else text_layer_page(page, number)
        finally:
            page.close()
    except (OCRError, MemoryError):  # a worker reads it again, and fails it with its reason
        return None
    if result is not None and text_within_limit(result) is not result:
        return None  # over MAX_PAGE_TEXT_CHARS: a worker fails it, and says so
    return result
