"""A worker's processes end with it: forkserver, OCR processes, the tesseract they run, resource tracker.

Real `chunk-ocr worker` and `arq app.worker.WorkerSettings` processes. Only the worker's own PID
is signalled, never its process group: what matters is what outlives the worker alone (as when
the kernel's OOM killer or an orchestrator kills just that PID).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import asyncpg
import psutil
import pytest

from app.pdf.samples import make_scanned_pdf
from tests.e2e.conftest import REPO_ROOT, wait_for
from tests.e2e.test_recovery import processing_by_someone, submit

OCR_PROCESSES = 2
WORKER = {
    "OCR_PROCESSES": str(OCR_PROCESSES),
    "WORKER_MAX_JOBS": str(OCR_PROCESSES + 1),
    "WORKER_GRACE_SECONDS": "1",
}
GONE_WITHIN = 5.0  # seconds after the worker ends (the bound)

Start = Callable[[dict[str, str], str], subprocess.Popen[bytes]]


@pytest.fixture
def watched() -> Iterator[list[psutil.Process]]:
    """Processes seen in a worker's tree. Those still alive at the end are killed, so a failing run
    leaves no orphans on a machine others test on too."""
    seen: list[psutil.Process] = []
    yield seen
    for process in seen:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()  # psutil checks the PID was not reused


@pytest.fixture
def start_arq(tmp_path: Path) -> Iterator[Start]:
    """Start the arq command itself (not `chunk-ocr worker`); whatever still runs at the end is killed."""
    started: list[tuple[subprocess.Popen[bytes], IO[bytes]]] = []

    def start(env: dict[str, str], name: str) -> subprocess.Popen[bytes]:
        log = (tmp_path / f"{name}.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "arq", "app.worker.WorkerSettings"],
            env=env,
            cwd=REPO_ROOT / "backend",  # arq imports the settings' module from the working directory
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        started.append((process, log))
        return process

    yield start
    for process, log in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _describe(processes: list[psutil.Process]) -> list[str]:
    described = []
    for process in processes:
        with contextlib.suppress(psutil.Error):
            described.append(f"{process.pid} ppid={process.ppid()} {' '.join(process.cmdline())[:120]}")
    return described


def _ocr_processes(worker: int, tree: list[psutil.Process]) -> int:
    """How many OCR processes the worker's forkserver has (its children share its command line)."""
    for process in tree:
        with contextlib.suppress(psutil.Error):
            if process.ppid() == worker and "multiprocessing.forkserver" in " ".join(process.cmdline()):
                return len(process.children())
    raise AssertionError(f"no forkserver under the worker: {_describe(tree)}")


async def _survivors(tree: list[psutil.Process]) -> list[psutil.Process]:
    """Those of tree still alive GONE_WITHIN seconds from now (fewer: as soon as none is)."""
    deadline = time.monotonic() + GONE_WITHIN
    while True:
        alive = [process for process in tree if _alive(process)]
        if not alive or time.monotonic() > deadline:
            return alive
        await asyncio.sleep(0.05)


def _exit_code(process: subprocess.Popen[bytes], within: float) -> int | str:
    """The process's exit code, or (killed then) what it was doing when it did not exit in time:
    the assertion shows it beside the worker's log."""
    try:
        return process.wait(timeout=within)
    except subprocess.TimeoutExpired:
        tree = _describe(psutil.Process(process.pid).children(recursive=True))
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        return f"still running {within} s after SIGTERM, with {tree}"


async def _started(process: subprocess.Popen[bytes], log: Path) -> bool:
    """True once the worker logged worker_started: its OCR processes exist and are warmed up."""
    text = await asyncio.to_thread(log.read_text)
    assert process.poll() is None, text
    return '"worker_started"' in text


async def _tree_reading(pid: int) -> list[psutil.Process] | None:
    """The worker's tree once one of its OCR processes is reading a page (tesseract runs inside
    it): past half a second of CPU, more than its warm-up (forked, it imports nothing; loading
    tesseract's model is about 0.15 s)."""
    tree = psutil.Process(pid).children(recursive=True)
    for process in tree:
        with contextlib.suppress(psutil.Error):
            if "multiprocessing.forkserver" in " ".join(process.cmdline()) and process.ppid() != pid:
                times = process.cpu_times()
                if times.user + times.system > 0.5:
                    return tree
    return None


@pytest.mark.timeout(60)
async def test_kill_9_of_a_busy_worker_leaves_none_of_its_processes(
    cli_env: dict[str, str],
    start_worker: Start,
    pool: asyncpg.Pool,
    tmp_path: Path,
    watched: list[psutil.Process],
) -> None:
    env = cli_env | WORKER
    make_scanned_pdf(tmp_path / "scan.pdf", pages=4, seed=13)
    document_id = submit(env, tmp_path / "scan.pdf", chunk_pages=2)
    worker = start_worker(env, "victim")
    await wait_for(lambda: processing_by_someone(pool, document_id), 30, "a chunk in processing")
    tree = await wait_for(lambda: _tree_reading(worker.pid), 20, "an OCR process reading a page")
    watched += tree
    assert _ocr_processes(worker.pid, tree) == OCR_PROCESSES, _describe(tree)

    os.kill(worker.pid, signal.SIGKILL)  # the worker alone, mid-chunk
    worker.wait()

    left = await _survivors(tree)
    assert not left, f"alive {GONE_WITHIN} s after kill -9 of the worker: {_describe(left)}"


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("command", "runs"), [("arq", 3), ("chunk-ocr worker", 1)])
async def test_sigterm_of_an_idle_worker_leaves_none_of_its_processes(
    command: str,
    runs: int,
    cli_env: dict[str, str],
    start_arq: Start,
    start_worker: Start,
    tmp_path: Path,
    watched: list[psutil.Process],
) -> None:
    # Three arq runs: the issue saw orphans after 3 of 5.
    start = start_arq if command == "arq" else start_worker
    for run in range(runs):
        name = f"{command.replace(' ', '-')}-{run}"
        worker = start(cli_env | WORKER, name)
        await wait_for(lambda: _started(worker, tmp_path / f"{name}.log"), 30, f"{name} to start")  # noqa: B023
        tree = psutil.Process(worker.pid).children(recursive=True)
        watched += tree
        assert _ocr_processes(worker.pid, tree) == OCR_PROCESSES, _describe(tree)

        worker.send_signal(signal.SIGTERM)
        assert _exit_code(worker, 20) == 0, (tmp_path / f"{name}.log").read_text()

        left = await _survivors(tree)
        assert not left, f"run {run}: alive {GONE_WITHIN} s after the worker exited: {_describe(left)}"
