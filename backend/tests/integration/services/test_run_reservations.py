"""A `chunk-ocr run` keeps its documents to its own worker, and its worker to them.

Its worker claimed the fleet's chunks (the fair claim picks any document) and took the fleet's
jobs from the shared queue; the fleet's workers did the same to the run's. Now a run reserves
its documents: claims and sweeps made for the run see only them, those of the fleet never see
them while the reservation lasts, and the run's jobs go to a queue of its own.
"""

from __future__ import annotations

from uuid import UUID

import asyncpg
from arq.connections import ArqRedis
from arq.constants import job_key_prefix

from app.models.ocr_chunk import DocumentOCRChunk
from app.services.ocr_chunk_service import OCRChunkService
from app.services.queue import QUEUE_NAME, ArqJobQueue, chunk_job_id, finalize_job_id
from app.services.recovery import sweep
from tests.factories import checksum, make_document, ranges

RUN = "run:laptop:4242:abc123"


async def _documents(service: OCRChunkService, pool: asyncpg.Pool) -> tuple[UUID, UUID]:
    """A document reserved for RUN and one of the fleet's, two pending chunks each."""
    ours = await make_document(pool, page_count=20)
    fleets = await make_document(pool, page_count=20)
    for document_id in (ours, fleets):
        await service.create_chunks_for_document(document_id, ranges(20, 10))
    await service.reserve_document(ours, RUN)
    return ours, fleets


async def test_claims_for_a_run_and_for_the_fleet_keep_to_their_own_documents(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    ours, fleets = await _documents(service, pool)
    fleet_claims = [await service.claim_for_holder(f"fleet/{i}") for i in range(3)]
    run_claims = [await service.claim_for_holder(f"run/{i}", RUN) for i in range(3)]
    assert [c.document_id for c in fleet_claims if c] == [fleets, fleets]
    assert fleet_claims[2] is None  # the reserved document's chunks are not the fleet's
    assert [c.document_id for c in run_claims if c] == [ours, ours]
    assert run_claims[2] is None  # nor are the fleet's the run's
    assert await service.claim_for_holder("other", "run:elsewhere:1:000000") is None


async def _lapse(pool: asyncpg.Pool, document_id: UUID) -> None:
    """What a run that was killed leaves: a reservation nobody renews, past its time."""
    await pool.execute(
        "update document_ocr_reservations set reserved_until = now() - interval '1 second'"
        " where document_id = $1",
        document_id,
    )


async def test_a_reservation_lapses_unless_renewed_and_a_released_one_is_gone(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    ours, fleets = await _documents(service, pool)
    await _lapse(pool, ours)
    assert await service.renew_reservations(RUN) == 1  # a live run renews in time
    claimed = [await service.claim_for_holder(f"fleet/{i}") for i in range(3)]
    assert [c.document_id for c in claimed if c] == [fleets, fleets]
    assert claimed[2] is None

    await _lapse(pool, ours)  # the run was killed: the fleet takes its document up
    taken = await service.claim_for_holder("fleet/3")
    assert taken is not None
    assert taken.document_id == ours
    again = await service.claim_for_holder("run/1", RUN)  # and the run, lapsed or not, may too
    assert again is not None
    assert again.document_id == ours

    assert await service.release_reservations(RUN) == 1
    assert await pool.fetchval("select count(*) from document_ocr_reservations") == 0
    assert await service.renew_reservations(RUN) == 0


async def test_a_later_run_takes_a_document_over(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    ours, _ = await _documents(service, pool)
    await service.reserve_document(ours, "run:laptop:5353:def456")  # run again after a stop
    assert await service.claim_for_holder("run/1", RUN) is None
    claimed = await service.claim_for_holder("run/2", "run:laptop:5353:def456")
    assert claimed is not None
    assert claimed.document_id == ours
    assert await service.renew_reservations(RUN) == 0


async def test_each_sweep_enqueues_its_own_documents_on_its_own_queue(
    service: OCRChunkService, pool: asyncpg.Pool, arq_redis: ArqRedis
) -> None:
    ours, fleets = await _documents(service, pool)
    private = ArqJobQueue(arq_redis, run_id=RUN)
    shared = ArqJobQueue(arq_redis)
    assert (await sweep(service, shared)).enqueued == 2
    assert (await sweep(service, private)).enqueued == 2

    def ids_of(chunks: list[DocumentOCRChunk]) -> set[str]:
        return {chunk_job_id(c.id, 1) for c in chunks}

    ours_chunks = await service.get_chunks_by_document(ours)
    fleets_chunks = await service.get_chunks_by_document(fleets)
    in_shared = {j.decode() for j in await arq_redis.zrange(QUEUE_NAME, 0, -1)}
    in_private = {j.decode() for j in await arq_redis.zrange(private.queue_name, 0, -1)}
    assert in_shared == ids_of(fleets_chunks)
    assert in_private == {f"{RUN}:{job_id}" for job_id in ids_of(ours_chunks)}
    assert private.queue_name != QUEUE_NAME

    # merges too: each document's chunks completed, each sweep enqueues its own merge
    for document_id, run_id in ((ours, RUN), (fleets, None)):
        for i in range(2):
            claimed = await service.claim_for_holder(f"w/{document_id}/{i}", run_id)
            assert claimed is not None
            await service.complete_chunk(claimed.lease, f"{claimed.id}.json", checksum(b"r"))
    await pool.execute("update documents set ocr_status = 'processing'")  # as a start leaves them
    assert (await sweep(service, shared)).finalize_enqueued == 1
    assert (await sweep(service, private)).finalize_enqueued == 1
    assert await arq_redis.zscore(QUEUE_NAME, finalize_job_id(fleets)) is not None
    assert await arq_redis.zscore(private.queue_name, f"{RUN}:{finalize_job_id(ours)}") is not None
    assert await arq_redis.zscore(QUEUE_NAME, finalize_job_id(ours)) is None


async def test_a_runs_queue_is_discarded_with_its_jobs(
    service: OCRChunkService, pool: asyncpg.Pool, arq_redis: ArqRedis
) -> None:
    await _documents(service, pool)
    private = ArqJobQueue(arq_redis, run_id=RUN)
    assert (await sweep(service, private)).enqueued == 2
    job_ids = [j.decode() for j in await arq_redis.zrange(private.queue_name, 0, -1)]
    assert len(job_ids) == 2
    await private.expire_private_queue(3600)
    assert 3500 < await arq_redis.ttl(private.queue_name) <= 3600
    assert await private.discard_private_queue() == 2
    assert not await arq_redis.exists(private.queue_name, *(job_key_prefix + j for j in job_ids))
    assert await ArqJobQueue(arq_redis).discard_private_queue() == 0  # never the shared queue
