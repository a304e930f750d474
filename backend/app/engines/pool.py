"""The OCR process pool: CPU-bound OCR off the event loop, one process per core.

PDFium is not thread-safe and tesseract is CPU-bound, so OCR runs in
separate processes. They ignore SIGINT and SIGTERM: stopping is the worker's
decision (it waits out its grace period, then exits and the pool with it).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from types import ModuleType

from app.engines.base import PageResult
from app.engines.registry import get_engine


def _ignore_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def make_ocr_pool(processes: int | None = None) -> ProcessPoolExecutor:
    # forkserver: children do not inherit the worker's event loop, sockets or locks. The server
    # imports the engines once, so each OCR process starts from a warm copy of it.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_preload())
    return ProcessPoolExecutor(
        max_workers=processes or os.cpu_count() or 1,
        mp_context=context,
        initializer=_ignore_signals,
    )


def _preload() -> list[str]:
    """Modules the forkserver imports once, so that every OCR process forked from it has them.

    Besides the engines: what the parent's main module imports. multiprocessing runs the main
    module again in each child (`chunk-ocr worker` is `python -m app.cli`, or the chunk-ocr
    script), and each OCR process imported the CLI's settings and logging from scratch (0.18 s
    each, measured with py-spy). The module itself is left out: run again by name while it is
    already imported, runpy warns.
    """
    modules = ["app.engines.pool", "app.engines.tesseract", "app.engines.auto"]
    main = sys.modules.get("__main__")
    for value in vars(main).values() if main is not None else ():
        name = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
        if isinstance(name, str) and name not in modules and name not in ("__main__", "builtins"):
            modules.append(name)
    return modules


def warm_up(engine_name: str) -> str:
    """Run once per pool process before real work: imports, engine construction, binary checks."""
    return get_engine(engine_name).version()


def recognize_in_process(engine_name: str, pdf_bytes: bytes, first_page: int) -> tuple[list[PageResult], str]:
    """Run inside a pool process: the pages of one chunk and the engine's version."""
    engine = get_engine(engine_name)
    return engine.recognize(pdf_bytes, first_page), engine.version()
