"""Resource limits of an OCR process: what a page may decode to, and how much memory it may map.

A PDF says nothing trustworthy about what its streams decode to: a 3 MB file
whose content stream inflates to 3 GiB made PDFium hold 4 GB (PDFium decodes
a page's whole content stream before it parses it, and aborts the process
when an allocation fails). So two limits, both set per OCR process by the
pool's initializer (pool.py), from the settings:

- Before PDFium loads a page, the page meter (_page_meter.py) adds up what
  the page makes it decode and build: every stream the page can draw, images
  by their declared size, forms once per time they are drawn. A page over
  MAX_PAGE_DECODED_MB fails with ResourceLimitError (`resource_limit`,
  permanent), before anything big is allocated.
- RLIMIT_AS (OCR_PROCESS_MEMORY_MB) caps the process's address space, and
  tesseract inherits it: the backstop for what the meter does not see
  (filters other than FlateDecode and the ASCII ones, inline images).
  A Python allocation over it is a MemoryError, reported as
  ResourceLimitError; PDFium aborts the process instead, and pool.py
  replaces it (the chunk fails with the retryable `ocr_process_died`).
"""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from app.core.errors import ResourceLimitError
from app.engines._page_clock import set_page_seconds
from app.engines.base import PageResult

_MIB = 1 << 20


@dataclass(frozen=True, slots=True)
class Limits:
    page_decoded_bytes: int | None = None  # None: pages are not measured
    address_space_bytes: int | None = None  # None: no RLIMIT_AS
    page_cpu_seconds: float | None = None  # None: pages are not timed (_page_clock)
    page_text_chars: int | None = None  # None: a page's text may be as long as it is


_limits = Limits()


def set_limits(limits: Limits) -> None:
    """In an OCR process (the pool's initializer): apply the memory limit, keep the page limit and
    time each page (_page_clock)."""
    global _limits
    _limits = limits
    set_page_seconds(limits.page_cpu_seconds)
    if limits.address_space_bytes is not None:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        soft = limits.address_space_bytes
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def current_limits() -> Limits:
    return _limits


@contextmanager
def address_space_headroom(headroom: int) -> Iterator[None]:
    """Within: this process may map at most `headroom` bytes more than it maps now (and never
    more than its RLIMIT_AS). For work that reads pages unmetered, the planner's text pass: a
    page that needs more is left to the workers, which measure it first; without this, a
    decompression bomb took the process to its whole RLIMIT_AS before PDFium gave up. Where
    the process's mapped size cannot be read (no /proc), nothing changes."""
    try:
        with open("/proc/self/statm") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError, AttributeError):
        yield
        return
    cap = mapped + headroom
    if soft != resource.RLIM_INFINITY:
        cap = min(cap, soft)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def text_within_limit(result: PageResult) -> PageResult:
    """The page, or when its text is longer than MAX_PAGE_TEXT_CHARS, the page failed with
    `resource_limit`. A 144 KB page of 7 million tiny letters is one PDFium reads in 3 s; a page
    tree may name it 10,000 times, and every chunk result and merge holds its text in memory."""
    limit = _limits.page_text_chars
    if limit is None or len(result.text) <= limit:
        return result
    return PageResult.failed(
        result.page_number,
        ResourceLimitError.code,
        f"page {result.page_number}'s text is {len(result.text):,} characters, more than "
        f"{limit:,} (MAX_PAGE_TEXT_CHARS)",
        result.source,
    )


def memory_error(page_number: int | None = None) -> ResourceLimitError:
    where = f"page {page_number}: " if page_number is not None else ""
    limit = _limits.address_space_bytes
    cap = f" of {limit // _MIB} MiB (OCR_PROCESS_MEMORY_MB)" if limit is not None else ""
    return ResourceLimitError(f"{where}the OCR process ran out of its memory{cap}", page=page_number)
