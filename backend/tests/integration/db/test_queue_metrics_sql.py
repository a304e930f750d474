"""ocr_queue_metrics: the queue's gauges as the claim and the sweep define them, over asyncpg and
over PostgREST RPC alike (the /metrics scrape reads it through whichever backend the API uses)."""

from __future__ import annotations

from uuid import UUID

import asyncpg

from app.models.ocr_chunk import DocumentOCRChunk
from app.models.queue import QueueSnapshot
from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import checksum, make_document, ranges

EMPTY = QueueSnapshot(pending=0, processing=0, failed=0, due=0, overdue=0, oldest_due_seconds=0)


async def shift(pool: asyncpg.Pool, chunk_id: UUID, column: str, seconds: float) -> None:
    """Move a timestamp `seconds` from the database's now() (negative: into the past), triggers off
    (the updated_at trigger would set updated_at to now again)."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("set local session_replication_role = replica")
        await conn.execute(
            f"update document_ocr_chunks set {column} = now() + make_interval(secs => $2) where id = $1",
            chunk_id,
            seconds,
        )


async def a_queue_of_every_kind(service: OCRChunkService, pool: asyncpg.Pool) -> dict[str, DocumentOCRChunk]:
    """Eight one-page chunks, one of each kind the gauges tell apart (the threshold is 90 s)."""
    document_id = await make_document(pool, page_count=8)
    chunks = await service.create_chunks_for_document(document_id, ranges(8, 1))
    names = [
        "due",
        "overdue",
        "later",
        "processing",
        "completed",
        "retrying",
        "retry_waited",
        "failed_for_good",
    ]
    by_name = dict(zip(names, chunks, strict=True))
    leases = {}
    for name in ("processing", "completed", "retrying", "retry_waited", "failed_for_good"):
        claimed = await service.claim_chunk(by_name[name].id, f"worker-{name}")
        assert claimed is not None
        leases[name] = claimed.lease
    await service.complete_chunk(leases["completed"], "results/x.json", checksum(b"x"))
    for name in ("retrying", "retry_waited"):
        await service.fail_chunk(leases[name], error_code="engine_error", error_message="503", retryable=True)
    await service.fail_chunk(
        leases["failed_for_good"], error_code="page_render_failed", error_message="no", retryable=False
    )
    await shift(pool, by_name["overdue"].id, "next_attempt_at", -120)  # due for 120 s
    await shift(pool, by_name["due"].id, "next_attempt_at", -10)  # due for 10 s: not yet overdue
    await shift(pool, by_name["later"].id, "next_attempt_at", 3600)  # a retry's backoff: not due
    # a retryable failure the sweep should have sent back to pending long ago
    await shift(pool, by_name["retry_waited"].id, "updated_at", -120)
    await shift(pool, by_name["failed_for_good"].id, "updated_at", -120)  # never retried: not overdue
    return by_name


async def test_an_empty_queue_reads_zero(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    assert await service.queue_snapshot() == EMPTY


async def test_the_gauges_count_as_the_claim_and_the_sweep_decide(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    assert service.settings.stale_chunk_threshold_seconds == 90
    by_name = await a_queue_of_every_kind(service, pool)
    snapshot = await service.queue_snapshot()
    assert snapshot.model_copy(update={"oldest_due_seconds": 0}) == EMPTY.model_copy(
        update={
            "pending": 3,  # due, overdue, later
            "processing": 1,
            "failed": 3,  # retrying, retry_waited, failed_for_good; completed counts nowhere
            "due": 2,  # due, overdue: what ocr_claim_next_chunk would claim
            "overdue": 2,  # overdue (due 120 s > 90 s), retry_waited (failed 120 s ago, retry still owed)
        }
    )
    assert 120 <= snapshot.oldest_due_seconds < 180  # the overdue chunk's wait, by the database's clock

    # what the gauges say is what a claim does: both due chunks, oldest first, and nothing more
    first = await service.claim_next_chunk("claimer")
    second = await service.claim_next_chunk("claimer")
    assert await service.claim_next_chunk("claimer") is None
    assert first is not None
    assert second is not None
    assert [first.id, second.id] == [by_name["overdue"].id, by_name["due"].id]
    after = await service.queue_snapshot()
    assert (after.pending, after.processing, after.due, after.overdue) == (1, 3, 0, 1)
    assert after.oldest_due_seconds == 0


async def test_a_runs_reserved_chunks_are_not_the_fleets_due_or_overdue(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    """A `chunk-ocr run` on the fleet's database reads its own documents: the gauges an operator
    alerts on (a chunk due too long) leave them out while the run holds them, and count them
    again once its reservation lapses (a run that was killed)."""
    by_name = await a_queue_of_every_kind(service, pool)
    await service.reserve_document(by_name["due"].document_id, "run:laptop:1:abc")
    held = await service.queue_snapshot()
    assert held == EMPTY.model_copy(update={"pending": 3, "processing": 1, "failed": 3})
    await pool.execute("update document_ocr_reservations set reserved_until = now() - interval '1 second'")
    lapsed = await service.queue_snapshot()
    assert (lapsed.due, lapsed.overdue) == (2, 2)
    assert lapsed.oldest_due_seconds >= 120


async def test_the_supabase_path_reads_the_same_gauges(
    service: OCRChunkService, supabase_service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    await a_queue_of_every_kind(service, pool)
    direct = await service.queue_snapshot()
    over_rpc = await supabase_service.queue_snapshot()
    assert over_rpc.model_copy(update={"oldest_due_seconds": 0}) == direct.model_copy(
        update={"oldest_due_seconds": 0}
    )
    assert over_rpc.due == 2
    assert 120 <= over_rpc.oldest_due_seconds < 180


async def test_only_the_service_role_may_read_the_queue(pool: asyncpg.Pool) -> None:
    for role in ("anon", "authenticated"):
        assert not await pool.fetchval(
            "select has_function_privilege($1, 'public.ocr_queue_metrics(double precision)', 'execute')",
            role,
        )
    assert await pool.fetchval(
        "select has_function_privilege('service_role', 'public.ocr_queue_metrics(double precision)', 'execute')"
    )
