"""structlog set-up: JSON lines when not on a terminal, readable console otherwise.

Records of the standard library's loggers (arq's job lines, asyncio, uvicorn)
go through the same renderer, once: under `arq app.worker.WorkerSettings`,
arq's own console handler is removed so each line is not printed twice.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import TextIO

import structlog

_configured = False
_log_file: TextIO | None = None  # the file a configuration opened; the next one closes it
_log_path: Path | None = None  # where _log_file is


def configure_logging(level: str = "INFO", *, json: bool | None = None, file: Path | None = None) -> None:
    """Configure structlog and the stdlib root logger: lines appended to `file` (created), else
    written to stderr. Called again, it replaces the configuration before; a file already open
    for the one before is kept open, not opened again: another thread may be writing to it (the
    command line's planning, while its worker's start-up configures the same file again)."""
    global _configured, _log_file, _log_path
    previous = _log_file
    if file is not None and _log_file is not None and _log_path == file.resolve():
        previous = None  # the same file: kept
    elif file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        _log_file = file.open("a", encoding="utf-8", buffering=1)  # a line at a time, as stderr
        _log_path = file.resolve()
    else:
        _log_file, _log_path = None, None
    stream = _log_file if _log_file is not None else sys.stderr
    if json is None:
        json = not stream.isatty()
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=stream.isatty())
    )
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        # Not cached: a process configures again once it knows its settings (a worker's LOG_LEVEL),
        # and a logger that cached the first configuration would keep ignoring the second.
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(stream)
    handler.addFilter(_arq_prints_its_own)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
        )
    )
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_chunk_ocr", False)]:
        root.removeHandler(old)
    handler._chunk_ocr = True  # type: ignore[attr-defined]  # ours, replaced on the next call
    root.addHandler(handler)
    root.setLevel(max(numeric, logging.WARNING))  # other libraries: warnings and errors
    # A library's Python warning (pikepdf's PageCopyWarning as a copy without hidden layers is
    # saved) is a log line like the others: printed on stderr, it broke `chunk-ocr run`'s
    # one-line messages with a source line and a traceback-like location.
    logging.captureWarnings(True)
    # pypdfium2 warns of every XFA form it sets up that its PDFium reads no XFA, telling the
    # reader to build another: a form's AcroForm part is read all the same, and a person running
    # `chunk-ocr run` on a government form got a JSON line that asked them to rebuild a library.
    logging.getLogger("pypdfium2._helpers.document").setLevel(logging.ERROR)
    # asyncpg retries a lost connection of its pool's floor with a warning and the whole traceback,
    # every second at first, for as long as PostgreSQL is down; the outage is our own event
    # (dependency_unavailable). One line each, the error's kind and message at its end.
    pool_logger = logging.getLogger("asyncpg.pool")
    if not any(isinstance(f, _WarningsOnOneLine) for f in pool_logger.filters):
        pool_logger.addFilter(_WarningsOnOneLine())
    arq = logging.getLogger("arq")
    for old in list(arq.handlers):  # arq's CLI gives it a console handler of its own
        arq.removeHandler(old)
    arq.setLevel(numeric)  # a worker's job lines at the worker's LOG_LEVEL
    arq.propagate = True
    _configured = True
    if previous is not None:
        previous.close()


class _WarningsOnOneLine(logging.Filter):
    """A warning's traceback folded into its message: `message (ErrorType: what it says)`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.levelno < logging.ERROR and record.exc_info[1] is not None:
            error = record.exc_info[1]
            record.msg = f"{record.getMessage()} ({type(error).__name__}: {error})"
            record.args, record.exc_info, record.exc_text = (), None, None
        return True


def _arq_prints_its_own(record: logging.LogRecord) -> bool:
    """Under arq's CLI, arq has a console handler of its own (configured after our modules are
    imported) until configure_logging runs again in the worker's start-up hook and removes it;
    meanwhile arq's lines are printed by that handler only."""
    return not (record.name.startswith("arq") and logging.getLogger("arq").handlers)


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    if not _configured:
        configure_logging()
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(name)
    return logger
