"""The private servers of tests.servers stop and start at will: Redis loses its keys, PostgreSQL keeps its rows."""

from __future__ import annotations

import asyncpg
import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from tests import servers
from tests.servers import PrivatePostgres, PrivateRedis

private_redis = servers.private_redis
private_postgres = servers.private_postgres


async def test_redis_stop_refuses_connections_and_restart_loses_keys(private_redis: PrivateRedis) -> None:
    client = aioredis.from_url(private_redis.url)
    try:
        await client.set("kept?", "no")
        private_redis.stop()
        assert not private_redis.is_running
        with pytest.raises(RedisConnectionError):
            await client.ping()

        private_redis.start()
        assert await client.ping()
        assert await client.get("kept?") is None
    finally:
        await client.aclose()


async def test_postgres_stop_refuses_connections_and_restart_keeps_rows(
    private_postgres: PrivatePostgres,
) -> None:
    conn = await asyncpg.connect(private_postgres.dsn)
    try:
        await conn.execute("insert into public.matters (name) values ('kept')")
    finally:
        await conn.close()

    private_postgres.stop(mode="immediate")
    assert not private_postgres.is_running
    with pytest.raises(ConnectionRefusedError):
        await asyncpg.connect(private_postgres.dsn, timeout=5)

    private_postgres.start()
    conn = await asyncpg.connect(private_postgres.dsn)
    try:
        assert await conn.fetchval("select count(*) from public.matters where name = 'kept'") == 1
    finally:
        await conn.close()
