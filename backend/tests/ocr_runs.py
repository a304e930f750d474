"""Count engine runs at the OCR pool: the real pool, with a note of each run handed to it.

The pool is the one place every engine run passes through, whatever logs are
configured to show; the processor is handed this in place of its executor and
every task still runs in the real OCR processes.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from app.engines.pool import recognize_in_process


class RecordingPool(Executor):
    """Passes every task to the real pool; remembers (engine, first page) of each engine run, and
    the language it was asked to read in."""

    def __init__(self, pool: Executor) -> None:
        self.pool = pool
        self.runs: list[tuple[str, int]] = []
        self.languages: list[str] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if fn is recognize_in_process:
            engine, _pdf, first_page, language, *_lost = args
            self.runs.append((engine, first_page))
            self.languages.append(language)
        return self.pool.submit(fn, *args, **kwargs)
