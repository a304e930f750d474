"""A `chunk-ocr run`'s reservations live as long as the run: renewed while it goes on, handed
back (with its private queue) when it ends."""

from __future__ import annotations

import asyncio
from uuid import uuid4

import asyncpg
from arq.connections import ArqRedis

from app.core.config import Settings
from app.local.private_run import PrivateRun
from app.local.stack import open_stack
from tests.factories import make_document


async def test_a_run_renews_its_reservations_and_hands_them_back_as_it_ends(
    pipeline_settings: Settings, pool: asyncpg.Pool, arq_redis: ArqRedis
) -> None:
    assert pipeline_settings.stale_chunk_threshold_seconds == 2.0  # renewed every 2/3 s
    stack = await open_stack(pipeline_settings)
    try:
        run = PrivateRun.open(stack)
        document_id = await make_document(pool)
        await stack.service.reserve_document(document_id, run.run_id)
        await run.queue.enqueue_chunk(uuid4(), 1)
        first = await pool.fetchval("select reserved_until from document_ocr_reservations")
        await asyncio.sleep(3.0)  # longer than a reservation lasts unrenewed
        renewed = await pool.fetchrow(
            "select reserved_until, reserved_until > now() as live, run_id from document_ocr_reservations"
        )
        assert renewed["reserved_until"] > first
        assert renewed["live"]
        assert renewed["run_id"] == run.run_id
        assert 0 < await arq_redis.ttl(run.queue.queue_name) <= 3600  # a killed run's queue goes

        await run.close()
        assert await pool.fetchval("select count(*) from document_ocr_reservations") == 0
        assert not await arq_redis.exists(run.queue.queue_name)
    finally:
        await stack.close()
