"""The one composition root: what a process opens from its Settings, and how it is closed.

The API (app.main), the command line (app.local.stack) and the worker
(app.services.runtime) all open the service, the blob store and (API and
command line) the queue here. Each part is registered on one AsyncExitStack the
moment it is open, so when a later step fails the earlier ones are closed
before the error propagates, and close() closes everything in reverse order.
A caller that opens more (the worker's OCR processes) registers it on the same
stack.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

from arq.connections import ArqRedis

from app.core.config import Settings
from app.core.errors import OCRError, RepositoryUnavailableError
from app.core.health import Probe
from app.db.repository import ChunkRepository
from app.services.documents import Documents
from app.services.ocr_chunk_service import OCRChunkService, build_repository
from app.services.queue import REDIS_UNAVAILABLE, ArqJobQueue, connect_redis
from app.services.text_reader import TextReader
from app.storage.base import BlobStore
from app.storage.factory import build_blob_store

HEALTH_PROBE_KEY = "chunk-ocr:api-health-probe"  # written by /healthz, gone after HEALTH_PROBE_MS
HEALTH_PROBE_MS = 10_000
HEALTH_CHECK_SECONDS = 5.0  # what /healthz waits for each of the database and Redis

RepositoryFactory = Callable[[Settings], Awaitable[ChunkRepository]]


@dataclass
class Core:
    """The database service and the blob store, open."""

    settings: Settings
    service: OCRChunkService
    store: BlobStore
    exit: AsyncExitStack  # closes what was opened, last first

    async def close(self) -> None:
        await self.exit.aclose()


@dataclass
class QueuedCore(Core):
    """Core and a Redis connection pool with the job queue on it."""

    redis: ArqRedis
    queue: ArqJobQueue
    reader: TextReader  # the planner's text pass; its OCR processes start when first needed
    _database_probe: Probe = field(init=False)
    _redis_probe: Probe = field(init=False)

    def __post_init__(self) -> None:
        self._database_probe = Probe(self.service.ping)
        # a write, not a ping: a Redis at its maxmemory answers pings and refuses every job
        self._redis_probe = Probe(lambda: self.redis.set(HEALTH_PROBE_KEY, b"1", px=HEALTH_PROBE_MS))

    @property
    def documents(self) -> Documents:
        """The documents application service on these parts (what the entry points call)."""
        return Documents(self.service, self.store, self.queue, self.reader)

    async def health(self) -> dict[str, str]:
        """Each of the database and Redis: "ok", or why not (for the API's /healthz). Both are
        asked at once, and one that has not answered in HEALTH_CHECK_SECONDS is not "ok": their
        own timeouts (DATABASE_TIMEOUT_SECONDS, Redis's tries) are longer than a load balancer
        waits for a health check."""
        database, redis = await asyncio.gather(
            self._database_probe(HEALTH_CHECK_SECONDS), self._redis_probe(HEALTH_CHECK_SECONDS)
        )
        return {"database": _database_state(database), "redis": _redis_state(redis)}


def _database_state(error: BaseException | None) -> str:
    if error is None:
        return "ok"
    if isinstance(error, OCRError):
        return error.code
    if isinstance(error, TimeoutError):
        return RepositoryUnavailableError.code
    raise error


def _redis_state(error: BaseException | None) -> str:
    if error is None:
        return "ok"
    if isinstance(error, REDIS_UNAVAILABLE):  # redis-py's ConnectionError is not the built-in one
        return type(error).__name__
    raise error


async def open_core(settings: Settings, *, repository: RepositoryFactory = build_repository) -> Core:
    """Connect the repository (through `repository`), then open the blob store."""
    exit = AsyncExitStack()
    try:
        service = OCRChunkService(await repository(settings), settings)
        exit.push_async_callback(service.close)
        store = await build_blob_store(settings)
        exit.push_async_callback(store.close)
    except BaseException:
        await exit.aclose()
        raise
    return Core(settings, service, store, exit)


async def open_queued_core(settings: Settings, *, wait_for_redis: bool = True) -> QueuedCore:
    """open_core, then Redis (QueueUnavailableError when it does not answer; without
    wait_for_redis, a pool that connects when Redis is back: see connect_redis)."""
    core = await open_core(settings)
    try:
        redis = await connect_redis(
            settings.redis_url, wait=wait_for_redis, reply_timeout=settings.redis_timeout_seconds
        )
    except BaseException:
        await core.close()
        raise
    core.exit.push_async_callback(redis.aclose)
    reader = TextReader(settings)
    core.exit.push_async_callback(reader.close)
    return QueuedCore(core.settings, core.service, core.store, core.exit, redis, ArqJobQueue(redis), reader)
