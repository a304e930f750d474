"""Where the embedded PostgreSQL's runtime dir goes when XDG_RUNTIME_DIR is not set: its
socket must fit a Unix socket's path (the e2e test in test_local_path starts a server)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.errors import ConfigurationError
from app.embedded import redis_socket, runtime_dir


def test_a_usual_data_dir_keeps_its_runtime_dir_inside() -> None:
    assert runtime_dir(Path("/home/ada/.cache/chunk-ocr")) == Path("/home/ada/.cache/chunk-ocr/run")


def test_a_deep_data_dir_gets_a_runtime_dir_of_this_users_in_the_temp_dir(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", "/tmp")
    deep = Path("/srv", "x" * 50, "y" * 50)
    chosen = runtime_dir(deep)
    assert chosen == Path(f"/tmp/chunk-ocr-{os.getuid()}")
    socket = chosen / "python_PostgresServer" / "0123456789" / ".s.PGSQL.5432"
    assert len(str(socket)) < 104  # what macOS allows, Linux 108


def test_a_temp_dir_too_deep_as_well_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", "/" + "t" * 90)
    with pytest.raises(ConfigurationError, match="set DATA_DIR or TMPDIR to a shorter path, or DATABASE_URL"):
        runtime_dir(Path("/srv", "x" * 50, "y" * 50))


@pytest.fixture
def short_temp_dir() -> Iterator[Path]:
    """A directory straight in the temp dir: tmp_path, under pytest-xdist, is too deep to hold the
    fallback socket, which is what the test below is about."""
    with tempfile.TemporaryDirectory(prefix="cr-") as path:
        yield Path(path)


def test_the_embedded_redis_listens_in_its_data_dir(tmp_path: Path) -> None:
    assert redis_socket(tmp_path) == tmp_path / "redis.sock"


def test_a_deep_data_dir_gets_a_redis_socket_of_its_own_in_the_temp_dir(
    monkeypatch: pytest.MonkeyPatch, short_temp_dir: Path
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(short_temp_dir))
    first, second = (Path("/srv", "x" * 50, "y" * 50, name) for name in ("a", "b"))
    socket = redis_socket(first)
    assert socket.parent == short_temp_dir / f"chunk-ocr-redis-{os.getuid()}"
    assert socket.parent.stat().st_mode & 0o777 == 0o700
    assert len(str(socket)) < 104
    assert redis_socket(first) == socket  # the same data dir, the same socket: a restart keeps the URL
    assert redis_socket(second) != socket


def test_a_temp_dir_too_deep_for_the_redis_socket_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", "/" + "t" * 90)
    with pytest.raises(ConfigurationError, match="set DATA_DIR or TMPDIR to a shorter path, or REDIS_URL"):
        redis_socket(Path("/srv", "x" * 50, "y" * 50))
