"""The composition root closes what it opened: after a later step fails, and on close()."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.services.composition import open_core, open_queued_core


async def our_connections(pool: asyncpg.Pool) -> int:
    """Connections our repository holds to this database (it names itself chunk-ocr)."""
    count: int = await pool.fetchval(
        "select count(*) from pg_stat_activity"
        " where datname = current_database() and application_name = 'chunk-ocr'"
    )
    return count


async def test_close_closes_the_database_pool(pipeline_settings: Settings, pool: asyncpg.Pool) -> None:
    before = await our_connections(pool)
    core = await open_queued_core(pipeline_settings)
    assert await our_connections(pool) > before
    assert await core.redis.ping()
    await core.close()
    assert await our_connections(pool) == before


async def test_storage_that_cannot_open_closes_the_database_first(
    pipeline_settings: Settings, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    in_the_way = tmp_path / "a-file"
    in_the_way.write_text("not a directory")
    before = await our_connections(pool)
    with pytest.raises(ConfigurationError, match=r"LOCAL_STORAGE_DIR .* cannot hold the bucket"):
        await open_core(pipeline_settings.model_copy(update={"local_storage_dir": in_the_way}))
    assert await our_connections(pool) == before


async def test_a_bad_redis_url_closes_the_database_and_storage(
    pipeline_settings: Settings, pool: asyncpg.Pool
) -> None:
    before = await our_connections(pool)
    with pytest.raises(ConfigurationError, match="REDIS_URL is not a valid Redis URL"):
        await open_queued_core(pipeline_settings.model_copy(update={"redis_url": "http://127.0.0.1:1/0"}))
    assert await our_connections(pool) == before
