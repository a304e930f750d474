"""The documents application service: each use case the entry points call, on real servers."""

from __future__ import annotations

import time
from pathlib import Path
from uuid import UUID

import pytest
from arq.connections import ArqRedis

from app.core.errors import OCRAlreadyStartedError
from app.models.document import DocumentStatus
from app.models.ocr_chunk import ChunkStatus
from app.pdf.samples import make_born_digital_pdf
from app.services.documents import Documents, EngineNotOfferedError
from app.services.merge import ResultPendingError
from app.services.queue import ENGINES_KEY, QUEUE_NAME, ArqJobQueue
from app.services.runtime import Runtime
from tests.integration.conftest import burst_worker


@pytest.fixture
def documents(runtime: Runtime, arq_redis: ArqRedis) -> Documents:
    return Documents(runtime.service, runtime.store, ArqJobQueue(arq_redis))


async def test_submit_status_result(
    documents: Documents, runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    texts = make_born_digital_pdf(tmp_path / "born.pdf", pages=6, seed=3)
    started = await documents.submit(
        tmp_path / "born.pdf", matter_id=matter_id, engine="text-layer", chunk_pages=4
    )
    assert started.document.ocr_status is DocumentStatus.PROCESSING  # as stored after the start
    assert [(c.page_start, c.page_end) for c in started.chunks] == [(1, 4), (5, 6)]
    assert started.info.page_count == 6

    before = await documents.status(started.document.id)
    assert (before.progress.pending, before.progress.completed) == (2, 0)
    assert not before.finished
    assert before.result_location is None
    with pytest.raises(ResultPendingError):
        await documents.result(before.document)

    await burst_worker(arq_redis, runtime).main()

    after = await documents.status(started.document.id)
    assert after.finished
    assert after.document.ocr_status is DocumentStatus.COMPLETED
    assert after.progress.pages_completed == 6
    assert after.failed_chunks == []
    assert after.result_location is not None
    assert after.result_location.endswith("result.json")
    document, merged = await documents.result_of(str(started.document.id))
    assert document.id == started.document.id
    assert [p.text.split() for p in merged.pages] == [t.split() for t in texts]


async def test_register_then_start_once(
    documents: Documents, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    make_born_digital_pdf(tmp_path / "born.pdf", pages=3, seed=4)
    registered = await documents.submit(
        tmp_path / "born.pdf", matter_id=matter_id, engine="text-layer", keep_source=True, start=False
    )
    assert registered.document.ocr_status is DocumentStatus.PENDING
    assert registered.chunks == []
    assert await arq_redis.zcard(QUEUE_NAME) == 0

    started = await documents.start(registered.document, chunk_pages=1)
    assert started.document.ocr_status is DocumentStatus.PROCESSING
    assert len(started.chunks) == 3
    assert await arq_redis.zcard(QUEUE_NAME) == 3
    with pytest.raises(OCRAlreadyStartedError):
        await documents.start(registered.document)


async def test_retry_sends_failed_chunks_back_now(
    documents: Documents, runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    make_born_digital_pdf(tmp_path / "born.pdf", pages=2, seed=5)
    started = await documents.submit(
        tmp_path / "born.pdf", matter_id=matter_id, engine="text-layer", chunk_pages=2
    )
    (chunk,) = started.chunks
    await arq_redis.delete(QUEUE_NAME)
    claimed = await runtime.service.claim_chunk(chunk.id, "test-worker")
    assert claimed is not None
    await runtime.service.fail_chunk(
        claimed.lease, error_code="bad_pdf", error_message="permanent for the test", retryable=False
    )
    assert (await documents.status(started.document.id)).failed_chunks[0].id == chunk.id

    retried = await documents.retry(str(started.document.id))
    assert retried.document_id == started.document.id
    assert [c.id for c in retried.chunks] == [chunk.id]
    assert (await runtime.service.get_chunk(chunk.id)).status is ChunkStatus.PENDING
    assert await arq_redis.zcard(QUEUE_NAME) == 1  # its next attempt is enqueued
    assert (await documents.retry(started.document.id)).chunks == []  # nothing failed any more


async def test_offered_engine(documents: Documents, arq_redis: ArqRedis) -> None:
    with pytest.raises(EngineNotOfferedError, match="unknown OCR engine"):
        await documents.offered_engine("no-such-engine")
    # no worker heard from: cannot know, so the engine is accepted and its chunks wait
    assert await documents.offered_engine("google-vision") == "google-vision"
    await arq_redis.hset(ENGINES_KEY, mapping={"tesseract": str(time.time())})  # type: ignore[misc]
    assert await documents.offered_engine("tesseract") == "tesseract"
    with pytest.raises(EngineNotOfferedError, match="no worker can run"):
        await documents.offered_engine("google-vision")
