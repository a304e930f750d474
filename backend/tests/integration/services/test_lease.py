"""The lease protocol: claims, fencing by (chunk, worker, attempt), concurrency."""

from __future__ import annotations

import asyncio
from collections import Counter

import asyncpg
import pytest

from app.core.errors import LeaseLostError
from app.models.ocr_chunk import ChunkLease, ChunkStatus
from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import checksum, make_document, make_matter, ranges


async def row(pool: asyncpg.Pool, chunk_id: object) -> asyncpg.Record:
    record: asyncpg.Record = await pool.fetchrow("select * from document_ocr_chunks where id = $1", chunk_id)
    return record


async def test_claim_sets_the_lease_with_database_time(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool, page_count=20)
    first, _ = await service.create_chunks_for_document(document_id, ranges(20, 10))
    claimed = await service.claim_chunk(first.id, "worker-1")
    assert claimed is not None
    assert (claimed.status, claimed.worker_id, claimed.attempt_count) == (
        ChunkStatus.PROCESSING,
        "worker-1",
        1,
    )
    db_now = await pool.fetchval("select now()")
    assert claimed.processing_started_at is not None
    assert claimed.heartbeat_at == claimed.processing_started_at
    assert abs((db_now - claimed.heartbeat_at).total_seconds()) < 5


async def test_duplicate_delivery_is_a_no_op(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool, page_count=10)
    (chunk,) = await service.create_chunks_for_document(document_id, ranges(10, 10))
    assert await service.claim_chunk(chunk.id, "worker-1") is not None
    before = await row(pool, chunk.id)
    assert await service.claim_chunk(chunk.id, "worker-2") is None
    assert await row(pool, chunk.id) == before


async def test_claim_waits_for_next_attempt_at(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool, page_count=10)
    (chunk,) = await service.create_chunks_for_document(document_id, ranges(10, 10))
    await pool.execute(
        "update document_ocr_chunks set next_attempt_at = now() + interval '1 minute' where id = $1", chunk.id
    )
    assert await service.claim_chunk(chunk.id, "w") is None
    assert await service.claim_next_chunk("w") is None
    await pool.execute("update document_ocr_chunks set next_attempt_at = now() where id = $1", chunk.id)
    assert await service.claim_next_chunk("w") is not None


async def test_claim_next_is_fifo(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool, page_count=30)
    created = await service.create_chunks_for_document(document_id, ranges(30, 10))
    claimed = [await service.claim_next_chunk("w", document_id) for _ in range(3)]
    assert [c.chunk_index for c in claimed if c] == [0, 1, 2]
    assert {c.id for c in claimed if c} == {c.id for c in created}
    assert await service.claim_next_chunk("w", document_id) is None


async def test_claim_next_serves_the_document_with_the_fewest_chunks_in_flight(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    """A small document submitted behind a large one gets the next claim, not the large one's 200th."""
    matter_id = await make_matter(pool)
    large = await make_document(pool, matter_id, page_count=200)
    await service.create_chunks_for_document(large, ranges(200, 1))
    held = [await service.claim_next_chunk(f"w{n}") for n in range(3)]
    assert [c.chunk_index for c in held if c and c.document_id == large] == [0, 1, 2]
    small = await make_document(pool, matter_id, page_count=1)
    (small_chunk,) = await service.create_chunks_for_document(small, ranges(1, 1))

    claimed = await service.claim_next_chunk("w3")
    assert claimed is not None
    assert claimed.id == small_chunk.id
    # The small one has nothing left to claim, so the large one's next chunk in order follows.
    following = await service.claim_next_chunk("w4")
    assert following is not None
    assert (following.document_id, following.chunk_index) == (large, 3)


async def test_two_large_documents_share_the_claims_evenly(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    matter_id = await make_matter(pool)
    first = await make_document(pool, matter_id, page_count=50)
    await service.create_chunks_for_document(first, ranges(50, 1))
    second = await make_document(pool, matter_id, page_count=50)
    await service.create_chunks_for_document(second, ranges(50, 1))
    claimed = [await service.claim_next_chunk(f"w{n}") for n in range(10)]
    # among equals the document waiting longest goes first, then they alternate
    assert [c.document_id for c in claimed if c] == [first, second] * 5
    assert [c.chunk_index for c in claimed if c] == [i for i in range(5) for _ in range(2)]


async def test_matters_share_before_documents_do(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    """A matter with two documents does not get two claims for another matter's one."""
    busy_matter, other_matter = await make_matter(pool), await make_matter(pool)
    a1 = await make_document(pool, busy_matter, page_count=4)
    await service.create_chunks_for_document(a1, ranges(4, 1))
    a2 = await make_document(pool, busy_matter, page_count=4)
    await service.create_chunks_for_document(a2, ranges(4, 1))
    b1 = await make_document(pool, other_matter, page_count=4)
    await service.create_chunks_for_document(b1, ranges(4, 1))
    claimed = [await service.claim_next_chunk(f"w{n}") for n in range(6)]
    documents = [c.document_id for c in claimed if c]
    # a1 (oldest), then b1 (its matter has nothing in flight), then a2; then round again
    assert documents == [a1, b1, a2, b1, a1, b1]


async def test_a_retry_not_yet_due_does_not_hold_its_document_back(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    document_id = await make_document(pool, page_count=2)
    first, second = await service.create_chunks_for_document(document_id, ranges(2, 1))
    await pool.execute(
        "update document_ocr_chunks set next_attempt_at = now() + interval '1 minute' where id = $1", first.id
    )
    claimed = await service.claim_next_chunk("w")
    assert claimed is not None
    assert claimed.id == second.id
    assert await service.claim_next_chunk("w") is None


async def test_sixteen_claimers_claim_a_thousand_chunks_exactly_once(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    """The claim every chunk job makes (claim_next_chunk with a worker id and no document), 16 at
    once, over documents of unequal sizes in three matters, started as the planner starts them."""
    created = []
    for sizes in ([500, 250], [200], [49, 1]):
        matter_id = await make_matter(pool)
        for pages in sizes:
            document_id = await make_document(pool, matter_id, page_count=pages)
            created += await service.start_document(document_id, ranges(pages, 1))
    assert len(created) == 1000

    async def claimer(n: int) -> list[tuple[object, str]]:
        mine = []
        while (chunk := await service.claim_next_chunk(f"claimer-{n}")) is not None:
            assert chunk.worker_id == f"claimer-{n}"
            mine.append((chunk.id, chunk.worker_id))
        return mine

    results = await asyncio.gather(*(claimer(n) for n in range(16)))
    claims = Counter(chunk_id for mine in results for chunk_id, _ in mine)
    assert len(claims) == 1000
    assert set(claims.values()) == {1}
    assert set(claims) == {c.id for c in created}
    # the work spread over the claimers (each got some) and the rows agree with the claims
    assert sum(1 for mine in results if mine) >= 8
    by_worker = {chunk_id: worker for mine in results for chunk_id, worker in mine}
    rows = await pool.fetch("select id, status, worker_id, attempt_count from document_ocr_chunks")
    assert all(r["status"] == "processing" and r["attempt_count"] == 1 for r in rows)
    assert {r["id"]: r["worker_id"] for r in rows} == by_worker


@pytest.fixture
async def reclaimed(service: OCRChunkService, pool: asyncpg.Pool) -> tuple[ChunkLease, ChunkLease]:
    """A chunk whose first attempt (worker-1) timed out and whose second (worker-2) runs now."""
    document_id = await make_document(pool, page_count=10)
    (chunk,) = await service.create_chunks_for_document(document_id, ranges(10, 10))
    first = await service.claim_chunk(chunk.id, "worker-1")
    assert first is not None
    await pool.execute(
        "update document_ocr_chunks set heartbeat_at = now() - interval '10 minutes' where id = $1", chunk.id
    )
    assert [c.id for c in await service.sweep_stale_chunks()] == [chunk.id]
    assert [c.id for c in await service.retry_failed_chunks()] == [chunk.id]
    second = await service.claim_chunk(chunk.id, "worker-2")
    assert second is not None
    assert second.attempt_count == 2
    return first.lease, second.lease


async def test_heartbeat_extends_only_the_current_lease(
    service: OCRChunkService, pool: asyncpg.Pool, reclaimed: tuple[ChunkLease, ChunkLease]
) -> None:
    old, current = reclaimed
    await pool.execute(
        "update document_ocr_chunks set heartbeat_at = now() - interval '30 seconds' where id = $1",
        current.chunk_id,
    )
    before = await row(pool, current.chunk_id)
    assert await service.update_heartbeat(old) is False  # the zombie: older attempt
    other = ChunkLease(chunk_id=current.chunk_id, worker_id="worker-3", attempt=current.attempt)
    assert await service.update_heartbeat(other) is False  # another worker, same attempt number
    assert await row(pool, current.chunk_id) == before
    assert await service.update_heartbeat(current) is True
    after = await row(pool, current.chunk_id)
    assert after["heartbeat_at"] > before["heartbeat_at"]


@pytest.mark.parametrize("which", ["older_attempt", "other_worker"])
async def test_stale_token_cannot_complete_or_fail(
    service: OCRChunkService,
    pool: asyncpg.Pool,
    reclaimed: tuple[ChunkLease, ChunkLease],
    which: str,
) -> None:
    old, current = reclaimed
    stale = (
        old
        if which == "older_attempt"
        else ChunkLease(chunk_id=current.chunk_id, worker_id="worker-1", attempt=current.attempt)
    )
    before = await row(pool, current.chunk_id)
    with pytest.raises(LeaseLostError) as lost:
        await service.complete_chunk(stale, "zombie.json", checksum(b"zombie"))
    assert lost.value.retryable is False
    with pytest.raises(LeaseLostError):
        await service.fail_chunk(stale, error_code="engine_error", error_message="late", retryable=True)
    with pytest.raises(LeaseLostError):
        await service.release_chunk(stale, error_message="late stop")
    assert await row(pool, current.chunk_id) == before
    done = await service.complete_chunk(current, "real.json", checksum(b"real"))
    assert (done.status, done.result_storage_path) == (ChunkStatus.COMPLETED, "real.json")


async def test_completed_lease_cannot_be_used_again(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool, page_count=10)
    (chunk,) = await service.create_chunks_for_document(document_id, ranges(10, 10))
    claimed = await service.claim_chunk(chunk.id, "w")
    assert claimed is not None
    await service.complete_chunk(claimed.lease, "a.json", checksum(b"a"))
    before = await row(pool, chunk.id)
    assert await service.update_heartbeat(claimed.lease) is False
    with pytest.raises(LeaseLostError):
        await service.complete_chunk(claimed.lease, "b.json", checksum(b"b"))
    assert await row(pool, chunk.id) == before


async def test_a_released_attempt_is_given_back_and_due_at_once(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    """A stopping worker's chunk: failed as worker_stopped, retryable, max_attempts one higher,
    due again now (not after the backoff), and claimable past what would have been its last
    attempt. The token it was released under is spent."""
    document_id = await make_document(pool, page_count=10)
    (chunk,) = await service.create_chunks_for_document(document_id, ranges(10, 10))
    await pool.execute("update document_ocr_chunks set max_attempts = 1 where id = $1", chunk.id)
    claimed = await service.claim_chunk(chunk.id, "worker-1")
    assert claimed is not None

    released = await service.release_chunk(claimed.lease, error_message="worker stopping")
    assert (released.status, released.error_code, released.error_retryable) == (
        ChunkStatus.FAILED,
        "worker_stopped",
        True,
    )
    assert (released.attempt_count, released.max_attempts) == (1, 2)
    with pytest.raises(LeaseLostError):  # released once: the token is spent
        await service.release_chunk(claimed.lease, error_message="again")
    assert await pool.fetchval("select ocr_status from documents where id = $1", document_id) == "processing"

    (retried,) = await service.retry_failed_chunks(document_id)
    assert retried.next_attempt_at <= await pool.fetchval("select now()")
    again = await service.claim_chunk(chunk.id, "worker-2")
    assert again is not None
    assert (again.attempt_count, again.max_attempts) == (2, 2)
    assert again.lease != claimed.lease


async def test_released_attempts_stop_at_the_column_limit(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    document_id = await make_document(pool, page_count=10)
    (chunk,) = await service.create_chunks_for_document(document_id, ranges(10, 10))
    await pool.execute("update document_ocr_chunks set max_attempts = 100 where id = $1", chunk.id)
    claimed = await service.claim_chunk(chunk.id, "worker-1")
    assert claimed is not None
    released = await service.release_chunk(claimed.lease, error_message="worker stopping")
    assert (released.status, released.max_attempts) == (ChunkStatus.FAILED, 100)


async def test_calls_of_one_claim_lease_one_chunk_in_whatever_order_they_run(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    """A claim call its worker gave up on (a database that stopped answering past the call's
    timeout) runs when the database wakes, beside the call that replaced it. Both claimed: two
    chunks leased to one holder, one of them to nobody, until the stale sweep."""
    document_id = await make_document(pool, page_count=30)
    await service.create_chunks_for_document(document_id, ranges(30, 10))
    async with pool.acquire() as given_up, pool.acquire() as replacing:
        transaction = given_up.transaction()
        await transaction.start()  # the call the worker gave up on, run and not yet committed
        first = await given_up.fetch("select * from ocr_claim_for_holder('worker/nonce')")
        again = asyncio.ensure_future(replacing.fetch("select * from ocr_claim_for_holder('worker/nonce')"))
        await asyncio.sleep(0.3)
        assert not again.done()  # the claim's calls run one after another
        await transaction.commit()
        second = await again
    assert [r["id"] for r in second] == [r["id"] for r in first]  # the one chunk it leased
    held = await pool.fetch(
        "select id from document_ocr_chunks where worker_id = 'worker/nonce' and status = 'processing'"
    )
    assert len(held) == 1
    assert await service.claim_for_holder("other/nonce") is not None  # another claim takes another


async def test_a_claim_for_a_holder_that_holds_nothing_is_the_next_claim(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    document_id = await make_document(pool, page_count=20)
    first, second = await service.create_chunks_for_document(document_id, ranges(20, 10))
    claimed = await service.claim_for_holder("a/1")
    assert claimed is not None
    assert (claimed.id, claimed.attempt_count) == (first.id, 1)
    assert (await service.claim_for_holder("a/1")) == claimed  # called again: the same lease
    following = await service.claim_for_holder("a/2")
    assert following is not None
    assert following.id == second.id
    assert await service.claim_for_holder("a/3") is None
