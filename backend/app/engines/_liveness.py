"""OCR processes that stop making progress are killed, so their chunk runs again.

A process that is stopped (SIGSTOP, a debugger) or hung without using CPU (a lock never
released, a call that never returns) used no CPU time, so the page clock (_page_clock) never
fired; its task held its chunk, and the pool's process, until the chunk job's timeout (an hour
by default), and chunks queued behind it waited as long.

Each OCR process beats: while a task runs, a thread of its own touches the task's marker file
(the one that names the task and its page, OcrPool) every BEAT_SECONDS. The thread runs while
the process reads a page, since PDFium and tesseract are called through ctypes, which lets
other threads run, and so does waiting on Vision. It stops only when the whole process does.

The worker watches: a thread of the pool looks at each busy process's marker every few
seconds, and kills a process whose marker has not changed for OCR_PROCESS_STALL_SECONDS. The
pool then fails that task as a process death on its page (`ocr_process_died`, retryable; a
page whose process is killed twice in a row fails alone), and the chunk runs again at once in a
new process. When the watching thread itself was held up (the whole worker was stopped, a
laptop slept), it starts its count again instead of killing processes that were stopped with it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from pathlib import Path

from app.core.logging import get_logger

BEAT_SECONDS = 1.0

log = get_logger(__name__)

_beating = False
_beating_lock = threading.Lock()


def beat_while_tasks_run(marker: Callable[[], int | None]) -> None:
    """Start (once per OCR process) the thread that touches the running task's marker, whose
    descriptor marker() gives (None: no task running)."""
    global _beating
    with _beating_lock:
        if _beating:
            return
        _beating = True
    threading.Thread(target=_beat, args=(marker,), name="ocr-task-beat", daemon=True).start()


def _beat(marker: Callable[[], int | None]) -> None:
    while True:
        time.sleep(BEAT_SECONDS)
        descriptor = marker()
        if descriptor is not None:
            with contextlib.suppress(OSError):
                os.utime(descriptor)


class StallWatch:
    """Kills the OCR processes of a pool whose task has made no progress for stall_seconds, from
    a thread of its own once started. processes() gives the pool's current processes (by pid);
    running is the directory of task markers; on_stall(pid) is told before a process is killed."""

    def __init__(
        self,
        stall_seconds: float,
        running: Path,
        processes: Callable[[], dict[int, BaseProcess]],
        on_stall: Callable[[int], None],
    ) -> None:
        self.stall_seconds = stall_seconds
        self.interval = min(5.0, max(0.5, stall_seconds / 4))
        self._running = running
        self._processes = processes
        self._on_stall = on_stall
        self._stop = threading.Event()
        # per pid: the marker's last modification seen, and when (monotonic) it was first seen so
        self._seen: dict[int, tuple[int, float]] = {}
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
        """Kill each process whose task's marker has not changed for stall_seconds. After a gap
        of more than three intervals since the last tick (this thread was held up too), what was
        seen before is forgotten and the count starts again."""
        if self._last is not None and now - self._last > 3 * self.interval:
            self._seen.clear()
        self._last = now
        processes = self._processes()
        for pid in [pid for pid in self._seen if pid not in processes]:
            del self._seen[pid]
        for pid, process in processes.items():
            try:
                modified = (self._running / str(pid)).stat().st_mtime_ns
            except OSError:  # no task running
                self._seen.pop(pid, None)
                continue
            seen = self._seen.get(pid)
            if seen is None or seen[0] != modified:
                self._seen[pid] = (modified, now)
            elif now - seen[1] >= self.stall_seconds and process.exitcode is None:
                log.warning("ocr_process_stalled", pid=pid, stalled_s=round(now - seen[1], 1))
                self._on_stall(pid)
                with contextlib.suppress(OSError):
                    process.kill()
                del self._seen[pid]
