"""Start and stop real arq worker processes for `chunk-ocr run`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from app.core.config import Settings


def worker_env(settings: Settings) -> dict[str, str]:
    """Environment for worker processes so they reach the same services as this process."""
    assert settings.redis_url is not None
    env = {
        "REDIS_URL": settings.redis_url,
        "LOCAL_STORAGE_DIR": str(settings.local_storage_dir),
        "STORAGE_BACKEND": settings.blob_backend.value,
        "STORAGE_BUCKET": settings.storage_bucket,
        "OCR_ENGINE": settings.ocr_engine,
    }
    if settings.database_url is not None:
        env["DATABASE_URL"] = settings.database_url
    return env


@dataclass
class WorkerProcesses:
    processes: list[subprocess.Popen[bytes]]

    @classmethod
    def start(cls, count: int, env: dict[str, str], *, ocr_processes: int = 1) -> WorkerProcesses:
        full_env = {
            **os.environ,
            **env,
            "OCR_PROCESSES": str(ocr_processes),
            "WORKER_MAX_JOBS": str(ocr_processes + 1),
            "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
        }
        processes = [
            subprocess.Popen(
                [sys.executable, "-m", "app.cli", "worker"],
                env=full_env,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # Ctrl-C in the terminal reaches us, and we stop them in order
            )
            for _ in range(count)
        ]
        return cls(processes)

    def alive(self) -> int:
        return sum(1 for p in self.processes if p.poll() is None)

    def stop(self, grace_seconds: float = 30) -> None:
        """SIGTERM (finish running chunks), then SIGKILL whatever is left after the grace period."""
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_seconds
        for process in self.processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
