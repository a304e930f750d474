"""`chunk-ocr run`'s worker: the arq worker `chunk-ocr worker` runs, inside the command itself.

A worker process of its own cost the command a second interpreter importing the
same libraries (about a second of CPU on two cores, while the first pages
waited for it) and the engine probe's interpreter after that. Here the worker
is a task on the command's event loop: the same ChunkOcrWorker, the same
options (worker_settings), the same queue, leases and OCR processes, which it
forks from the forkserver the command started before its own imports. While it
runs, the log lines of the command, the worker and its OCR processes go to a file
(LOG_FILE), so the terminal shows only the command's own one-line messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.config import Settings
from app.core.logging import configure_logging

if TYPE_CHECKING:
    from app.worker_loop import ChunkOcrWorker


@dataclass
class InlineWorker:
    worker: ChunkOcrWorker
    task: asyncio.Task[None]
    log_path: Path  # the worker's log lines (JSON, one event a line), appended
    grace: float  # how long a stop waits for the running jobs (WORKER_GRACE_SECONDS)
    job_ended: asyncio.Event  # set as each job ends (arq's after_job_end)
    _stopping: asyncio.Task[None] | None = None

    @classmethod
    def start(
        cls,
        settings: Settings,
        log_path: Path,
        *,
        run_id: str | None = None,
        revivers: Mapping[str, Callable[[], None]] | None = None,
    ) -> InlineWorker:
        """Start the worker on the running event loop: `settings.ocr_processes` OCR processes,
        one job slot more (a finalize never waits behind OCR), the engine and language its
        chunks name. The engine probe is skipped (the OCR processes' warm-up proves the engine
        it runs), so it advertises no engine: an API on the same Redis would take its one engine
        for all the workers can run.
        run_id: the run it works for: it reads the run's private queue and claims and sweeps only
        the run's documents (app.local.private_run).
        revivers: what starts an embedded server again if it goes away, by dependency (as
        `chunk-ocr worker`)."""
        # Imported here: the forkserver preloads what the command's main module imports, and the
        # OCR processes need none of arq's worker.
        from app.worker import PROBE_ENGINES, worker_settings
        from app.worker_loop import REVIVERS, ChunkOcrWorker

        level = _level()
        settings = settings.model_copy(update={"log_level": level, "log_file": log_path})
        configure_logging(level, file=log_path)  # the command's lines too, while the worker runs
        options = worker_settings(settings, run_id=run_id)
        options["ctx"][PROBE_ENGINES] = False
        options["ctx"][REVIVERS] = dict(revivers or {})
        job_ended = asyncio.Event()

        async def after_job_end(ctx: dict[str, object]) -> None:
            job_ended.set()

        options["after_job_end"] = after_job_end
        worker = ChunkOcrWorker(**options, handle_signals=False)  # Ctrl-C is the command's
        worker.main_task = asyncio.get_running_loop().create_task(worker.main(), name="chunk-ocr-worker")
        return cls(worker, worker.main_task, log_path, settings.worker_grace_seconds, job_ended)

    async def next_job_end(self, seconds: float) -> None:
        """Return when a job ends (a chunk, a document's merge), or after `seconds`."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):  # not wait_for, which can lose a Ctrl-C on 3.11
                await self.job_ended.wait()
        self.job_ended.clear()

    def alive(self) -> bool:
        return not self.task.done()

    def failure(self) -> BaseException | None:
        """What ended the worker early (its start-up hook raised), if anything did."""
        if not self.task.done() or self.task.cancelled():
            return None
        return self.task.exception()

    def request_stop(self) -> None:
        """Take no more jobs and finish the running ones (what SIGTERM does to a worker process),
        without waiting: the worker shuts down while the command writes its outputs."""
        if self.worker.allow_pick_jobs and self.alive():
            self.worker.allow_pick_jobs = False
            self._stopping = asyncio.get_running_loop().create_task(self._finish_then_stop())

    async def _finish_then_stop(self) -> None:
        """arq's handle_sig_wait_for_completion, without its polling: it looks every 0.1 s
        whether the jobs are done, and a run whose last job had ended waited that long to exit.
        Here the jobs are awaited; those still running after the grace period are cancelled."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.grace
        while (running := [t for t in self.worker.tasks.values() if not t.done()]) and (
            left := deadline - loop.time()
        ) > 0:
            await asyncio.wait(running, timeout=left)
        self.worker.handle_sig(signal.SIGTERM)  # cancels what still runs, and the main task

    async def stop(self) -> None:
        """Finish the running chunks (up to the grace period), then stop the OCR processes and
        close the worker's connections; its log lines go to the terminal again."""
        self.request_stop()
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait({self.task})
                if self._stopping is not None:
                    await self._stopping
            await self.worker.close()
        finally:
            self.failure()  # retrieved: asyncio would report it as never retrieved
            configure_logging(_level())


def _level() -> str:
    """The command's log level: LOG_LEVEL when set, else warnings only (as main sets it)."""
    return os.environ.get("LOG_LEVEL", "WARNING")


def run_log_path(data_dir: Path) -> Path:
    """A new log file for one `chunk-ocr run`'s worker, under DATA_DIR/logs."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return data_dir / "logs" / f"run-{stamp}-{os.getpid()}.log"
