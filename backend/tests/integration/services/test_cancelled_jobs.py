"""A chunk job cancelled mid-chunk (SIGTERM past the worker's grace, arq's job timeout) hands its
chunk back at once: failed with the sweep's own code and due again now, not left leased until
the sweep finds its heartbeat stopped (90 s by default)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from uuid import UUID

import pytest
from arq.connections import ArqRedis

from app.models.ocr_chunk import ChunkStatus
from app.pdf.samples import make_scanned_pdf
from app.services.planner import start_document
from app.services.queue import QUEUE_NAME, ArqJobQueue, chunk_job_id
from app.services.runtime import Runtime


@pytest.mark.timeout(120)
async def test_a_cancelled_job_hands_its_chunk_back_at_once(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    make_scanned_pdf(tmp_path / "scan.pdf", pages=12, seed=4)  # about 10 s of OCR: still reading at 3 s
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        tmp_path / "scan.pdf",
        matter_id=matter_id,
        engine="tesseract",
        chunk_pages=12,
        workers=1,
    )
    (chunk,) = started.chunks

    with pytest.raises(TimeoutError):  # as arq cancels a job at its timeout
        await asyncio.wait_for(runtime.processor.process(str(chunk.id)), timeout=3)

    row = await runtime.service.get_chunk(chunk.id)
    assert (row.status, row.attempt_count, row.error_code) == (ChunkStatus.PENDING, 1, "worker_timeout")
    assert row.error_message is not None
    assert "stopped while reading" in row.error_message
    assert await arq_redis.zscore(QUEUE_NAME, chunk_job_id(chunk.id, 2)) is not None  # due again
