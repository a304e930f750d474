"""`arq app.worker.WorkerSettings` and `chunk-ocr worker` behave as one entry point: the same
one-line configuration errors, no guessed Redis, each log line once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.conftest import REPO_ROOT, run_cli

SERVICE_SETTINGS = ("DATABASE_URL", "REDIS_URL", "SUPABASE_URL", "SUPABASE_SERVICE_ROLE_KEY")


def _arq(env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arq", "app.worker.WorkerSettings"],
        cwd=REPO_ROOT / "backend",
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """No service settings, and a HOME of its own (nothing embedded may leak into the real one)."""
    base = {k: v for k, v in os.environ.items() if k not in SERVICE_SETTINGS}
    return base | {"HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"}


def _one_line(result: subprocess.CompletedProcess[str], prefix: str) -> str:
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(prefix), result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr.removeprefix(prefix).strip()


def test_arq_refuses_to_guess_a_redis(env: dict[str, str], database_url: str) -> None:
    message = _one_line(_arq(env | {"DATABASE_URL": database_url}), "arq app.worker.WorkerSettings: error: ")
    assert message.startswith("REDIS_URL is not set")


def test_arq_without_a_database_is_one_line(env: dict[str, str], redis_url: str) -> None:
    message = _one_line(_arq(env | {"REDIS_URL": redis_url}), "arq app.worker.WorkerSettings: error: ")
    assert message.startswith("DATABASE_URL is not set")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OCR_MAX_ATTEMPTS", "0"),
        ("HEARTBEAT_INTERVAL_SECONDS", "80"),
        ("SUPABASE_JWT_SECRET", "changeme"),
        ("GOOGLE_VISION_MAX_CONCURRENCY", "0"),
        ("GOOGLE_VISION_TIMEOUT_SECONDS", "-1"),
    ],
)
def test_a_bad_setting_is_the_same_line_under_both(
    env: dict[str, str], database_url: str, redis_url: str, name: str, value: str
) -> None:
    configured = env | {"DATABASE_URL": database_url, "REDIS_URL": redis_url, name: value}
    under_arq = _one_line(_arq(configured), "arq app.worker.WorkerSettings: error: ")
    under_cli = _one_line(run_cli(["worker"], configured, timeout=60), "chunk-ocr: error: ")
    assert under_arq == under_cli
    assert name in under_arq


@pytest.mark.timeout(120)
def test_arq_logs_each_line_once_as_json(
    env: dict[str, str], database_url: str, redis_url: str, arq_redis: object, tmp_path: Path
) -> None:
    log = tmp_path / "arq.log"
    with log.open("wb") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "arq", "app.worker.WorkerSettings"],
            cwd=REPO_ROOT / "backend",
            env=env | {"DATABASE_URL": database_url, "REDIS_URL": redis_url, "LOG_LEVEL": "INFO"},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait(lambda: '"worker_started"' in log.read_text(), 60, "the worker to start")
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=60) == 0
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    text = log.read_text()
    lines = text.splitlines()
    assert text.count("Starting worker for 3 functions") == 1, lines  # was twice: arq's handler and ours
    assert len(lines) == len(set(lines))  # nothing printed twice
    # arq's CLI configures its own console handler after importing us and logs its first lines
    # (connecting to Redis) through it before our start-up hook runs; from then on every line,
    # arq's job lines included, is one JSON event.
    started_at = next(i for i, line in enumerate(lines) if '"worker_started"' in line)
    events = [json.loads(line) for line in lines[started_at:]]
    assert [e["event"] for e in events].count("worker_started") == 1
    assert any(e.get("logger", "").startswith("arq") for e in events), lines


def _wait(predicate: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
