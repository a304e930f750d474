"""Shared fixtures: a real PostgreSQL (and Redis) for every test that needs one.

DATABASE_URL / REDIS_URL point at servers to use; without them the embedded
PostgreSQL and Redis from pip packages are started. Each test session creates
its own database on the server, applies the migrations once, and every test
starts from empty tables.

Under pytest-xdist (`make test` runs two processes) each process is a session of its own: its
own database, its own embedded servers, and the Redis database after REDIS_URL's by its number
(gw0 keeps REDIS_URL's, gw1 the next), set in its environment so the commands it starts share it.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import hypothesis
import pytest
from arq import create_pool
from arq.connections import ArqRedis

from app.core.config import Settings, load_settings
from app.core.logging import configure_logging
from app.db.migrations import migrate
from app.db.postgres import AsyncpgConnector, PostgresChunkRepository
from app.services.ocr_chunk_service import OCRChunkService
from app.services.queue import redis_settings


@pytest.fixture(autouse=True)
def _info_logging() -> None:
    """Each test starts with logging at INFO, to stderr. A test that runs the command line in
    this process leaves it at WARNING (`run` is quiet), and structlog's capture_logs keeps the
    level's filter: a later test in the same process then captured none of its INFO events."""
    configure_logging("INFO")


XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, ... under pytest-xdist
TEST_DATA_DIR = Path(
    os.environ.get("CHUNK_OCR_TEST_DATA_DIR", Path(tempfile.gettempdir()) / "chunk-ocr-tests")
) / (XDIST_WORKER or "main")
REDIS_DATABASES = 16  # a Redis server's default


def _worker_redis_url(url: str, worker: str) -> str:
    """REDIS_URL with its database moved on by the xdist worker's number (gw1: one after)."""
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    database = (base + int(worker.removeprefix("gw"))) % REDIS_DATABASES
    return urlunsplit(parts._replace(path=f"/{database}"))


if XDIST_WORKER and (_url := os.environ.get("REDIS_URL")):
    os.environ["REDIS_URL"] = _worker_redis_url(_url, XDIST_WORKER)

# Property tests explore new inputs on every local run; under CI they draw the same ones each
# time, so a submission is judged on its change, not on the inputs of the day.
hypothesis.settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    hypothesis.settings.load_profile("ci")


def with_database(dsn: str, database: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path=f"/{database}"))


@pytest.fixture(scope="session")
def postgres_server_dsn() -> str:
    """A PostgreSQL server we may create databases on."""
    if url := os.environ.get("DATABASE_URL"):
        return url
    from app.embedded import start_postgres

    return start_postgres(TEST_DATA_DIR).dsn


@pytest.fixture(scope="session")
def database_url(postgres_server_dsn: str) -> Iterator[str]:
    """A fresh database of this session with every migration applied."""
    name = f"chunk_ocr_test_{uuid.uuid4().hex[:12]}"

    async def create() -> None:
        conn = await asyncpg.connect(postgres_server_dsn)
        try:
            await conn.execute(f'create database "{name}"')
        finally:
            await conn.close()

    async def drop() -> None:
        conn = await asyncpg.connect(postgres_server_dsn)
        try:
            await conn.execute(f'drop database if exists "{name}" with (force)')
        finally:
            await conn.close()

    asyncio.run(create())
    dsn = with_database(postgres_server_dsn, name)
    asyncio.run(migrate(dsn, plain_postgres=True))
    yield dsn
    asyncio.run(drop())


@pytest.fixture
def settings(database_url: str, redis_url: str) -> Settings:
    return load_settings(
        database_url=database_url,
        redis_url=redis_url,
        environment="test",
        database_pool_max_size=20,
    )


@pytest.fixture
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    """A pool on the session database, with every table emptied first."""
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=20)
    await pool.execute(
        "truncate public.document_ocr_chunks, public.documents, public.matter_members,"
        " public.matters, auth.users cascade"
    )
    yield pool
    await pool.close()


@pytest.fixture
async def repository(pool: asyncpg.Pool) -> PostgresChunkRepository:
    return PostgresChunkRepository(AsyncpgConnector(pool))


@pytest.fixture
async def service(repository: PostgresChunkRepository, settings: Settings) -> OCRChunkService:
    return OCRChunkService(repository, settings)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A Redis the tests may flush: REDIS_URL (its database is emptied) or an embedded one."""
    if url := os.environ.get("REDIS_URL"):
        yield url
        return
    from app.embedded import start_redis

    server = start_redis(TEST_DATA_DIR / f"redis-{os.getpid()}")
    yield server.url
    server.server.shutdown()


@pytest.fixture
async def arq_redis(redis_url: str) -> AsyncIterator[ArqRedis]:
    redis = await create_pool(redis_settings(redis_url))
    await redis.flushdb()
    yield redis
    await redis.aclose()
