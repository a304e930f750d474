"""configure_logging to a file while other threads log: the command line's planning threads log
while its worker's start-up configures the same file again."""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path

from app.core.logging import configure_logging, get_logger


def test_configuring_the_same_file_again_never_closes_it_under_a_writer(tmp_path: Path) -> None:
    """A logger bound before (a chunk's, a planning thread's) writes to the file it was bound to:
    configured again for the same file, that file stays open (it was closed under such a writer,
    and `chunk-ocr run` died of `ValueError: write to closed file`)."""
    log_file = tmp_path / "logs" / "run.log"
    try:
        configure_logging("INFO", json=True, file=log_file)
        bound = get_logger("writer").bind(chunk="c1")
        bound.info("before")
        configure_logging("INFO", json=True, file=log_file)  # the worker's start-up hook, again
        bound.info("after")
        get_logger("other").info("new")
    finally:
        configure_logging()  # back to stderr, for the tests after this one
    lines = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert [(line["event"], line.get("chunk")) for line in lines] == [
        ("before", "c1"),
        ("after", "c1"),
        ("new", None),
    ]


def test_another_file_is_opened_and_the_first_closed(tmp_path: Path) -> None:
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    try:
        configure_logging("INFO", json=True, file=first)
        get_logger("t").info("to_first")
        configure_logging("INFO", json=True, file=second)
        get_logger("t").info("to_second")
    finally:
        configure_logging()
    assert [json.loads(line)["event"] for line in first.read_text().splitlines()] == ["to_first"]
    assert [json.loads(line)["event"] for line in second.read_text().splitlines()] == ["to_second"]


def test_a_library_s_python_warning_is_a_log_line_not_a_message_on_stderr(tmp_path: Path) -> None:
    """pikepdf warns with Python's warnings as it saves some files: `chunk-ocr run` printed that
    on stderr, between its one-line messages, with the warning's source line."""
    log_file = tmp_path / "run.log"
    logging.captureWarnings(False)  # pytest took warnings.showwarning back after an earlier capture
    try:
        configure_logging("INFO", json=True, file=log_file)
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.warn(
                "1 form widget annotation(s) are not reachable from /AcroForm", UserWarning, stacklevel=1
            )
    finally:
        configure_logging()
        logging.captureWarnings(False)
    (line,) = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert "not reachable from /AcroForm" in line["event"]
    assert line["level"] == "warning"


def test_asyncpg_s_reconnect_warnings_are_one_line_each(tmp_path: Path) -> None:
    """While PostgreSQL is down, asyncpg's pool warned with a whole traceback every second."""
    log_file = tmp_path / "worker.log"
    try:
        configure_logging("INFO", json=True, file=log_file)
        try:
            raise ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 5432)")
        except ConnectionRefusedError:
            logging.getLogger("asyncpg.pool").warning(
                "Failed to restore the pool connection floor; retrying", exc_info=True
            )
    finally:
        configure_logging()
    (line,) = [json.loads(line) for line in log_file.read_text().splitlines()]
    assert line["event"].startswith(
        "Failed to restore the pool connection floor; retrying (ConnectionRefusedError:"
    )
    assert "exception" not in line
    assert "Traceback" not in log_file.read_text()
