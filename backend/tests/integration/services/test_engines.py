"""The engine is the document's: every chunk runs it, or fails at once with engine_unavailable.

The test runtime's default engine (settings.ocr_engine) is text-layer, so a
document that asked for another engine and got text-layer results would show
the old behaviour (the worker's engine instead of the document's).
"""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import asyncpg
from arq.connections import ArqRedis

from app.models.document import DocumentStatus
from app.models.ocr_chunk import ChunkStatus, DocumentOCRChunk
from app.models.results import ChunkResult
from app.pdf.samples import make_born_digital_pdf
from app.services.planner import StartedDocument, start_document
from app.services.queue import ArqJobQueue
from app.services.runtime import Runtime
from app.storage.base import get_verified
from tests.integration.conftest import burst_worker
from tests.ocr_runs import RecordingPool

ENGINES_HERE = {"auto", "tesseract", "text-layer", "null"}  # google-vision needs credentials


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


async def results(runtime: Runtime, document_id: UUID) -> list[tuple[DocumentOCRChunk, ChunkResult]]:
    """Each chunk row with its stored result, verified against the row's checksum."""
    pairs = []
    for chunk in await runtime.service.get_chunks_by_document(document_id):
        assert chunk.status is ChunkStatus.COMPLETED, chunk
        assert chunk.result_storage_path is not None
        assert chunk.result_checksum is not None
        data = await get_verified(runtime.store, chunk.result_storage_path, chunk.result_checksum)
        pairs.append((chunk, ChunkResult.model_validate_json(data)))
    return pairs


def result_objects(runtime: Runtime, matter_id: UUID, document_id: UUID) -> list[Path]:
    chunks = (
        runtime.settings.local_storage_dir
        / runtime.settings.storage_bucket
        / str(matter_id)
        / str(document_id)
        / "chunks"
    )
    return sorted(chunks.rglob("*")) if chunks.exists() else []


async def test_each_document_runs_its_own_engine_on_one_worker(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    assert runtime.settings.ocr_engine == "text-layer"
    make_born_digital_pdf(tmp_path / "null.pdf", pages=4, seed=61)
    texts = make_born_digital_pdf(tmp_path / "text.pdf", pages=4, seed=62)
    empty = await start(runtime, arq_redis, tmp_path / "null.pdf", matter_id, "null", chunk_pages=2)
    layered = await start(runtime, arq_redis, tmp_path / "text.pdf", matter_id, "text-layer", chunk_pages=2)
    assert [c.engine for c in empty.chunks] == ["null", "null"]  # carried to the rows at start

    pool = runtime.processor.executor = RecordingPool(runtime.executor)
    worker = burst_worker(arq_redis, runtime)
    await worker.main()
    assert (worker.jobs_complete, worker.jobs_failed) == (6, 0)  # four chunks, two merges

    null_results = await results(runtime, empty.document.id)
    assert [(c.engine, r.engine) for c, r in null_results] == [("null", "null")] * 2
    assert [(p.page_number, p.text) for _, r in null_results for p in r.pages] == [
        (n, "") for n in range(1, 5)
    ]
    assert all(c.result_storage_path.endswith("-null.json") for c, _ in null_results)  # type: ignore[union-attr]

    text_results = await results(runtime, layered.document.id)
    assert [(c.engine, r.engine) for c, r in text_results] == [("text-layer", "text-layer")] * 2
    assert [p.text.split() for _, r in text_results for p in r.pages] == [t.split() for t in texts]
    assert {p.source for _, r in text_results for p in r.pages} == {"text-layer"}

    # each chunk ran once, with its document's engine
    assert sorted(pool.runs) == [("null", 1), ("null", 3), ("text-layer", 1), ("text-layer", 3)]
    for started in (empty, layered):
        document = await runtime.service.get_document(started.document.id)
        assert document.ocr_status is DocumentStatus.COMPLETED


async def test_engine_the_worker_cannot_build_fails_the_chunk_at_once(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    make_born_digital_pdf(tmp_path / "vision.pdf", pages=5, seed=63)
    started = await start(runtime, arq_redis, tmp_path / "vision.pdf", matter_id, "google-vision", 5)
    (chunk,) = started.chunks
    assert chunk.engine == "google-vision"

    pool = runtime.processor.executor = RecordingPool(runtime.executor)
    await burst_worker(arq_redis, runtime).main()

    failed = await runtime.service.get_chunk(chunk.id)
    assert (failed.status, failed.error_code, failed.error_retryable, failed.attempt_count) == (
        ChunkStatus.FAILED,
        "engine_unavailable",
        False,
        1,
    )
    assert "credentials" in (failed.error_message or "")
    # permanent: the automatic retry (the sweep's) leaves it failed, as trying again cannot help
    assert await runtime.service.retry_failed_chunks(started.document.id) == []
    document = await runtime.service.get_document(started.document.id)
    assert document.ocr_status is DocumentStatus.FAILED
    # one try, with the document's engine (it failed to build); no engine ran in its place
    assert pool.runs == [("google-vision", 1)]
    assert (failed.result_storage_path, failed.result_checksum) == (None, None)
    assert result_objects(runtime, matter_id, started.document.id) == []
    assert await arq_redis.zcard("chunk-ocr:queue") == 0  # and nothing queued for later


async def test_unknown_engine_on_the_row_fails_the_chunk_at_once(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, pool: asyncpg.Pool
) -> None:
    make_born_digital_pdf(tmp_path / "odd.pdf", pages=2, seed=64)
    started = await start(runtime, arq_redis, tmp_path / "odd.pdf", matter_id, "text-layer", 2)
    (chunk,) = started.chunks
    # as if a newer release wrote an engine this worker has never heard of
    await pool.execute("update document_ocr_chunks set engine = 'hieroglyph-9000' where id = $1", chunk.id)

    pool = runtime.processor.executor = RecordingPool(runtime.executor)
    await burst_worker(arq_redis, runtime).main()

    failed = await runtime.service.get_chunk(chunk.id)
    assert (failed.status, failed.error_code, failed.error_retryable, failed.attempt_count) == (
        ChunkStatus.FAILED,
        "engine_unavailable",
        False,
        1,
    )
    assert "hieroglyph-9000" in (failed.error_message or "")
    assert (await runtime.service.get_document(started.document.id)).ocr_status is DocumentStatus.FAILED
    # the worker's own default (text-layer) did not stand in for it
    assert pool.runs == [("hieroglyph-9000", 1)]
    assert result_objects(runtime, matter_id, started.document.id) == []


async def test_engine_catalog_after_the_probe(runtime: Runtime) -> None:
    await runtime.probe
    assert set(runtime.engines.available) == ENGINES_HERE
    assert all(runtime.engines.versions[name] for name in ENGINES_HERE)
    assert set(runtime.engines.reasons) == {"google-vision"}
    assert "credentials" in runtime.engines.reasons["google-vision"]
