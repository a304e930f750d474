"""PDFium access rules shared by inspect and split.

PDFium is not thread-safe: every call in a process goes through PDFIUM_LOCK
(the API server and the CLI call it from worker threads). OCR engines run in
their own processes and need no lock.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable

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
