"""Merge jobs run ahead of queued chunk jobs, however they were enqueued (arq runs due jobs in
order of their score)."""

from __future__ import annotations

from uuid import uuid4

from arq.connections import ArqRedis

from app.services.queue import QUEUE_NAME, ArqJobQueue, chunk_job_id, finalize_job_id


async def test_merge_jobs_are_ahead_of_chunk_jobs_queued_before_them(arq_redis: ArqRedis) -> None:
    queue = ArqJobQueue(arq_redis)
    chunk, merged, rescued = uuid4(), uuid4(), uuid4()
    assert await queue.enqueue_chunk(chunk, 1)
    assert await queue.enqueue_finalize(merged)
    assert await queue.rescue_finalize(rescued, generation=1)  # the sweep's path
    order = [member.decode() for member in await arq_redis.zrange(QUEUE_NAME, 0, -1)]
    assert set(order[:2]) == {finalize_job_id(merged), finalize_job_id(rescued)}
    assert order[2:] == [chunk_job_id(chunk, 1)]
