"""A worker's arq options are built from one Settings object, never from the environment, and
importing app.worker reads no settings at all."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from arq.cron import CronJob
from arq.worker import Function, get_kwargs

import app.worker
from app.core.config import Settings, get_settings, load_settings
from app.core.errors import ConfigurationError
from app.services.queue import FINALIZE_DOCUMENT_JOB, PROCESS_CHUNK_JOB, QUEUE_NAME, SWEEP_JOB
from app.worker import SETTINGS, startup, worker_settings

BACKEND = Path(__file__).resolve().parents[2]


@pytest.fixture
def broken_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An environment whose settings do not load: whatever reads it raises ConfigurationError."""
    monkeypatch.setenv("OCR_MAX_ATTEMPTS", "0")
    monkeypatch.setenv("CHUNK_JOB_TIMEOUT_SECONDS", "999")
    monkeypatch.setenv("REDIS_URL", "redis://environment.invalid:1/1")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def object_settings(**overrides: object) -> Settings:
    return load_settings(
        redis_url="redis://cache.example:6390/7",
        database_url="postgresql://u@db.example:5432/ocr",
        ocr_max_attempts=3,
        chunk_job_timeout_seconds=1234,
        sweep_interval_seconds=20,
        worker_grace_seconds=17,
        ocr_processes=3,
        **overrides,
    )


def test_options_come_from_the_settings_object(broken_environment: None) -> None:
    settings = object_settings(worker_max_jobs=9)
    with pytest.raises(ConfigurationError):  # the environment cannot be read: nothing below does
        get_settings()
    options = worker_settings(settings)

    functions: list[Function] = options["functions"]
    assert {f.name: f.timeout_s for f in functions} == {PROCESS_CHUNK_JOB: 1234, FINALIZE_DOCUMENT_JOB: 1234}
    (sweep,) = options["cron_jobs"]
    assert isinstance(sweep, CronJob)
    assert (sweep.name, sweep.second) == (SWEEP_JOB, {0, 20, 40})
    redis = options["redis_settings"]
    assert (redis.host, redis.port, redis.database) == ("cache.example", 6390, 7)
    assert options["max_jobs"] == 9
    assert options["job_completion_wait"] == 17
    assert options["queue_name"] == QUEUE_NAME
    assert options["ctx"][SETTINGS] is settings  # what the start-up hook builds the runtime from


def test_max_jobs_defaults_to_one_per_ocr_process_plus_one() -> None:
    assert worker_settings(object_settings())["max_jobs"] == 4


def test_the_options_are_arqs_worker_arguments() -> None:
    options = worker_settings(object_settings())
    assert get_kwargs(options) == options  # arq drops what its Worker does not take: nothing here


def test_worker_settings_for_arqs_command_line_are_the_environments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHUNK_JOB_TIMEOUT_SECONDS", "321")
    get_settings.cache_clear()
    try:
        options = get_kwargs(app.worker.WorkerSettings)
    finally:
        get_settings.cache_clear()
    assert {f.timeout_s for f in options["functions"]} == {321}
    assert options["ctx"][SETTINGS].chunk_job_timeout_seconds == 321


def test_importing_the_worker_reads_no_settings() -> None:
    """`import app.worker` in an environment whose settings are invalid succeeds; asking for
    WorkerSettings is what reads (and refuses) them."""
    env = os.environ | {"OCR_MAX_ATTEMPTS": "0"}
    imported = subprocess.run(
        [sys.executable, "-c", "import app.worker"], cwd=BACKEND, env=env, capture_output=True, text=True
    )
    assert imported.returncode == 0, imported.stderr
    asked = subprocess.run(
        [sys.executable, "-c", "import app.worker; app.worker.WorkerSettings"],
        cwd=BACKEND,
        env=env,
        capture_output=True,
        text=True,
    )
    assert asked.returncode == 1
    assert "ConfigurationError: invalid setting OCR_MAX_ATTEMPTS" in asked.stderr


def test_other_names_are_missing() -> None:
    with pytest.raises(AttributeError):
        app.worker.NoSuchSetting  # noqa: B018


async def test_startup_needs_the_settings_in_ctx() -> None:
    with pytest.raises(ConfigurationError, match="worker_settings"):
        await startup({"redis": None})
