"""Helpers for end-to-end tests: the real `chunk-ocr` command and `chunk-ocr worker` processes."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import IO, TypeVar

import pytest
import uvicorn

from app.core.config import Settings
from app.main import create_app

# Fixtures shared with the integration tests (a runtime on the real services, API settings).
from tests.integration.api.conftest import api_settings  # noqa: F401
from tests.integration.conftest import matter_id, pipeline_settings, runtime  # noqa: F401

T = TypeVar("T")
REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def cli_env(database_url: str, redis_url: str, arq_redis: object, tmp_path: Path) -> dict[str, str]:
    """Environment pointing the command at this session's database, the test Redis (flushed by
    arq_redis) and tmp storage."""
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "LOCAL_STORAGE_DIR": str(tmp_path / "storage"),
        "DATA_DIR": str(tmp_path / "data"),  # `run` writes its worker's log under DATA_DIR/logs
        "LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
    }


@pytest.fixture
def empty_home() -> Iterator[Path]:
    """An empty HOME with a short path, so the embedded PostgreSQL's socket fits in its pgdata
    (at most 107 bytes), as on a laptop: under xdist, pytest's tmp_path is too deep for it, and
    the server would take the fallback that test_local_path tests on its own."""
    home = Path(tempfile.mkdtemp(prefix="chunk-ocr-home-"))
    yield home
    shutil.rmtree(home, ignore_errors=True)


def outer_uv_cache() -> str:
    """The cache of the uv running this suite (`uv run` sets UV; it need not be on PATH)."""
    uv = os.environ.get("UV") or shutil.which("uv")
    assert uv, "no uv in the outer environment to share its cache"
    return subprocess.run([uv, "cache", "dir"], capture_output=True, text=True, check=True).stdout.strip()


def run_cli(args: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_ROOT,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def start_worker(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Start `chunk-ocr worker` processes; whatever is still running at the end is killed."""
    started: list[subprocess.Popen[bytes]] = []
    logs: list[IO[bytes]] = []

    def start(env: dict[str, str], name: str = "worker", *, arq_cli: bool = False) -> subprocess.Popen[bytes]:
        """`chunk-ocr worker`, or with arq_cli `arq app.worker.WorkerSettings` (arq imports the
        settings' module from its working directory, the backend folder)."""
        log = (tmp_path / f"{name}.log").open("wb")
        logs.append(log)
        command = ["arq", "app.worker.WorkerSettings"] if arq_cli else ["app.cli", "worker"]
        process = subprocess.Popen(
            [sys.executable, "-m", *command],
            env=env,
            cwd=REPO_ROOT / "backend" if arq_cli else REPO_ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    for log in logs:
        log.close()


def log_events(logs: list[Path], name: str) -> list[dict[str, object]]:
    """The structlog events called `name` in worker logs (JSON lines; other lines are skipped)."""
    found = []
    for log in logs:
        for line in log.read_text().splitlines():
            if line.startswith("{") and f'"{name}"' in line:
                event = json.loads(line)
                if event.get("event") == name:
                    found.append(event)
    return found


async def wait_for(
    predicate: Callable[[], Awaitable[T | None]], seconds: float, what: str, interval: float = 0.05
) -> T:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := await predicate():
            return value
        await asyncio.sleep(interval)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


@pytest.fixture
def server(api_settings: Settings) -> Iterator[str]:  # noqa: F811 (the fixture imported above)
    """The app served by uvicorn on a free loopback port, in its own thread and event loop."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        create_app(api_settings), host="127.0.0.1", port=port, log_level="warning", lifespan="on"
    )
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    for _ in range(200):
        if uv.started:
            break
        threading.Event().wait(0.05)
    assert uv.started, "uvicorn did not start"
    yield f"http://127.0.0.1:{port}"
    uv.should_exit = True
    thread.join(timeout=10)
