"""The CPU time one page may take in an OCR process (MAX_PAGE_CPU_SECONDS).

PDFium has pages whose cost grows as the square of what they hold: a 44 KB page of 40,000
characters, each placed on its own, took its text page 7 s to build, and 100,000 took 56 s.
The decoded-size limit (_limits.py) does not see that, and nothing in PDFium can be
interrupted from Python. So each page starts a CPU-time timer (ITIMER_PROF, the process's
user and system time) when it is loaded (_pages.load_page), and a page that uses it up ends
its process with SIGPROF, whose default action is to end it. The pool (pool.py) tells that
death from others by its signal and fails the page alone with the permanent `page_timeout`,
at once: CPU time does not depend on what else the machine runs, so a second run would end
the same way. CPU time, not wall time: a busy machine never fails a page it would read alone.

tesseract's reading is not counted (paused_page_clock): it has its own deadline, and a page
it reads too slowly fails retryably (`tesseract_timeout`). The timer is stopped when the
task ends (pool._tracked), and fork()ed children (tesseract's orientation process) start
without it.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

# The signal a page that ran out of CPU time dies by (the pool compares exit codes with it).
PAGE_CLOCK_SIGNAL = signal.SIGPROF

_seconds: float | None = None  # None: pages are not timed


def set_page_seconds(seconds: float | None) -> None:
    """In an OCR process (the pool's initializer): the CPU seconds each page may take."""
    global _seconds
    _seconds = seconds if seconds else None
    signal.signal(PAGE_CLOCK_SIGNAL, signal.SIG_DFL)  # the process ends: nothing to catch in C


def start_page_clock() -> None:
    """A page starts: it may use the process's CPU for the page's seconds from now."""
    if _seconds is not None:
        signal.setitimer(signal.ITIMER_PROF, _seconds)


def stop_page_clock() -> None:
    signal.setitimer(signal.ITIMER_PROF, 0)


@contextmanager
def page_seconds_at_most(seconds: float) -> Iterator[None]:
    """Within: each page may take at most `seconds` (the planner's text pass: a page it cannot
    read quickly is left to the workers, which read it within the whole budget)."""
    global _seconds
    before = _seconds
    _seconds = seconds if before is None else min(before, seconds)
    try:
        yield
    finally:
        _seconds = before
        stop_page_clock()  # the last page's timer: a process that goes on is not ended by it later


@contextmanager
def paused_page_clock() -> Iterator[None]:
    """Within, the page's CPU time is not counted (tesseract, which keeps its own deadline)."""
    left, _ = signal.setitimer(signal.ITIMER_PROF, 0)
    try:
        yield
    finally:
        if left > 0:
            signal.setitimer(signal.ITIMER_PROF, left)
