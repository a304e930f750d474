"""PDFium access rules shared by inspect and split.

PDFium is not thread-safe: every call in a process goes through PDFIUM_LOCK
(the API server and the CLI call it from worker threads). OCR engines run in
their own processes and need no lock.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pypdfium2 is imported by the callers, where PDFium is used
    import pypdfium2 as pdfium

PDFIUM_LOCK = threading.Lock()


def _load_malloc_trim() -> Callable[[int], int] | None:
    try:
        # The C library the interpreter is linked with. Not ctypes.util.find_library("c"): that
        # runs `ldconfig -p` (about 0.1 s) in every process that imports this, OCR processes too.
        libc = ctypes.CDLL(None)
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim
        return None
    return trim


_MALLOC_TRIM = _load_malloc_trim()


def release_freed_memory() -> None:
    """Give memory PDFium freed back to the operating system (glibc's malloc_trim).

    PDFium's buffers for large images are tens of megabytes. glibc serves a freed one's successors
    from the heap of the thread that freed it (its mmap threshold rises to the largest block freed,
    up to 32 MiB) and keeps that heap's pages, so an API that planned large uploads from several
    threads went on holding about one large image per thread. Called after large cuts only;
    a no-op where the C library has no malloc_trim.
    """
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def shown_chars(textpage: pdfium.PdfTextPage) -> Iterator[tuple[int, int]]:
    """(index, code point) of each character of textpage that the page draws: not a space or a
    break PDFium made, and not shown in render mode 3 (an OCR layer's text; a Type 3 font's
    glyphs in that mode are drawn, but PDFium does not tell its fonts apart: counted as not)."""
    import pypdfium2.raw as pdfium_c

    modes: dict[int, int] = {}  # text object (its address) -> its render mode
    raw = textpage.raw
    for index in range(pdfium_c.FPDFText_CountChars(raw)):
        code = pdfium_c.FPDFText_GetUnicode(raw, index)
        if code <= 0x20 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            continue
        text_object = pdfium_c.FPDFText_GetTextObject(raw, index)
        address = ctypes.cast(text_object, ctypes.c_void_p).value or 0
        if address not in modes:
            modes[address] = pdfium_c.FPDFTextObj_GetTextRenderMode(text_object) if address else -1
        if modes[address] != pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE:
            yield index, code
