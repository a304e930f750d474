"""The forkserver the OCR processes are forked from, and what it imports before it forks.

Kept apart from app.engines.pool, whose imports (the engines, PDFium, PIL) take about a tenth
of a second: `chunk-ocr run` starts the server here before it imports them itself, so that the
server's imports and its own run on two cores at once instead of one after the other.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from multiprocessing import forkserver
from types import ModuleType

from app.engines._lifetime import WORKER_PID_ENV

# _forkserver_init first: it arms the server before anything else runs there.
ENGINE_MODULES = (
    "app.engines._forkserver_init",
    "app.engines.pool",
    "app.engines.tesseract",
    "app.engines.auto",
    "pypdf",  # the page meter (_limits.py) reads chunks with it
    "pikepdf",  # which pages are bare scans (_scan_image) is read with it, once per chunk
)


def start_forkserver() -> None:
    """Start the forkserver now, from this thread (it lives as long as the thread that started
    it: the event loop's), unless it runs already. The OCR processes' parent is this process:
    their lifetime (app.engines._lifetime) is tied to it through the environment."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(preload())
    os.environ[WORKER_PID_ENV] = str(os.getpid())
    forkserver.ensure_running()


def preload() -> list[str]:
    """Modules the forkserver imports once, so that every OCR process forked from it has them.

    Besides the engines: what the parent's main module imports. multiprocessing runs the main
    module again in each child (`chunk-ocr worker` is `python -m app.cli`, or the chunk-ocr
    script), and each OCR process imported the CLI's settings and logging from scratch, a cost
    py-spy showed at every start. The module itself is left out: run again by name while it is
    already imported, runpy warns. The list ends with _forkserver_loaded, which turns the
    garbage collector, off since _forkserver_init, back on.
    """
    modules = list(ENGINE_MODULES)
    main = sys.modules.get("__main__")
    for value in vars(main).values() if main is not None else ():
        name = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
        if isinstance(name, str) and name not in modules and name not in ("__main__", "builtins"):
            modules.append(name)
    return [*modules, "app.engines._forkserver_loaded"]
