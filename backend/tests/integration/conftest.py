"""A pipeline on the real database and Redis, with a local blob store under tmp_path."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any
from uuid import UUID

import asyncpg
import pytest
from arq.connections import ArqRedis
from arq.worker import Worker

from app.core.config import Settings
from app.models.document import FinalizeLease
from app.services.ocr_chunk_service import OCRChunkService
from app.services.queue import QUEUE_NAME, ArqJobQueue
from app.services.runtime import Runtime, build_runtime
from app.worker import worker_settings
from tests.factories import make_matter


@pytest.fixture
def pipeline_settings(settings: Settings, tmp_path: Path) -> Settings:
    return settings.model_copy(
        update={
            "local_storage_dir": tmp_path / "storage",
            "ocr_engine": "text-layer",
            # text-layer chunks are these tests' cheap way through the workers: the planner leaves
            # them to the workers (test_read_at_planning and the API's tests turn reading on)
            "read_text_at_planning": False,
            "ocr_processes": 1,
            "heartbeat_interval_seconds": 0.2,
            "stale_chunk_threshold_seconds": 2.0,
        }
    )


@pytest.fixture
async def runtime(
    pipeline_settings: Settings, arq_redis: ArqRedis, pool: asyncpg.Pool
) -> AsyncIterator[Runtime]:
    runtime = await build_runtime(pipeline_settings, ArqJobQueue(arq_redis), worker_id="test-worker")
    yield runtime
    await runtime.close()


@pytest.fixture
async def matter_id(pool: asyncpg.Pool) -> UUID:
    return await make_matter(pool)


def burst_worker(arq_redis: ArqRedis, runtime: Runtime, **overrides: Any) -> Worker:
    """A real arq worker on the real Redis, running this process's runtime until the queue is empty."""
    options: dict[str, Any] = {
        "functions": worker_settings(runtime.settings)["functions"],
        "redis_pool": arq_redis,
        "queue_name": QUEUE_NAME,
        "burst": True,
        "poll_delay": 0,
        "handle_signals": False,
        "ctx": {"runtime": runtime},
        "max_jobs": 4,
    } | overrides
    return Worker(**options)


@asynccontextmanager
async def heartbeating(service: OCRChunkService, lease: FinalizeLease) -> AsyncIterator[None]:
    """Keep a finalize lease alive, as its live holder would, for the length of the block."""

    async def beat() -> None:
        while True:
            assert await service.heartbeat_finalize(lease)
            await asyncio.sleep(service.settings.heartbeat_interval_seconds)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task
