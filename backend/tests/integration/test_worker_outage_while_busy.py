"""A worker whose job slots are all taken asks Redis for no job, so the first Redis call of an
outage can be its health record, which advertises its engines through ArqJobQueue: that call's
error is QueueUnavailableError, not one of redis-py's. The worker must wait the outage out as it
does any other, not end on it (it did: a flaky outage test traced to it)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from arq.connections import RedisSettings
from redis import exceptions as redis_errors
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from app.core.config import Settings
from app.services.queue import redis_settings
from app.worker import worker_settings
from app.worker_loop import REDIS, ChunkOcrWorker
from tests import servers
from tests.e2e.conftest import wait_for
from tests.servers import PrivateRedis

private_redis = servers.private_redis


def quick_to_fail(url: str) -> RedisSettings:
    """The worker's Redis settings with one retry a call and none between connects: an outage
    reaches the worker in well under a second instead of redis-py's nested 31 s."""
    settings = redis_settings(url)
    settings.retry = Retry(
        NoBackoff(),
        retries=1,
        supported_errors=(redis_errors.ConnectionError, redis_errors.TimeoutError, OSError),  # type: ignore[arg-type]
    )
    return settings


@asynccontextmanager
async def started_worker(
    settings: Settings, private_redis: PrivateRedis, tmp_path: Path
) -> AsyncIterator[tuple[ChunkOcrWorker, asyncio.Task[None]]]:
    """A ChunkOcrWorker on the private Redis (null engine, one OCR process, a health record every
    0.2 s), started; the worker and its main task, stopped after."""
    own = settings.model_copy(
        update={
            "redis_url": private_redis.url,
            "local_storage_dir": tmp_path / "storage",
            "ocr_engine": "null",
            "ocr_processes": 1,
        }
    )
    options = worker_settings(own) | {
        "redis_settings": quick_to_fail(private_redis.url),
        "health_check_interval": 0.2,
        "handle_signals": False,
    }
    worker = ChunkOcrWorker(**options)
    main = asyncio.create_task(worker.main())
    try:

        async def started() -> bool:
            assert not main.done(), main.exception() if main.done() else None
            return worker.ctx.get("runtime") is not None

        await wait_for(started, 60, "the worker to start")
        yield worker, main
    finally:
        main.cancel()
        await asyncio.gather(main, return_exceptions=True)
        await worker.close()


@pytest.mark.timeout(120)
async def test_a_busy_worker_outlives_an_outage_its_health_record_sees_first(
    settings: Settings, private_redis: PrivateRedis, tmp_path: Path
) -> None:
    async with started_worker(settings, private_redis, tmp_path) as (worker, main):
        await asyncio.sleep(0.5)  # its health record (engines advertised) every 0.2 s since
        worker.allow_pick_jobs = False  # as with every slot taken: no job is asked for
        private_redis.stop()

        async def noticed() -> bool:
            assert not main.done(), main.exception() if main.done() else None
            return not worker.health.is_up(REDIS)

        await wait_for(noticed, 30, "the worker to notice the outage")
        for _ in range(10):  # several health records into the outage: down all along
            await asyncio.sleep(0.1)
            assert not main.done(), main.exception() if main.done() else None
            assert not worker.health.is_up(REDIS)
        private_redis.start()

        async def restored() -> bool:
            assert not main.done(), main.exception() if main.done() else None
            return worker.health.is_up(REDIS)

        await wait_for(restored, 30, "the worker to see Redis back")
