"""Work under a heartbeat (app.services.leases) against the real lease SQL: a refused beat cancels the
work, except the beat that loses the race with the work's own last, fenced write."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from app.core.errors import LeaseLostError
from app.models.ocr_chunk import ChunkLease, ChunkStatus, DocumentOCRChunk
from app.services.leases import Fence, run_while_leased
from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import checksum, make_document, ranges


async def _claimed(service: OCRChunkService, pool: asyncpg.Pool) -> ChunkLease:
    document_id = await make_document(pool, page_count=4)
    (chunk,) = await service.create_chunks_for_document(document_id, ranges(4, 4))
    claimed = await service.claim_chunk(chunk.id, "worker-1")
    assert claimed is not None
    return claimed.lease


async def test_a_beat_the_completion_overtakes_is_not_a_lost_lease(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    """The beat leaves before the completion and reaches the database after it commits, so it is
    refused; the completion's own answer, read after that refusal, is what counts."""
    lease = await _claimed(service, pool)
    fence = Fence()
    beat_sent, committed, refused = asyncio.Event(), asyncio.Event(), asyncio.Event()
    answers: list[bool] = []

    async def heartbeat() -> bool:
        beat_sent.set()
        await committed.wait()
        alive = await service.update_heartbeat(lease)
        answers.append(alive)
        refused.set()
        return alive

    async def work() -> DocumentOCRChunk:
        await beat_sent.wait()
        fence.raised = True
        done = await service.complete_chunk(lease, "results/c.json", checksum(b"result"))
        committed.set()
        await refused.wait()
        await asyncio.sleep(0.05)  # the completion's answer is read after the beat's
        return done

    done = await asyncio.wait_for(
        run_while_leased(work, heartbeat=heartbeat, interval=0.01, what="chunk", fence=fence), 5
    )

    assert answers == [False]
    assert done.status is ChunkStatus.COMPLETED
    stored = await service.get_chunk(lease.chunk_id)
    assert (stored.status, stored.worker_id, stored.attempt_count) == (ChunkStatus.COMPLETED, "worker-1", 1)


async def test_a_beat_refused_before_the_last_write_cancels_the_work(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    lease = await _claimed(service, pool)
    await pool.execute(
        "update document_ocr_chunks set heartbeat_at = now() - interval '1 hour' where id = $1",
        lease.chunk_id,
    )
    (swept,) = await service.sweep_stale_chunks()
    assert swept.id == lease.chunk_id
    reached_the_end = False

    async def work() -> None:
        nonlocal reached_the_end
        await asyncio.sleep(30)
        reached_the_end = True

    with pytest.raises(LeaseLostError):
        await asyncio.wait_for(
            run_while_leased(
                work,
                heartbeat=lambda: service.update_heartbeat(lease),
                interval=0.01,
                what="chunk",
                fence=Fence(),
            ),
            5,
        )
    assert not reached_the_end
