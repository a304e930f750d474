"""OCR processes that stop making progress are killed, so their chunk runs again.

A process that is stopped (SIGSTOP, a debugger) or hung without using CPU (a lock never
released, a call that never returns) used no CPU time, so the page clock (_page_clock) never
fired; its task held its chunk, and the pool's process, until the chunk job's timeout (an hour
by default), and chunks queued behind it waited as long.

A thread of the pool looks at each busy process (one whose task's marker file exists, OcrPool)
every few seconds. The process is making progress while any of these moves: its marker (it is
written as each page starts), its CPU time and that of its children it has waited for (read from
/proc), or a child of its own is running (the tesseract command that guesses a page's
orientation). Reading a page with PDFium or tesseract uses CPU, and so does waiting on Vision
(its quota is asked again every second or less). A process with none of these for
OCR_PROCESS_STALL_SECONDS is killed: the pool fails its task as a process death on its page
(`ocr_process_died`, retryable; a page whose process is killed twice in a row fails alone), and
the chunk runs again at once in a new process. Nothing runs inside the OCR processes for this: a
thread there would take address space (its stack and a malloc arena of 64 MiB) from the limit
the page has. When the watching thread itself was held up (the whole worker was stopped, a
laptop slept), it starts its count again instead of killing processes that were stopped with
it. Without /proc (macOS), nothing is watched.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from pathlib import Path

from app.core.logging import get_logger

log = get_logger(__name__)

_PROC = Path("/proc")


def can_watch() -> bool:
    """Whether processes' CPU time can be read here (/proc)."""
    return (_PROC / "self" / "stat").exists()


def _activity(pid: int) -> tuple[int, bool] | None:
    """The process's CPU time with its waited-for children's (clock ticks), and whether a child of
    its own is running; None when it cannot be read (the process is gone)."""
    try:
        fields = (_PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
        ticks = sum(int(field) for field in fields[11:15])  # utime, stime, cutime, cstime
        children = any(
            (task / "children").read_text().strip() for task in (_PROC / str(pid) / "task").iterdir()
        )
    except (OSError, IndexError, ValueError):
        return None
    return ticks, children


class StallWatch:
    """Kills the OCR processes of a pool whose task has made no progress for stall_seconds, from
    a thread of its own once started. processes() gives the pool's current processes (by pid);
    running is the directory of task markers; on_stall(pid) is told before a process is killed;
    activity(pid) says what the process has done (CPU ticks, a child running)."""

    def __init__(
        self,
        stall_seconds: float,
        running: Path,
        processes: Callable[[], dict[int, BaseProcess]],
        on_stall: Callable[[int], None],
        activity: Callable[[int], tuple[int, bool] | None] = _activity,
    ) -> None:
        self.stall_seconds = stall_seconds
        self.interval = min(5.0, max(0.5, stall_seconds / 4))
        self._running = running
        self._processes = processes
        self._on_stall = on_stall
        self._activity = activity
        self._stop = threading.Event()
        # per pid: what was last seen of it (marker, CPU ticks), and since when (monotonic)
        self._seen: dict[int, tuple[tuple[int, int], float]] = {}
        self._last: float | None = None

    def start(self) -> StallWatch:
        threading.Thread(target=self._watch, name="ocr-stall-watch", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            self.tick(time.monotonic())

    def tick(self, now: float) -> None:
        """Kill each busy process that has made no progress for stall_seconds. After a gap of
        more than three intervals since the last tick (this thread was held up too), what was
        seen before is forgotten and the count starts again."""
        if self._last is not None and now - self._last > 3 * self.interval:
            self._seen.clear()
        self._last = now
        processes = self._processes()
        for pid in [pid for pid in self._seen if pid not in processes]:
            del self._seen[pid]
        for pid, process in processes.items():
            try:
                marker = (self._running / str(pid)).stat().st_mtime_ns
            except OSError:  # no task running
                self._seen.pop(pid, None)
                continue
            activity = self._activity(pid)
            if activity is None:
                continue
            ticks, child_running = activity
            state = (marker, ticks)
            seen = self._seen.get(pid)
            if seen is None or seen[0] != state or child_running:
                self._seen[pid] = (state, now)
            elif now - seen[1] >= self.stall_seconds and process.exitcode is None:
                log.warning("ocr_process_stalled", pid=pid, stalled_s=round(now - seen[1], 1))
                self._on_stall(pid)
                with contextlib.suppress(OSError):
                    process.kill()
                del self._seen[pid]
