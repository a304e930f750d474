"""An OCR process that stops making progress is killed and its task fails as a process death
(app.engines._liveness); one that computes or waits on a command of its own is left alone.

On the code before, a stopped OCR process (SIGSTOP) held its task until the chunk job's timeout:
the first test's future did not finish within its 30 s.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import time
from concurrent.futures import Future
from dataclasses import dataclass
from multiprocessing.context import ForkServerProcess
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from app.core.config import load_settings
from app.engines._liveness import StallWatch
from app.engines.errors import OcrProcessDiedError
from app.engines.pool import OcrPool, make_ocr_pool, recognize_in_process, stop_ocr_pool
from app.pdf.samples import make_scanned_pdf

STALL_SECONDS = 2.0


def _pool() -> OcrPool:
    return make_ocr_pool(1, settings=load_settings(ocr_process_stall_seconds=STALL_SECONDS))


def _spin(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


def _ocr_process() -> int:
    (process,) = [p for p in multiprocessing.active_children() if isinstance(p, ForkServerProcess)]
    assert process.pid is not None
    return process.pid


def _stop_once_running(future: Future[object], seconds: float = 1.0) -> int:
    """SIGSTOP the pool's one OCR process once the task has run for `seconds`."""
    time.sleep(seconds)
    assert not future.done()
    pid = _ocr_process()
    os.kill(pid, signal.SIGSTOP)
    return pid


def test_a_stopped_ocr_process_is_killed_and_its_page_fails_as_a_death(tmp_path: Path) -> None:
    make_scanned_pdf(tmp_path / "scan.pdf", pages=3, seed=5)
    pool = _pool()
    try:
        future = pool.submit(recognize_in_process, "tesseract", (tmp_path / "scan.pdf").read_bytes(), 7)
        started = time.monotonic()
        with capture_logs() as logs:
            stopped = _stop_once_running(future, seconds=1.5)
            with pytest.raises(OcrProcessDiedError, match="made no progress on page") as caught:
                future.result(timeout=30)
        assert time.monotonic() - started < STALL_SECONDS + 15
        assert caught.value.retryable
        assert caught.value.context["page"] in (7, 8, 9)  # the page it was reading when stopped
        assert [e["pid"] for e in logs if e["event"] == "ocr_process_stalled"] == [stopped]
        # the pool goes on with a new process
        pages, _ = pool.submit(
            recognize_in_process, "text-layer", (tmp_path / "scan.pdf").read_bytes(), 1
        ).result(timeout=60)
        assert len(pages) == 3
        assert _ocr_process() != stopped
    finally:
        stop_ocr_pool(pool, timeout=5)


def test_a_task_that_computes_is_not_taken_for_stalled() -> None:
    """A task that marks no page for twice the stall time but uses CPU all along."""
    pool = _pool()
    try:
        with capture_logs() as logs:
            started = time.monotonic()
            assert pool.submit(_spin, 2 * STALL_SECONDS + 1).result(timeout=60) is None
        assert time.monotonic() - started >= 2 * STALL_SECONDS + 1
        assert not [e for e in logs if e["event"] == "ocr_process_stalled"]
    finally:
        stop_ocr_pool(pool, timeout=5)


def test_a_task_waiting_on_its_own_command_is_not_taken_for_stalled() -> None:
    """A task waiting for a command it started (as tesseract's orientation guess is run) uses no
    CPU of its own: its running child is its progress."""
    pool = _pool()
    try:
        with capture_logs() as logs:
            done = pool.submit(subprocess.run, ["sleep", str(2 * STALL_SECONDS + 1)], check=True)
            assert done.result(timeout=60).returncode == 0
        assert not [e for e in logs if e["event"] == "ocr_process_stalled"]
    finally:
        stop_ocr_pool(pool, timeout=5)


@dataclass
class _Process:
    """What StallWatch asks of a process."""

    exitcode: int | None = None
    killed: bool = False

    def kill(self) -> None:
        self.killed = True


def _idle(pid: int) -> tuple[int, bool]:
    return 100, False  # the same CPU time each time it is read, no child running


def test_the_watch_starts_its_count_again_after_it_was_held_up(tmp_path: Path) -> None:
    """A worker stopped as a whole (its OCR processes with it) is not taken, once it goes on, for
    processes that stalled: the watch's own gap makes it forget what it saw."""
    (tmp_path / "41").write_text("task")
    process = _Process()
    stalled: list[int] = []
    watch = StallWatch(10.0, tmp_path, lambda: {41: process}, stalled.append, _idle)  # type: ignore[dict-item]
    for now in (0.0, 2.5, 5.0, 7.5):
        watch.tick(now)
    watch.tick(60.0)  # held up for 52 s: nothing is killed, the count starts again
    assert not process.killed
    for now in (62.5, 65.0, 67.5):
        watch.tick(now)
    assert not process.killed  # 7.5 s since the count started again
    watch.tick(70.0)
    assert process.killed
    assert stalled == [41]


@pytest.mark.parametrize("moving", ["marker", "cpu", "child"])
def test_a_page_marked_cpu_used_or_a_child_running_is_progress(tmp_path: Path, moving: str) -> None:
    marker = tmp_path / "41"
    marker.write_text("task")
    process = _Process()
    ticks = iter(range(100, 10_000))

    def activity(pid: int) -> tuple[int, bool]:
        return (next(ticks) if moving == "cpu" else 100), moving == "child"

    watch = StallWatch(10.0, tmp_path, lambda: {41: process}, lambda pid: None, activity)  # type: ignore[dict-item]
    for step in range(12):
        if moving == "marker":
            os.utime(marker, ns=(step * 10**9, step * 10**9))  # a page begun each time
        watch.tick(step * 2.5)
    assert not process.killed
    marker.unlink()  # the task ended: nothing to watch
    for step in range(12, 20):
        watch.tick(step * 2.5)
    assert not process.killed
