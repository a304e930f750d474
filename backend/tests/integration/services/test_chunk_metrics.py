"""What a worker counts, on real arq workers, PostgreSQL, Redis and OCR processes: chunk and page
durations by engine, job outcomes, retries and lease losses by code, read back in Prometheus'
text format with prometheus-client's parser."""

from __future__ import annotations

import asyncio
from pathlib import Path
from uuid import UUID

import asyncpg
import pytest
from arq.connections import ArqRedis

from app.core.config import Settings
from app.metrics import exposition
from app.models.ocr_chunk import ChunkStatus
from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf
from app.services.planner import StartedDocument, start_document
from app.services.queue import ArqJobQueue
from app.services.runtime import Runtime, build_runtime
from tests.e2e.conftest import wait_for
from tests.integration.conftest import burst_worker
from tests.prometheus import value


def scraped(runtime: Runtime) -> str:
    return exposition(runtime.service.metrics.registry).decode()


async def start(
    runtime: Runtime, arq_redis: ArqRedis, pdf: Path, matter_id: UUID, engine: str, chunk_pages: int
) -> StartedDocument:
    return await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        pdf,
        matter_id=matter_id,
        engine=engine,
        chunk_pages=chunk_pages,
    )


async def test_completed_chunks_observe_their_durations_by_engine(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    make_born_digital_pdf(tmp_path / "born.pdf", pages=12, seed=3)
    await start(runtime, arq_redis, tmp_path / "born.pdf", matter_id, "text-layer", chunk_pages=5)
    before = scraped(runtime)
    assert value(before, "chunk_ocr_chunk_duration_seconds_count", engine="text-layer") is None

    await burst_worker(arq_redis, runtime).main()

    text = scraped(runtime)
    # three chunks (5 + 5 + 2 pages), each read once
    assert value(text, "chunk_ocr_chunk_duration_seconds_count", engine="text-layer") == 3
    assert value(text, "chunk_ocr_chunk_duration_seconds_bucket", engine="text-layer", le="+Inf") == 3
    assert (value(text, "chunk_ocr_chunk_duration_seconds_sum", engine="text-layer") or 0) > 0
    assert value(text, "chunk_ocr_page_duration_seconds_count", engine="text-layer") == 12
    assert value(text, "chunk_ocr_chunk_jobs_total", outcome="completed") == 3
    assert value(text, "chunk_ocr_chunk_jobs_total", outcome="failed") is None
    assert value(text, "chunk_ocr_lease_losses_total", code="lease_lost") is None


@pytest.fixture
def retry_now(pipeline_settings: Settings) -> Settings:
    """Retries due at once, so a burst worker sees every attempt."""
    return pipeline_settings.model_copy(update={"ocr_retry_base_seconds": 0, "ocr_retry_cap_seconds": 0})


async def test_retries_are_counted_by_the_code_of_the_failure_they_retry(
    retry_now: Settings, arq_redis: ArqRedis, pool: asyncpg.Pool, matter_id: UUID, tmp_path: Path
) -> None:
    runtime = await build_runtime(retry_now, ArqJobQueue(arq_redis), worker_id="test-worker")
    try:
        make_born_digital_pdf(tmp_path / "born.pdf", pages=2, seed=4)
        started = await start(
            runtime, arq_redis, tmp_path / "born.pdf", matter_id, "text-layer", chunk_pages=2
        )
        (chunk,) = started.chunks
        assert chunk.input_storage_path is not None
        # the stored input no longer matches its checksum: every attempt fails, retryably
        (stored,) = list(retry_now.local_storage_dir.glob(f"*/{chunk.input_storage_path}"))
        stored.write_bytes(b"%PDF-1.7 not the planned chunk")

        await burst_worker(arq_redis, runtime).main()

        row = await runtime.service.get_chunk(chunk.id)
        assert (row.status, row.error_code, row.attempt_count) == (ChunkStatus.FAILED, "checksum_mismatch", 3)
        text = scraped(runtime)
        # attempts 1 and 2 were retried; the third used the last attempt and stays failed
        assert value(text, "chunk_ocr_chunk_retries_total", code="checksum_mismatch") == 2
        assert value(text, "chunk_ocr_chunk_jobs_total", outcome="failed") == 3
        assert value(text, "chunk_ocr_chunk_duration_seconds_count", engine="text-layer") is None
    finally:
        await runtime.close()


async def steal_lease(pool: asyncpg.Pool, chunk_id: UUID) -> None:
    """Fail the chunk as the stale sweep of another worker would, in one transaction: its heartbeat
    made old and the sweep run before the holder's next heartbeat can land."""
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(
            "update document_ocr_chunks set heartbeat_at = now() - interval '1 hour' where id = $1", chunk_id
        )
        swept = await conn.fetch("select id from ocr_sweep_stale_chunks(2.0, $1)", chunk_id)
        assert [r["id"] for r in swept] == [chunk_id]


@pytest.mark.timeout(120)
async def test_a_lost_lease_is_counted_and_its_chunk_observes_no_duration(
    runtime: Runtime, arq_redis: ArqRedis, pool: asyncpg.Pool, matter_id: UUID, tmp_path: Path
) -> None:
    # tesseract on four 300 DPI pages: seconds of OCR, long enough to take the lease away meanwhile
    make_scanned_pdf(tmp_path / "scan.pdf", pages=4, seed=5)
    started = await start(runtime, arq_redis, tmp_path / "scan.pdf", matter_id, "tesseract", chunk_pages=4)
    (chunk,) = started.chunks
    worker = asyncio.create_task(burst_worker(arq_redis, runtime).main())
    try:

        async def processing() -> bool:
            return (await runtime.service.get_chunk(chunk.id)).status is ChunkStatus.PROCESSING

        await wait_for(processing, 30, "the worker to claim the chunk")
        await steal_lease(pool, chunk.id)
        await asyncio.wait_for(worker, 90)
    finally:
        worker.cancel()

    row = await runtime.service.get_chunk(chunk.id)
    assert (row.status, row.error_code) == (ChunkStatus.FAILED, "worker_timeout")  # the thief's write stands
    text = scraped(runtime)
    assert value(text, "chunk_ocr_lease_losses_total", code="lease_lost") == 1
    assert value(text, "chunk_ocr_chunk_jobs_total", outcome="lease_lost") == 1
    assert value(text, "chunk_ocr_chunk_duration_seconds_count", engine="tesseract") is None
    # the sweep that failed it was another process's: this worker's sweep counter did not move
    assert value(text, "chunk_ocr_sweep_stale_chunks_total") == 0
