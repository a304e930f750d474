"""Stale sweep and retry, decided by the database's clock."""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

import asyncpg

from app.models.document import DocumentStatus
from app.models.ocr_chunk import ChunkStatus, DocumentOCRChunk
from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import make_document, ranges


async def processing_chunks(service: OCRChunkService, pool: asyncpg.Pool, n: int) -> list[DocumentOCRChunk]:
    document_id = await make_document(pool, page_count=n)
    await service.create_chunks_for_document(document_id, ranges(n, 1))
    claimed = [await service.claim_next_chunk(f"worker-{i}", document_id) for i in range(n)]
    assert all(claimed)
    return [c for c in claimed if c is not None]


async def age_heartbeat(pool: asyncpg.Pool, chunk_id: UUID, seconds: float) -> None:
    """Set the heartbeat `seconds` before the database's now(), whatever this machine's clock says."""
    await pool.execute(
        "update document_ocr_chunks set heartbeat_at = now() - make_interval(secs => $2) where id = $1",
        chunk_id,
        seconds,
    )


async def test_sweep_fails_only_chunks_past_the_threshold(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    assert service.settings.stale_chunk_threshold_seconds == 90
    fresh, alive, dead = await processing_chunks(service, pool, 3)
    await age_heartbeat(pool, alive.id, 89)
    await age_heartbeat(pool, dead.id, 91)

    assert [c.id for c in await service.detect_stale_chunks()] == [dead.id]
    swept = await service.sweep_stale_chunks()
    assert [c.id for c in swept] == [dead.id]
    assert swept[0].status is ChunkStatus.FAILED
    assert swept[0].error_code == "worker_timeout"
    assert swept[0].error_retryable is True

    assert (await service.get_chunk(alive.id)).status is ChunkStatus.PROCESSING
    assert (await service.get_chunk(fresh.id)).status is ChunkStatus.PROCESSING
    assert await service.sweep_stale_chunks() == []  # idempotent: nothing more is stale


async def test_sweep_uses_processing_started_at_without_a_heartbeat(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    (chunk,) = await processing_chunks(service, pool, 1)
    await pool.execute(
        "update document_ocr_chunks set heartbeat_at = null,"
        " processing_started_at = now() - interval '91 seconds' where id = $1",
        chunk.id,
    )
    assert [c.id for c in await service.sweep_stale_chunks()] == [chunk.id]


async def test_mark_chunk_stale_checks_staleness_again(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    alive, dead = await processing_chunks(service, pool, 2)
    await age_heartbeat(pool, dead.id, 120)
    assert await service.mark_chunk_stale(alive.id) is None
    marked = await service.mark_chunk_stale(dead.id)
    assert marked is not None
    assert (marked.status, marked.error_code) == (ChunkStatus.FAILED, "worker_timeout")
    assert (await service.get_chunk(alive.id)).status is ChunkStatus.PROCESSING


async def test_retry_schedules_by_error_kind(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    timed_out, transient, permanent, exhausted = await processing_chunks(service, pool, 4)
    await age_heartbeat(pool, timed_out.id, 91)
    await service.sweep_stale_chunks()
    await service.fail_chunk(
        transient.lease, error_code="engine_unavailable", error_message="503", retryable=True
    )
    await service.fail_chunk(permanent.lease, error_code="corrupt_page", error_message="bad", retryable=False)
    await pool.execute("update document_ocr_chunks set max_attempts = 1 where id = $1", exhausted.id)
    await service.fail_chunk(
        exhausted.lease, error_code="engine_unavailable", error_message="503", retryable=True
    )

    db_now = await pool.fetchval("select now()")
    retried = {c.id: c for c in await service.retry_failed_chunks()}
    assert set(retried) == {timed_out.id, transient.id}

    # the worker died, not the chunk: due again at once
    assert retried[timed_out.id].status is ChunkStatus.PENDING
    assert retried[timed_out.id].next_attempt_at - db_now < timedelta(seconds=5)
    # an error while processing: after the backoff (base 30 s, first retry: 15..30 s with jitter)
    delay = (retried[transient.id].next_attempt_at - db_now).total_seconds()
    assert 14 <= delay <= 31
    assert await service.claim_chunk(transient.id, "w") is None  # not due yet

    assert (await service.get_chunk(permanent.id)).status is ChunkStatus.FAILED
    assert (await service.get_chunk(exhausted.id)).status is ChunkStatus.FAILED
    # the timed-out chunk is claimable now, as attempt 2
    again = await service.claim_chunk(timed_out.id, "w")
    assert again is not None
    assert again.attempt_count == 2


async def test_backoff_grows_and_is_capped(pool: asyncpg.Pool) -> None:
    delays = await pool.fetch(
        "select n, public.ocr_backoff_seconds(n, 30, 600) as d from generate_series(1, 8) n, generate_series(1, 50)"
    )
    by_attempt: dict[int, list[float]] = {}
    for r in delays:
        by_attempt.setdefault(r["n"], []).append(r["d"])
    for n, ds in by_attempt.items():
        full = min(600, 30 * 2 ** (n - 1))
        assert all(full / 2 <= d <= full for d in ds), (n, min(ds), max(ds))
    assert len(set(by_attempt[1])) > 1  # jittered
    assert max(by_attempt[8]) <= 600


async def test_document_fails_once_nothing_can_move(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    first, second = await processing_chunks(service, pool, 2)
    await service.fail_chunk(first.lease, error_code="corrupt_page", error_message="bad", retryable=False)
    document = await service.get_document(first.document_id)
    assert document.ocr_status is DocumentStatus.PROCESSING  # the second chunk can still move
    await service.fail_chunk(second.lease, error_code="engine_error", error_message="x", retryable=True)
    assert (await service.get_document(first.document_id)).ocr_status is DocumentStatus.PROCESSING
    await pool.execute("update document_ocr_chunks set attempt_count = max_attempts where id = $1", second.id)
    await service.retry_failed_chunks(first.document_id)
    await service.repository.refresh_document_status(first.document_id)
    document = await service.get_document(first.document_id)
    assert document.ocr_status is DocumentStatus.FAILED
    assert document.error_message == "2 chunk(s) failed and cannot be retried automatically"

    # a person asks for a retry: everything failed goes back, due now
    forced = await service.retry_failed_chunks(first.document_id, force=True)
    assert {c.id for c in forced} == {first.id, second.id}
    assert (await service.get_document(first.document_id)).ocr_status is DocumentStatus.PROCESSING
    assert await service.claim_chunk(first.id, "w") is not None


async def test_due_pending_lists_what_the_reconciler_enqueues(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    document_id = await make_document(pool, page_count=3)
    due, later, taken = await service.create_chunks_for_document(document_id, ranges(3, 1))
    await pool.execute(
        "update document_ocr_chunks set next_attempt_at = now() + interval '1 hour' where id = $1", later.id
    )
    assert await service.claim_chunk(taken.id, "w") is not None
    assert [c.id for c in await service.get_due_pending_chunks()] == [due.id]
