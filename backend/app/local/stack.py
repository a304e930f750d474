"""The services `chunk-ocr` needs on a laptop: PostgreSQL, Redis, storage, the queue.

DATABASE_URL / REDIS_URL are used when set. Otherwise the embedded servers
from pip packages start under the data directory and the migrations are
applied to the embedded database (with the plain-PostgreSQL stand-ins).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import asyncpg
from arq import create_pool
from arq.connections import ArqRedis

from app.core.config import Settings
from app.core.errors import ConfigurationError, RepositoryUnavailableError
from app.db.migrations import migrate
from app.embedded import start_postgres, start_redis
from app.local.workers import worker_env
from app.services.ocr_chunk_service import OCRChunkService, build_repository
from app.services.queue import ArqJobQueue, redis_settings
from app.storage.base import BlobStore
from app.storage.factory import build_blob_store

CLI_MATTER_NAME = "chunk-ocr"


@dataclass
class LocalStack:
    settings: Settings  # with database_url and redis_url filled in
    service: OCRChunkService
    store: BlobStore
    redis: ArqRedis
    queue: ArqJobQueue
    _keep: list[Any] = field(default_factory=list)  # embedded servers live as long as the stack

    async def close(self) -> None:
        await self.redis.aclose()
        await self.store.close()
        await self.service.close()

    def worker_env(self) -> dict[str, str]:
        return worker_env(self.settings)


async def open_stack(settings: Settings) -> LocalStack:
    keep: list[Any] = []
    updates: dict[str, Any] = {}
    if settings.database_url is None and not settings.supabase_configured:
        postgres = start_postgres(settings.data_dir)
        keep.append(postgres.server)
        await migrate(postgres.dsn, plain_postgres=True)
        updates["database_url"] = postgres.dsn
    elif settings.database_url is not None:
        await _check_schema(settings.database_url)
    if settings.redis_url is None:
        redis_server = start_redis(settings.data_dir)
        keep.append(redis_server.server)
        updates["redis_url"] = redis_server.url
    settings = settings.model_copy(update=updates)
    service = OCRChunkService(await build_repository(settings), settings)
    store = await build_blob_store(settings)
    try:
        redis = await create_pool(redis_settings(settings.redis_url))
    except (OSError, ConnectionError) as exc:
        raise RepositoryUnavailableError(f"cannot connect to Redis: {exc}") from exc
    return LocalStack(settings, service, store, redis, ArqJobQueue(redis), keep)


async def _check_schema(dsn: str) -> None:
    try:
        conn = await asyncpg.connect(dsn, statement_cache_size=0)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        raise RepositoryUnavailableError(f"cannot connect to the database: {exc}") from exc
    try:
        found = await conn.fetchval("select to_regclass('public.document_ocr_chunks')")
    finally:
        await conn.close()
    if found is None:
        raise ConfigurationError("the database has no chunk-ocr schema; run `chunk-ocr db migrate` first")


async def cli_matter(stack: LocalStack, matter_id: UUID | None) -> UUID:
    """The matter documents from the command line belong to: given, or one shared CLI matter."""
    if matter_id is not None:
        return matter_id
    return await stack.service.get_or_create_matter(CLI_MATTER_NAME)
