"""A real worker built from a Settings object runs on that object alone: its start-up hook, its OCR
processes and its engine probe never read the environment (here, one whose settings do not load)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from arq.connections import ArqRedis

from app.core.config import Settings, get_settings
from app.core.errors import ConfigurationError
from app.worker import worker_settings
from app.worker_loop import ChunkOcrWorker


@pytest.fixture
def broken_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    get_settings.cache_clear()
    monkeypatch.setenv("OCR_MAX_ATTEMPTS", "0")
    monkeypatch.setenv("REDIS_URL", "redis://environment.invalid:1/1")
    monkeypatch.delenv("GOOGLE_VISION_INSECURE", raising=False)
    yield
    get_settings.cache_clear()


@pytest.mark.timeout(120)
async def test_a_worker_runs_on_the_settings_it_was_built_with(
    settings: Settings, arq_redis: ArqRedis, tmp_path: Path, broken_environment: None
) -> None:
    with pytest.raises(ConfigurationError):
        get_settings()
    own = settings.model_copy(
        update={"local_storage_dir": tmp_path / "storage", "ocr_engine": "null", "ocr_processes": 1}
    )
    worker = ChunkOcrWorker(**worker_settings(own), burst=True, handle_signals=False)
    try:
        await worker.main()  # the start-up hook, the sweep at start-up, then an empty queue
        runtime = worker.ctx["runtime"]
        assert runtime.settings is own
        await runtime.probe
    finally:
        await worker.close()
    # the probe built every engine with `own`: it read nothing from the environment, or it would
    # have failed on its settings and advertised nothing
    assert set(runtime.engines.available) == {"auto", "tesseract", "text-layer", "null"}
    assert "credentials" in runtime.engines.reasons["google-vision"]
