"""The state machine: Python map, SQL trigger and service agree on all 16 moves."""

from __future__ import annotations

import itertools
from uuid import UUID

import asyncpg
import pytest

from app.core.errors import InvalidStatusTransitionError
from app.models.ocr_chunk import (
    VALID_STATUS_TRANSITIONS,
    ChunkStatus,
    DocumentOCRChunk,
    is_valid_transition,
)
from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import checksum, make_document, ranges

ALL_MOVES = list(itertools.product(ChunkStatus, ChunkStatus))


async def chunk_in(service: OCRChunkService, pool: asyncpg.Pool, status: ChunkStatus) -> DocumentOCRChunk:
    """A chunk brought to `status` through the legal path only."""
    document_id = await make_document(pool, page_count=10)
    (chunk,) = await service.create_chunks_for_document(document_id, ranges(10, 10))
    if status is ChunkStatus.PENDING:
        return chunk
    claimed = await service.claim_chunk(chunk.id, "worker-a")
    assert claimed is not None
    if status is ChunkStatus.PROCESSING:
        return claimed
    if status is ChunkStatus.COMPLETED:
        return await service.complete_chunk(claimed.lease, "m/d/chunks/00000.json", checksum(b"r"))
    return await service.fail_chunk(
        claimed.lease, error_code="engine_error", error_message="x", retryable=True
    )


async def raw_update(pool: asyncpg.Pool, chunk_id: UUID, to: ChunkStatus) -> None:
    """A console-style UPDATE that satisfies every CHECK, so only the trigger can refuse it."""
    await pool.execute(
        """
        update public.document_ocr_chunks
           set status = $2,
               worker_id = 'console',
               attempt_count = greatest(attempt_count, 1),
               processing_started_at = coalesce(processing_started_at, now()),
               processing_completed_at = now(),
               result_storage_path = 'console.json',
               result_checksum = repeat('0', 64),
               error_code = coalesce(error_code, 'console')
         where id = $1
        """,
        chunk_id,
        to.value,
    )


def test_python_map_is_the_design_map() -> None:
    assert {k: set(v) for k, v in VALID_STATUS_TRANSITIONS.items()} == {
        ChunkStatus.PENDING: {ChunkStatus.PROCESSING},
        ChunkStatus.PROCESSING: {ChunkStatus.COMPLETED, ChunkStatus.FAILED},
        ChunkStatus.COMPLETED: set(),
        ChunkStatus.FAILED: {ChunkStatus.PENDING},
    }


async def test_sql_transition_function_agrees_with_python_map(pool: asyncpg.Pool) -> None:
    rows = await pool.fetch(
        "select f, t, public.ocr_chunk_transition_allowed(f, t) as allowed"
        " from unnest($1::text[]) f cross join unnest($1::text[]) t",
        [s.value for s in ChunkStatus],
    )
    sql_map = {(ChunkStatus(r["f"]), ChunkStatus(r["t"])): r["allowed"] for r in rows}
    assert len(sql_map) == 16
    assert sql_map == {(a, b): is_valid_transition(a, b) for a, b in ALL_MOVES}


@pytest.mark.parametrize(("current", "target"), ALL_MOVES, ids=[f"{a}->{b}" for a, b in ALL_MOVES])
async def test_database_trigger_enforces_the_map(
    service: OCRChunkService, pool: asyncpg.Pool, current: ChunkStatus, target: ChunkStatus
) -> None:
    chunk = await chunk_in(service, pool, current)
    if is_valid_transition(current, target):
        await raw_update(pool, chunk.id, target)
        assert await pool.fetchval("select status from document_ocr_chunks where id = $1", chunk.id) == target
    else:
        before = await pool.fetchrow("select * from document_ocr_chunks where id = $1", chunk.id)
        with pytest.raises(asyncpg.PostgresError) as raised:
            await raw_update(pool, chunk.id, target)
        assert raised.value.sqlstate == "OC001"
        assert await pool.fetchrow("select * from document_ocr_chunks where id = $1", chunk.id) == before


ILLEGAL = [(a, b) for a, b in ALL_MOVES if not is_valid_transition(a, b)]


@pytest.mark.parametrize(("current", "target"), ILLEGAL, ids=[f"{a}->{b}" for a, b in ILLEGAL])
async def test_service_refuses_every_illegal_move(
    service: OCRChunkService, pool: asyncpg.Pool, current: ChunkStatus, target: ChunkStatus
) -> None:
    chunk = await chunk_in(service, pool, current)
    with pytest.raises(InvalidStatusTransitionError):
        await service.update_status(chunk.id, target, error_code="manual")
    assert (await service.get_chunk(chunk.id)) == chunk


async def test_service_makes_every_legal_move(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    # pending -> processing (claim) -> failed (update_status) -> pending (update_status)
    # -> processing (claim) -> completed (complete_chunk)
    chunk = await chunk_in(service, pool, ChunkStatus.PENDING)
    claimed = await service.claim_chunk(chunk.id, "w1")
    assert claimed is not None
    assert claimed.status is ChunkStatus.PROCESSING
    failed = await service.update_status(
        chunk.id, ChunkStatus.FAILED, error_code="operator", error_message="x"
    )
    assert (failed.status, failed.error_code) == (ChunkStatus.FAILED, "operator")
    pending = await service.update_status(chunk.id, "pending")
    assert pending.status is ChunkStatus.PENDING
    again = await service.claim_chunk(chunk.id, "w2")
    assert again is not None
    assert again.attempt_count == 2
    done = await service.complete_chunk(again.lease, "path.json", checksum(b"x"))
    assert done.status is ChunkStatus.COMPLETED
    assert done.error_code is None


async def test_translated_trigger_error_from_a_race(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    """The database's refusal reaches callers as the same domain error."""
    chunk = await chunk_in(service, pool, ChunkStatus.COMPLETED)
    with pytest.raises(InvalidStatusTransitionError):
        # expected=completed matches the row, so only the trigger can refuse this write
        await service.repository.update_status(chunk.id, ChunkStatus.COMPLETED, ChunkStatus.PENDING)


async def test_new_chunk_must_start_pending(pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool)
    with pytest.raises(asyncpg.PostgresError) as raised:
        await pool.execute(
            """
            insert into document_ocr_chunks (matter_id, document_id, chunk_index, page_start, page_end,
                status, result_storage_path, result_checksum, processing_completed_at)
            select matter_id, id, 0, 1, 1, 'completed', 'x', repeat('0', 64), now()
              from documents where id = $1
            """,
            document_id,
        )
    assert raised.value.sqlstate == "OC001"
