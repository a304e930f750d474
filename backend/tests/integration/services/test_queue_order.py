"""Merge jobs run ahead of queued chunk jobs, however they were enqueued (arq runs due jobs in
order of their score), and chunk jobs are due by the clock of the worker that polls."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from uuid import uuid4

from arq.connections import ArqRedis

from app.models.ocr_chunk import ChunkStatus, DocumentOCRChunk
from app.services.queue import QUEUE_NAME, ArqJobQueue, chunk_job_id, enqueue_next_attempts, finalize_job_id


async def test_merge_jobs_are_ahead_of_chunk_jobs_queued_before_them(arq_redis: ArqRedis) -> None:
    queue = ArqJobQueue(arq_redis)
    chunk, merged, rescued = uuid4(), uuid4(), uuid4()
    assert await queue.enqueue_chunk(chunk, 1)
    assert await queue.enqueue_finalize(merged)
    assert await queue.rescue_finalize(rescued, generation=1)  # the sweep's path
    order = [member.decode() for member in await arq_redis.zrange(QUEUE_NAME, 0, -1)]
    assert set(order[:2]) == {finalize_job_id(merged), finalize_job_id(rescued)}
    assert order[2:] == [chunk_job_id(chunk, 1)]


async def test_a_chunk_is_due_after_its_rows_delay_by_the_polling_clock(arq_redis: ArqRedis) -> None:
    """The database's clock 5 minutes ahead of this process's: a chunk due now (a new one) is due
    now here, and one with a 30 s backoff in 30 s, not 5 minutes later (a worker whose clock ran
    behind the database's left every chunk queued and not due for the whole difference)."""
    queue = ArqJobQueue(arq_redis)
    database_now = datetime.now(UTC) + timedelta(minutes=5)
    new, backing_off = (_row(database_now, backoff) for backoff in (timedelta(0), timedelta(seconds=30)))

    before_ms = time.time() * 1000
    assert await enqueue_next_attempts(queue, [new, backing_off])
    after_ms = time.time() * 1000

    due_new = await arq_redis.zscore(QUEUE_NAME, chunk_job_id(new.id, 1))
    due_later = await arq_redis.zscore(QUEUE_NAME, chunk_job_id(backing_off.id, 1))
    assert due_new is not None
    assert due_later is not None
    assert before_ms - 1 <= due_new <= after_ms + 1
    assert before_ms + 30_000 - 1 <= due_later <= after_ms + 30_000 + 1


def _row(database_now: datetime, backoff: timedelta) -> DocumentOCRChunk:
    """A pending chunk row as the database returns it, updated at database_now."""
    return DocumentOCRChunk(
        id=uuid4(),
        matter_id=uuid4(),
        document_id=uuid4(),
        chunk_index=0,
        page_start=1,
        page_end=1,
        status=ChunkStatus.PENDING,
        attempt_count=0,
        engine="tesseract",
        next_attempt_at=database_now + backoff,
        created_at=database_now,
        updated_at=database_now,
    )
