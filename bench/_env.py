"""Services for benchmark runs: a scratch database and a Redis, started before timing begins."""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

from bench._db import scratch_database


@asynccontextmanager
async def services() -> AsyncIterator[dict[str, str]]:
    """Environment for `chunk-ocr` with PostgreSQL and Redis already running."""
    async with scratch_database() as dsn:
        keep = None
        redis_url = os.environ.get("REDIS_URL")
        if redis_url is None:
            from app.embedded import start_redis

            keep = start_redis(Path(tempfile.mkdtemp(prefix="chunk-ocr-bench-redis-")))
            redis_url = keep.url
        storage = tempfile.mkdtemp(prefix="chunk-ocr-bench-storage-")
        try:
            yield {**os.environ, "DATABASE_URL": dsn, "REDIS_URL": redis_url, "LOCAL_STORAGE_DIR": storage}
        finally:
            shutil.rmtree(storage, ignore_errors=True)
            if keep is not None:
                keep.server.shutdown()


def chunk_ocr(*args: str) -> list[str]:
    return [sys.executable, "-m", "app.cli", *args]


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(command[:4])}... failed ({done.returncode}): {done.stderr.strip()[-500:]}"
        )
    return elapsed


def median_of(repeat: int, run: Callable[[], float], *, warmup: int = 0) -> float:
    """Median of `repeat` timed runs after `warmup` untimed ones (page cache, .pyc files, the
    tesseract model and the database's buffers warm for every side alike)."""
    return medians_interleaved(repeat, [run], warmup=warmup)[0]


def medians_interleaved(repeat: int, runs: list[Callable[[], float]], *, warmup: int = 0) -> list[float]:
    """The median of each run's `repeat` timings, the runs taken in turn (one of each, then the
    next round) after `warmup` untimed rounds: a machine that slows down for a while (a busy
    neighbour) slows every side of a round alike, so the ratios hold where medians taken one
    side after the other would not."""
    for _ in range(warmup):
        for run in runs:
            run()
    timings: list[list[float]] = [[] for _ in runs]
    for _ in range(repeat):
        for timing, run in zip(timings, runs, strict=True):
            timing.append(run())
    return [statistics.median(timing) for timing in timings]


def ocrmypdf_command() -> list[str]:
    """ocrmypdf as the lock file pins it: the `bench` dependency group, which `uv sync` (`make
    python-deps`) installs with the rest of the dev group, so nothing is installed while a
    benchmark runs. Run with this interpreter, whose environment `make python-deps` compiled to
    bytecode, so neither side pays for compiling its imports."""
    if importlib.util.find_spec("ocrmypdf") is None:
        raise SystemExit("ocrmypdf is not installed: run `make python-deps` (uv sync, bench group)")
    return [sys.executable, "-m", "ocrmypdf"]


NAME_WIDTH = 48  # the benchmark column of every table row


def row(name: str, ours: float, baseline: float, unit: str, target: str) -> str:
    ratio = ours / baseline if baseline else float("nan")
    return f"{name:<{NAME_WIDTH}}{ours:>10.2f}{baseline:>10.2f} {unit:<8}{ratio:>7.2f}  {target}"


HEADER = f"{'benchmark':<{NAME_WIDTH}}{'ours':>10}{'baseline':>10} {'unit':<8}{'ratio':>7}  target"


def choice_list(choices: Iterable[str]) -> Callable[[str], list[str]]:
    """An argparse type: a comma-separated list of at least one of choices (`--options a,b`)."""
    known = tuple(choices)

    def parse(value: str) -> list[str]:
        names = [name for name in value.split(",") if name]
        unknown = [name for name in names if name not in known]
        if unknown or not names:
            raise argparse.ArgumentTypeError(
                f"{', '.join(unknown) or 'nothing named'}: choose from {', '.join(known)}"
            )
        return names

    return parse
