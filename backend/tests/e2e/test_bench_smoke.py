"""Every benchmark runs on tiny inputs and prints its table (speed is never asserted here)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.e2e.conftest import REPO_ROOT

BENCHMARKS = [
    ("scanned", ["--pages", "2", "--repeat", "1"], 3),
    ("born_digital", ["--pages", "40", "--repeat", "1"], 1),
    ("claims", ["--chunks", "300", "--clients", "4", "--repeat", "1"], 1),
    ("split", ["--pages", "40", "--repeat", "1"], 1),
    ("recovery", ["--pages", "2"], 2),
    ("memory", ["--chunks", "4", "--pages", "40"], 2),
    ("progress", ["--pollers", "4", "--seconds", "1"], 2),
]


@pytest.mark.timeout(300)
@pytest.mark.parametrize(("name", "args", "rows"), BENCHMARKS, ids=[b[0] for b in BENCHMARKS])
def test_benchmark_runs_and_prints_its_table(
    name: str, args: list[str], rows: int, postgres_server_dsn: str, redis_url: str, arq_redis: object
) -> None:
    env = {**os.environ, "DATABASE_URL": postgres_server_dsn, "REDIS_URL": redis_url, "LOG_LEVEL": "WARNING"}
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{name}", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if line.strip() and not line.startswith("{")]
    body = [line for line in lines if not line.startswith("benchmark")]
    assert len(body) >= rows, done.stdout
    assert all(any(ch.isdigit() for ch in line) for line in body)
