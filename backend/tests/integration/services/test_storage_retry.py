"""A blob store failing on a result upload: a transient error is retried without a second OCR,
a permanent one fails the chunk at once.

Runs on the Supabase backends (tests/postgrest_fake.py answers PostgREST from
the real database, tests/storage_fake.py stands in for Storage at the HTTP
level and fails the uploads we choose). Engine runs are counted at the OCR
pool (tests/ocr_runs.py says why not by log events).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from uuid import UUID

import asyncpg
import httpx
import pytest
import respx
from arq.connections import ArqRedis
from pydantic import SecretStr

from app.core.backoff import Backoff
from app.core.config import Settings, StorageBackend
from app.models.document import DocumentStatus
from app.models.ocr_chunk import ChunkStatus
from app.models.results import MergedResult
from app.pdf.samples import make_born_digital_pdf
from app.services.planner import StartedDocument, start_document
from app.services.queue import ArqJobQueue
from app.services.runtime import Runtime, build_runtime
from tests.integration.conftest import burst_worker
from tests.ocr_runs import RecordingPool
from tests.postgrest_fake import SERVICE_ROLE_KEY, SUPABASE_URL, FakePostgrest
from tests.storage_fake import STORAGE_URL, FakeStorage


def is_chunk_result(name: str) -> bool:
    return "/chunks/" in name


def storage_answer(http_status: int, status_code: str, error: str, message: str) -> httpx.Response:
    """An error as Storage sends it: the real status may be in the body's statusCode."""
    return httpx.Response(http_status, json={"statusCode": status_code, "error": error, "message": message})


def unavailable() -> httpx.Response:
    return storage_answer(503, "503", "ServiceUnavailable", "upstream connect error")


def refused() -> httpx.Response:
    return storage_answer(400, "403", "Unauthorized", "new row violates row-level security policy")


def result_uploads(storage: FakeStorage) -> list[httpx.Request]:
    return [r for r in storage.requests if r.method == "POST" and "/chunks/" in r.url.path]


@pytest.fixture
async def backends(
    pipeline_settings: Settings, arq_redis: ArqRedis, pool: asyncpg.Pool
) -> AsyncIterator[tuple[Runtime, FakeStorage, RecordingPool]]:
    rest, storage = FakePostgrest(pool), FakeStorage()
    settings = pipeline_settings.model_copy(
        update={
            "database_url": None,
            "supabase_url": SUPABASE_URL,
            "supabase_service_role_key": SecretStr(SERVICE_ROLE_KEY),
            "storage_backend": StorageBackend.SUPABASE,
        }
    )
    with respx.mock(assert_all_called=False) as router:
        router.route(url__startswith=f"{SUPABASE_URL}/rest/v1/").mock(side_effect=rest.handle)
        router.route(url__startswith=f"{STORAGE_URL}/").mock(side_effect=storage.handle)
        runtime = await build_runtime(settings, ArqJobQueue(arq_redis), worker_id="storage-retry-worker")
        # waits of milliseconds, so that the test does not sleep through the production backoff
        runtime.processor.storage_backoff = Backoff(base=0.01, cap=0.05)
        pool = runtime.processor.executor = RecordingPool(runtime.executor)
        yield runtime, storage, pool
        await runtime.close()


async def start(
    runtime: Runtime, arq_redis: ArqRedis, pdf: Path, matter_id: UUID, chunk_pages: int
) -> StartedDocument:
    return await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        pdf,
        matter_id=matter_id,
        engine="text-layer",
        chunk_pages=chunk_pages,
    )


async def test_result_upload_failing_twice_costs_one_ocr_per_chunk(
    backends: tuple[Runtime, FakeStorage, RecordingPool], arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    runtime, storage, pool = backends
    assert runtime.processor.storage_attempts > 2  # two failures are within the upload's budget
    texts = make_born_digital_pdf(tmp_path / "doc.pdf", pages=6, seed=81)
    started = await start(runtime, arq_redis, tmp_path / "doc.pdf", matter_id, chunk_pages=2)
    assert len(started.chunks) == 3
    storage.fail_uploads = [(is_chunk_result, unavailable()), (is_chunk_result, unavailable())]

    worker = burst_worker(arq_redis, runtime)
    await worker.main()
    assert (worker.jobs_complete, worker.jobs_failed) == (4, 0)

    assert storage.fail_uploads == []  # both failures were served ...
    assert len(result_uploads(storage)) == 3 + 2  # ... and each failed upload was sent again
    assert sorted(pool.runs) == [("text-layer", 1), ("text-layer", 3), ("text-layer", 5)]  # one OCR each

    rows = await runtime.service.get_chunks_by_document(started.document.id)
    assert [(c.status, c.attempt_count, c.error_code) for c in rows] == [(ChunkStatus.COMPLETED, 1, None)] * 3
    for row in rows:
        assert row.result_storage_path is not None
        assert row.result_storage_path in storage.objects
    document = await runtime.service.get_document(started.document.id)
    assert document.ocr_status is DocumentStatus.COMPLETED
    assert document.result_storage_path is not None
    merged = MergedResult.model_validate_json(storage.objects[document.result_storage_path].data)
    assert [p.text.split() for p in merged.pages] == [t.split() for t in texts]


async def test_result_upload_refused_fails_the_chunk_at_once(
    backends: tuple[Runtime, FakeStorage, RecordingPool], arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    runtime, storage, pool = backends
    make_born_digital_pdf(tmp_path / "doc.pdf", pages=2, seed=82)
    started = await start(runtime, arq_redis, tmp_path / "doc.pdf", matter_id, chunk_pages=2)
    (chunk,) = started.chunks
    storage.fail_uploads = [(is_chunk_result, refused())]

    await burst_worker(arq_redis, runtime).main()

    failed = await runtime.service.get_chunk(chunk.id)
    assert (failed.status, failed.error_code, failed.error_retryable, failed.attempt_count) == (
        ChunkStatus.FAILED,
        "storage_refused",
        False,
        1,
    )
    assert len(result_uploads(storage)) == 1  # refused once, never sent again
    assert pool.runs == [("text-layer", 1)]  # the OCR ran once; the refusal did not send it round again
    assert not [name for name in storage.objects if is_chunk_result(name)]
    assert failed.result_storage_path is None
    assert await runtime.service.retry_failed_chunks(started.document.id) == []  # not retried later either
    assert (await runtime.service.get_document(started.document.id)).ocr_status is DocumentStatus.FAILED


async def test_a_store_away_past_an_attempt_costs_no_second_ocr(
    backends: tuple[Runtime, FakeStorage, RecordingPool], arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    """The upload fails past its retries (a full disk, a store away for minutes): the attempt
    fails, retryable, and the next one, on this worker, stores what the first read. Each attempt
    read the pages again (tesseract: minutes a chunk)."""
    runtime, storage, pool = backends
    runtime.processor.storage_attempts = 2
    runtime.processor.service.settings = runtime.service.settings.model_copy(
        update={"ocr_retry_base_seconds": 0.0, "ocr_retry_cap_seconds": 0.0}
    )
    texts = make_born_digital_pdf(tmp_path / "doc.pdf", pages=2, seed=83)
    started = await start(runtime, arq_redis, tmp_path / "doc.pdf", matter_id, chunk_pages=2)
    (chunk,) = started.chunks
    storage.fail_uploads = [(is_chunk_result, unavailable()), (is_chunk_result, unavailable())]

    await burst_worker(arq_redis, runtime).main()

    done = await runtime.service.get_chunk(chunk.id)
    assert (done.status, done.attempt_count) == (ChunkStatus.COMPLETED, 2)  # the first attempt failed
    assert pool.runs == [("text-layer", 1)]  # and the second read nothing again
    document = await runtime.service.get_document(started.document.id)
    assert document.ocr_status is DocumentStatus.COMPLETED
    assert document.result_storage_path is not None
    merged = MergedResult.model_validate_json(storage.objects[document.result_storage_path].data)
    assert [p.text.split() for p in merged.pages] == [t.split() for t in texts]
