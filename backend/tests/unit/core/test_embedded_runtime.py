"""Where the embedded PostgreSQL's runtime dir goes when XDG_RUNTIME_DIR is not set: its
socket must fit a Unix socket's path (the e2e test in test_local_path starts a server)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from app.core.errors import ConfigurationError
from app.embedded import runtime_dir


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
