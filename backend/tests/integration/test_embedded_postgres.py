"""The embedded PostgreSQL started again after it was killed (app.embedded.revive_postgres), in a
process of its own, as a worker on the embedded servers does it in an outage."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers import process_runs

REPO_ROOT = Path(__file__).resolve().parents[3]

# Starts the embedded PostgreSQL of argv[1], kills it, starts it again, and reports.
KILL_AND_REVIVE = """
import asyncio, json, os, signal, sys, time
from pathlib import Path
import asyncpg, psutil
from app.embedded import revive_postgres, start_postgres

data_dir = Path(sys.argv[1])
first = start_postgres(data_dir)
left_alone = revive_postgres(data_dir) is None  # it answers: nothing to do
old = first.server.get_pid()
os.kill(old, signal.SIGKILL)
deadline = time.monotonic() + 20
while time.monotonic() < deadline:  # gone, or a zombie where nothing reaps orphans
    try:
        if psutil.Process(old).status() == psutil.STATUS_ZOMBIE:
            break
    except psutil.NoSuchProcess:
        break
    time.sleep(0.1)
revived = revive_postgres(data_dir)

async def answer(dsn):
    connection = await asyncpg.connect(dsn, timeout=10)
    try:
        return await connection.fetchval("select 41 + 1")
    finally:
        await connection.close()

print(json.dumps({
    "left_alone": left_alone,
    "old": old,
    "new": revived.server.get_pid() if revived else None,
    "same_dsn": revived is not None and revived.dsn == first.dsn,
    "answer": asyncio.run(answer(first.dsn)),
}), flush=True)
"""


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A short path: the server's socket goes in its pgdata, as on a laptop."""
    path = Path(tempfile.mkdtemp(prefix="chunk-ocr-pg-"))
    path.chmod(0o755)  # under root, the server runs as another user, who must reach pgdata
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.timeout(120)
def test_a_killed_embedded_postgres_is_started_again_on_its_socket(data_dir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "DATABASE_URL")}
    done = subprocess.run(
        [sys.executable, "-c", KILL_AND_REVIVE, str(data_dir)],
        cwd=REPO_ROOT / "backend",
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["left_alone"] is True
    assert report["new"] not in (None, report["old"])
    assert report["same_dsn"] is True  # the clients on its URL reconnect to it
    assert report["answer"] == 42
    # and the process that started it again stopped it as it exited, as the last one attached
    assert not (data_dir / "pgdata" / "postmaster.pid").exists()
    assert not process_runs(report["new"])


def test_a_data_dir_that_is_gone_is_not_started_again_as_a_new_empty_cluster(tmp_path: Path) -> None:
    from app.core.errors import ConfigurationError
    from app.embedded import revive_postgres

    with pytest.raises(ConfigurationError, match=r"data under .* is gone: not started again$"):
        revive_postgres(tmp_path)
    assert not (tmp_path / "pgdata").exists()


# Starts the embedded PostgreSQL of argv[1], kills it, waits until it is gone (or a zombie, where
# nothing reaps orphans), says so, and exits without starting it again.
KILL_AND_LEAVE = """
import os, signal, sys, time
from pathlib import Path
import psutil
from app.embedded import start_postgres

server = start_postgres(Path(sys.argv[1])).server
pid = server.get_pid()
os.kill(pid, signal.SIGKILL)
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    try:
        if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            break
    except psutil.NoSuchProcess:
        break
    time.sleep(0.1)
print("killed", flush=True)
"""


@pytest.mark.timeout(120)
def test_a_process_whose_embedded_postgres_was_killed_exits_at_once(data_dir: Path) -> None:
    """Nothing to stop at exit: `pg_ctl stop` waited 60 s on the killed server's zombie."""
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "DATABASE_URL")}
    with subprocess.Popen(
        [sys.executable, "-c", KILL_AND_LEAVE, str(data_dir)],
        cwd=REPO_ROOT / "backend",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        assert process.stdout.readline().strip() == "killed", process.stderr.read()[-3000:]
        killed = time.monotonic()
        assert process.wait(timeout=100) == 0, process.stderr.read()[-3000:]
        assert time.monotonic() - killed < 15
        assert "Traceback" not in process.stderr.read()
