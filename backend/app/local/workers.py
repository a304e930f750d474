"""Start and stop real arq worker processes for `chunk-ocr run`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from app.core.config import Settings
from app.core.errors import ConfigurationError


def worker_env(settings: Settings) -> dict[str, str]:
    """Environment for worker processes so they reach the same services as this process."""
    if settings.redis_url is None:
        raise ConfigurationError("worker processes need REDIS_URL (or the embedded Redis) to take jobs from")
    env = {
        "REDIS_URL": settings.redis_url,
        "LOCAL_STORAGE_DIR": str(settings.local_storage_dir),
        "STORAGE_BACKEND": settings.blob_backend.value,
        "STORAGE_BUCKET": settings.storage_bucket,
        "OCR_ENGINE": settings.ocr_engine,
        "OCR_LANGUAGE": settings.ocr_language,
        "SEARCHABLE_PDF": "true" if settings.searchable_pdf else "false",
    }
    if settings.database_url is not None:
        env["DATABASE_URL"] = settings.database_url
    return env


@dataclass
class WorkerProcesses:
    processes: list[subprocess.Popen[bytes]]
    log_path: Path | None = None  # where the workers' log lines go (None: this process's stderr)
    _signalled: set[int] = field(default_factory=set)  # pids sent SIGTERM once (a second one cancels jobs)

    @classmethod
    def start(cls, ocr_processes: int, env: dict[str, str], log_path: Path | None = None) -> WorkerProcesses:
        """One arq worker process running `ocr_processes` OCR processes, the shape of a production
        worker (one per machine, an OCR process per core). Two worker processes with one OCR
        process each were slower on the scanned benchmark: each pays its own imports,
        forkserver and connections on the cores the OCR needs, and each holds a chunk ahead
        that the other, idle, cannot take.

        log_path: a file for the worker's log lines (JSON, one event a line), so a terminal sees
        only the command's own one-line messages; they are appended, the file is created."""
        full_env = {
            **os.environ,
            **env,
            "OCR_PROCESSES": str(ocr_processes),
            "WORKER_MAX_JOBS": str(ocr_processes + 1),
            "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
        }
        log = None
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            log = log_path.open("ab")
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "app.cli", "worker"],
                env=full_env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # Ctrl-C in the terminal reaches us, and we stop it in order
            )
        finally:
            if log is not None:
                log.close()  # the worker holds its own descriptor
        return cls([process], log_path)

    def alive(self) -> int:
        return sum(1 for p in self.processes if p.poll() is None)

    def request_stop(self) -> None:
        """SIGTERM (finish running chunks) without waiting: the worker shuts down while the caller
        goes on (writing its outputs); stop() then waits for it."""
        for process in self.processes:
            if process.poll() is None and process.pid not in self._signalled:
                process.send_signal(signal.SIGTERM)
                self._signalled.add(process.pid)

    def stop(self, grace_seconds: float = 30) -> None:
        """SIGTERM (finish running chunks), then SIGKILL whatever is left after the grace period."""
        self.request_stop()
        deadline = time.monotonic() + grace_seconds
        for process in self.processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def run_log_path(data_dir: Path) -> Path:
    """A new log file for one `chunk-ocr run`'s worker, under DATA_DIR/logs."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return data_dir / "logs" / f"run-{stamp}-{os.getpid()}.log"
