"""The language is the document's: it reaches every chunk, the worker reads in it (or fails the
chunk for good when it cannot), and the results say which it was. Real tesseract, a real arq
worker on the real database and Redis."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

from arq.connections import ArqRedis

from app.core.config import Settings
from app.models.document import DocumentStatus
from app.models.ocr_chunk import ChunkStatus
from app.models.results import ChunkResult
from app.services.documents import Documents
from app.services.planner import start_document
from app.services.queue import ArqJobQueue
from app.services.runtime import Runtime
from app.storage.base import get_verified
from app.worker import PROBE_ENGINES, worker_settings
from app.worker_loop import ChunkOcrWorker
from tests.corpus.languages import russian_scan
from tests.integration.conftest import burst_worker
from tests.ocr_runs import RecordingPool
from tests.pdf_factories import cer


async def test_a_russian_document_is_read_in_russian_from_row_to_result(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    fixture = russian_scan(tmp_path, pages=2)
    documents = Documents(runtime.service, runtime.store, ArqJobQueue(arq_redis))
    started = await documents.submit(
        fixture.path, matter_id=matter_id, engine="tesseract", language="rus", chunk_pages=1
    )
    assert started.document.language == "rus"
    assert [c.language for c in started.chunks] == ["rus", "rus"]  # carried to the rows at start

    pool = runtime.processor.executor = RecordingPool(runtime.executor)
    await burst_worker(arq_redis, runtime).main()

    assert pool.languages == ["rus", "rus"]
    for chunk in await runtime.service.get_chunks_by_document(started.document.id):
        assert chunk.status is ChunkStatus.COMPLETED
        assert chunk.result_storage_path is not None
        assert chunk.result_checksum is not None
        assert chunk.result_storage_path.endswith("-rus-tesseract.json")
        stored = await get_verified(runtime.store, chunk.result_storage_path, chunk.result_checksum)
        assert ChunkResult.model_validate_json(stored).language == "rus"
    document, merged = await documents.result_of(started.document.id)
    assert (document.ocr_status, document.language, merged.language) == (
        DocumentStatus.COMPLETED,
        "rus",
        "rus",
    )
    error = cer("\f".join(fixture.expected), merged.text())
    assert error < 0.02, f"character error rate {error:.2%}"


async def test_a_worker_without_the_language_fails_the_chunk_for_good(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    """Well formed, but no tesseract data here: the chunk fails at once with engine_unavailable,
    and nothing is read in another language in its place."""
    fixture = russian_scan(tmp_path)
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        fixture.path,
        matter_id=matter_id,
        engine="tesseract",
        language="rus+xyz",
    )
    (chunk,) = started.chunks
    pool = runtime.processor.executor = RecordingPool(runtime.executor)
    await burst_worker(arq_redis, runtime).main()

    failed = await runtime.service.get_chunk(chunk.id)
    assert (failed.status, failed.error_code, failed.error_retryable, failed.attempt_count) == (
        ChunkStatus.FAILED,
        "engine_unavailable",
        False,
        1,
    )
    assert (failed.error_message or "").startswith("language 'xyz' is not installed for tesseract")
    assert await runtime.service.retry_failed_chunks(started.document.id) == []  # permanent
    assert (await runtime.service.get_document(started.document.id)).ocr_status is DocumentStatus.FAILED
    assert (pool.runs, pool.languages) == ([("tesseract", 1)], ["rus+xyz"])
    assert (failed.result_storage_path, failed.result_checksum) == (None, None)
    bucket = runtime.settings.local_storage_dir / runtime.settings.storage_bucket
    assert not list(bucket.rglob("*/chunks/*"))


async def test_a_worker_advertises_the_languages_its_tesseract_reads(
    settings: Settings, arq_redis: ArqRedis, tmp_path: Path
) -> None:
    own = settings.model_copy(
        update={"local_storage_dir": tmp_path / "storage", "ocr_engine": "null", "ocr_processes": 1}
    )
    queue = ArqJobQueue(arq_redis)
    assert await queue.worker_languages() == []
    worker = ChunkOcrWorker(
        **{**worker_settings(own), "health_check_interval": 0}, burst=True, handle_signals=False
    )
    try:
        await worker.main()
        runtime = worker.ctx["runtime"]
        await runtime.probe
        assert {"eng", "rus", "deu"} <= set(runtime.engines.languages)
        assert "osd" not in runtime.engines.languages
        await worker.record_health()  # what the worker does every health_check_interval
    finally:
        await worker.close()
    (advertised,) = await queue.worker_languages()
    assert advertised == frozenset(runtime.engines.languages)


async def test_a_worker_that_probes_no_engine_advertises_none(
    settings: Settings, arq_redis: ArqRedis, tmp_path: Path
) -> None:
    """`chunk-ocr run`'s worker knows only its own engine: advertised alone, it had an API on the
    same Redis refuse every other engine (422 engine_unavailable) for ten minutes."""
    own = settings.model_copy(
        update={"local_storage_dir": tmp_path / "storage", "ocr_engine": "text-layer", "ocr_processes": 1}
    )
    queue = ArqJobQueue(arq_redis)
    options = worker_settings(own)
    options["ctx"][PROBE_ENGINES] = False  # as app.local.workers starts it
    worker = ChunkOcrWorker(**{**options, "health_check_interval": 0}, burst=True, handle_signals=False)
    try:
        await worker.main()
        runtime = worker.ctx["runtime"]
        await runtime.probe
        assert runtime.engines.available == ["text-layer"]
        await worker.record_health()
    finally:
        await worker.close()
    assert await queue.engine_offered("tesseract") is None  # nothing said: accepted
    assert await queue.engine_offered("text-layer") is None
