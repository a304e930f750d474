"""The pipeline on real PostgreSQL, Redis, arq and PDFs: start, process, finalize, recover."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import asyncpg
from arq.connections import ArqRedis

from app.models.document import DocumentStatus
from app.models.ocr_chunk import ChunkStatus
from app.models.results import ChunkResult, MergedResult
from app.pdf.samples import make_born_digital_pdf
from app.services.chunk_processor import ChunkOutcome
from app.services.finalize import FinalizeOutcome
from app.services.planner import start_document
from app.services.queue import QUEUE_NAME, ArqJobQueue
from app.services.recovery import sweep
from app.services.runtime import Runtime
from app.storage.base import get_verified
from app.storage.checksums import sha256_hex
from tests.integration.conftest import burst_worker


async def start(runtime: Runtime, arq_redis: ArqRedis, pdf: Path, matter_id: UUID, chunk_pages: int = 5):  # type: ignore[no-untyped-def]
    return await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        pdf,
        matter_id=matter_id,
        engine="text-layer",
        chunk_pages=chunk_pages,
        workers=2,
    )


async def test_document_through_arq_workers(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    texts = make_born_digital_pdf(tmp_path / "born.pdf", pages=12, seed=1)
    started = await start(runtime, arq_redis, tmp_path / "born.pdf", matter_id)
    assert [(c.page_start, c.page_end) for c in started.chunks] == [(1, 5), (6, 10), (11, 12)]
    for chunk in started.chunks:  # every input was uploaded and checksummed before the rows existed
        assert chunk.input_storage_path is not None
        assert chunk.input_checksum is not None
        await get_verified(runtime.store, chunk.input_storage_path, chunk.input_checksum)
    assert await arq_redis.zcard(QUEUE_NAME) == 3

    worker = burst_worker(arq_redis, runtime)
    await worker.main()
    assert worker.jobs_complete == 4  # three chunks, then the finalize the last one enqueued
    assert worker.jobs_failed == 0

    document = await runtime.service.get_document(started.document.id)
    assert document.ocr_status is DocumentStatus.COMPLETED
    assert document.result_storage_path is not None
    assert document.result_checksum is not None
    merged = MergedResult.model_validate_json(
        await get_verified(runtime.store, document.result_storage_path, document.result_checksum)
    )
    assert [p.page_number for p in merged.pages] == list(range(1, 13))
    assert [p.text.split() for p in merged.pages] == [t.split() for t in texts]
    assert {p.source for p in merged.pages} == {"text-layer"}
    txt = await runtime.store.get(document.result_storage_path.replace("result.json", "result.txt"))
    assert txt.decode().count("\f") == 11

    for chunk in await runtime.service.get_chunks_by_document(document.id):
        assert chunk.status is ChunkStatus.COMPLETED
        assert chunk.attempt_count == 1
        assert chunk.result_storage_path is not None
        assert chunk.result_checksum is not None
        stored = await runtime.store.get(chunk.result_storage_path)
        assert sha256_hex(stored) == chunk.result_checksum
        # findable from the row alone: index, input checksum, language and engine
        assert chunk.input_checksum is not None
        assert chunk.result_storage_path.endswith(
            f"/chunks/{chunk.chunk_index:05d}-{chunk.input_checksum[:16]}-eng-text-layer.json"
        )


async def test_duplicate_delivery_is_a_logged_no_op(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    make_born_digital_pdf(tmp_path / "a.pdf", pages=3, seed=2)
    started = await start(runtime, arq_redis, tmp_path / "a.pdf", matter_id, chunk_pages=3)
    (chunk,) = started.chunks
    assert await runtime.processor.process(str(chunk.id)) is ChunkOutcome.COMPLETED
    assert await runtime.processor.process(str(chunk.id)) is ChunkOutcome.NOT_CLAIMABLE
    assert (await runtime.service.get_chunk(chunk.id)).attempt_count == 1


async def test_corrupted_chunk_result_is_redone_never_merged(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    texts = make_born_digital_pdf(tmp_path / "c.pdf", pages=6, seed=3)
    started = await start(runtime, arq_redis, tmp_path / "c.pdf", matter_id, chunk_pages=3)
    for chunk in started.chunks:
        assert await runtime.processor.process(str(chunk.id)) is ChunkOutcome.COMPLETED
    victim = await runtime.service.get_chunk(started.chunks[1].id)
    assert victim.result_storage_path is not None
    file = runtime.settings.local_storage_dir / runtime.settings.storage_bucket / victim.result_storage_path
    good = file.read_bytes()
    file.write_bytes(good.replace(b'"text":"', b'"text":"TAMPERED ', 1))

    assert await runtime.finalizer.finalize(started.document.id) is FinalizeOutcome.COMPLETED
    document = await runtime.service.get_document(started.document.id)
    assert document.ocr_status is DocumentStatus.COMPLETED
    assert document.result_storage_path is not None
    assert document.result_checksum is not None
    merged = MergedResult.model_validate_json(
        await get_verified(runtime.store, document.result_storage_path, document.result_checksum)
    )
    assert "TAMPERED" not in merged.text()
    assert [p.text.split() for p in merged.pages] == [t.split() for t in texts]
    redone = await runtime.service.get_chunk(victim.id)
    assert redone.result_storage_path is not None
    assert redone.result_checksum is not None
    # the chunk's stored result verifies again (OCR ran again and wrote it)
    again = await get_verified(runtime.store, redone.result_storage_path, redone.result_checksum)
    assert ChunkResult.model_validate_json(again).chunk_index == victim.chunk_index
    # finalize is idempotent: a completed document whose result verifies is left alone
    assert await runtime.finalizer.finalize(started.document.id) is FinalizeOutcome.ALREADY_DONE
    assert await runtime.service.get_document(started.document.id) == document


async def test_stored_result_is_reused_without_ocr(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, pool: asyncpg.Pool
) -> None:
    """A worker that stored its result but died before completing costs no OCR: the next
    attempt finds the result where the same input and engine put it, and it verifies."""
    make_born_digital_pdf(tmp_path / "r.pdf", pages=2, seed=4)
    started = await start(runtime, arq_redis, tmp_path / "r.pdf", matter_id, chunk_pages=2)
    (chunk,) = started.chunks
    claimed = await runtime.service.claim_chunk(chunk.id, "dying-worker")
    assert claimed is not None
    result = await runtime.processor.recognize(claimed)
    data = result.to_bytes()
    stored = await runtime.processor.put_result(runtime.processor.result_path(claimed), data)
    # ... and here the worker died: its heartbeat ages past the threshold
    await pool.execute(
        "update document_ocr_chunks set heartbeat_at = now() - interval '1 hour' where id = $1", chunk.id
    )
    report = await sweep(runtime.service, ArqJobQueue(arq_redis))
    assert (report.stale, report.retried) == (1, 1)

    assert await runtime.processor.process(str(chunk.id)) is ChunkOutcome.REUSED
    done = await runtime.service.get_chunk(chunk.id)
    assert (done.status, done.attempt_count, done.result_checksum) == (
        ChunkStatus.COMPLETED,
        2,
        stored.sha256,
    )


async def test_reconciler_re_enqueues_after_redis_lost_everything(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    texts = make_born_digital_pdf(tmp_path / "f.pdf", pages=4, seed=5)
    started = await start(runtime, arq_redis, tmp_path / "f.pdf", matter_id, chunk_pages=2)
    await arq_redis.flushdb()  # Redis restarted without persistence
    assert await arq_redis.zcard(QUEUE_NAME) == 0

    report = await sweep(runtime.service, ArqJobQueue(arq_redis))
    assert report.enqueued == 2
    assert (await sweep(runtime.service, ArqJobQueue(arq_redis))).enqueued == 0  # idempotent: same job ids
    worker = burst_worker(arq_redis, runtime)
    await worker.main()
    document = await runtime.service.get_document(started.document.id)
    assert document.ocr_status is DocumentStatus.COMPLETED
    assert len(texts) == document.page_count


async def test_a_page_that_cannot_be_read_fails_alone(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    from app.services.merge import read_merged
    from tests.factories import pdf_with_an_unreadable_page

    pdf_with_an_unreadable_page(tmp_path / "five.pdf", "ddhdd")
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        tmp_path / "five.pdf",
        matter_id=matter_id,
        engine="tesseract",
        chunk_pages=2,
        workers=2,
    )
    worker = burst_worker(arq_redis, runtime)
    await worker.main()

    chunks = await runtime.service.get_chunks_by_document(started.document.id)
    assert [(c.status, c.attempt_count, c.error_code) for c in chunks] == [
        (ChunkStatus.COMPLETED, 1, None)
    ] * 3
    document = await runtime.service.get_document(started.document.id)
    assert (document.ocr_status, document.pages_failed) == (DocumentStatus.COMPLETED, 1)
    assert document.progress_status.value == "completed_with_errors"
    merged = await read_merged(runtime.store, document)
    assert merged is not None
    assert [(f.page_number, f.code) for f in merged.failed_pages] == [(3, "page_too_large")]
    assert [bool(p.text) for p in merged.pages] == [True, True, False, True, True]
    assert merged.text().count("\f") == 4  # the failed page keeps its place
