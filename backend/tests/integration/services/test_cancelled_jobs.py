"""A chunk job cancelled mid-chunk hands its chunk back at once, due again now, not left leased
until the sweep finds its heartbeat stopped (90 s by default): past arq's job timeout as a
worker_timeout, an attempt like any failure; when its worker is stopping (SIGTERM or Ctrl-C past
the grace period) as worker_stopped, the attempt given back."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from uuid import UUID

import pytest
from arq.connections import ArqRedis

from app.models.ocr_chunk import ChunkStatus, DocumentOCRChunk
from app.pdf.samples import make_scanned_pdf
from app.services.planner import start_document
from app.services.queue import QUEUE_NAME, ArqJobQueue, chunk_job_id
from app.services.runtime import Runtime


async def _one_chunk_scan(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, path: Path, pages: int
) -> DocumentOCRChunk:
    """A scan of `pages` pages started as one tesseract chunk, queued."""
    make_scanned_pdf(path, pages=pages, seed=4)
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        path,
        matter_id=matter_id,
        engine="tesseract",
        chunk_pages=pages,
        workers=1,
    )
    (chunk,) = started.chunks
    return chunk


@pytest.mark.timeout(120)
@pytest.mark.parametrize("stopping", [False, True], ids=["job-timeout", "worker-stopping"])
async def test_a_cancelled_job_hands_its_chunk_back_at_once(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, stopping: bool
) -> None:
    # about 10 s of OCR: still reading at 3 s
    chunk = await _one_chunk_scan(runtime, arq_redis, matter_id, tmp_path / "scan.pdf", pages=12)
    if stopping:
        runtime.processor.stop_requested()  # what the worker's stop (handle_sig) does first

    with pytest.raises(TimeoutError):  # as arq cancels a job at its timeout, or a stop past its grace
        await asyncio.wait_for(runtime.processor.process(str(chunk.id)), timeout=3)

    row = await runtime.service.get_chunk(chunk.id)
    assert (row.status, row.attempt_count) == (ChunkStatus.PENDING, 1)
    assert row.error_message is not None
    if stopping:  # the worker stopped, not the chunk: the attempt is given back
        assert (row.error_code, row.max_attempts) == ("worker_stopped", 4)
        assert "WORKER_GRACE_SECONDS" in row.error_message
    else:  # the chunk took too long: the attempt counts
        assert (row.error_code, row.max_attempts) == ("worker_timeout", 3)
        assert "CHUNK_JOB_TIMEOUT_SECONDS" in row.error_message
    assert await arq_redis.zscore(QUEUE_NAME, chunk_job_id(chunk.id, 2)) is not None  # due again


@pytest.mark.timeout(120)
async def test_a_job_cancelled_while_it_claims_leaves_no_chunk_leased(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    """A stop that cancels a job while its claim is in flight: the claim may commit and its answer
    be lost, which left the chunk leased to nobody until the stale sweep charged it an attempt
    (found with `run` stopped at once, one chunk read and one just claimed). Whatever the claim
    took is handed back. The cancel lands at moments spread over the claim's round trip."""
    chunk = await _one_chunk_scan(runtime, arq_redis, matter_id, tmp_path / "scan.pdf", pages=1)
    runtime.processor.stop_requested()
    for step in range(40):
        job = asyncio.ensure_future(runtime.processor.process(str(chunk.id)))
        await asyncio.sleep(step * 0.0005)  # 0 to 20 ms: before, during and after the claim
        job.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await job
        row = await runtime.service.get_chunk(chunk.id)
        assert row.status is not ChunkStatus.PROCESSING, f"left leased by a cancel after {step * 0.5} ms"
        if row.status is ChunkStatus.FAILED:
            await runtime.service.retry_failed_chunks(chunk.document_id)
