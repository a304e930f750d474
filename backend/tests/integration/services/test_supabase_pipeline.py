"""The whole pipeline on the Supabase backends: PostgREST and Storage answered at the HTTP level.

The chunk repository is SupabaseChunkRepository (supabase-py, PostgREST RPC)
and the blob store is SupabaseBlobStore (storage3); tests/postgrest_fake.py
answers PostgREST from the real migrated database and tests/storage_fake.py
keeps objects in memory. Queue and workers are the real arq on Redis.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from uuid import UUID

import asyncpg
import pytest
import respx
from arq.connections import ArqRedis
from pydantic import SecretStr

from app.core.config import Settings, StorageBackend
from app.db.supabase import SupabaseChunkRepository
from app.models.document import DocumentStatus
from app.models.ocr_chunk import ChunkStatus
from app.models.results import MergedResult
from app.pdf.samples import make_born_digital_pdf
from app.services.planner import start_document
from app.services.queue import ArqJobQueue
from app.services.runtime import Runtime, build_runtime
from app.storage.supabase import SupabaseBlobStore
from tests.integration.conftest import burst_worker
from tests.postgrest_fake import SERVICE_ROLE_KEY, SUPABASE_URL, FakePostgrest
from tests.storage_fake import STORAGE_URL, FakeStorage


@pytest.fixture
async def supabase_backends(
    pipeline_settings: Settings, arq_redis: ArqRedis, pool: asyncpg.Pool
) -> AsyncIterator[tuple[Runtime, FakePostgrest, FakeStorage]]:
    rest, storage = FakePostgrest(pool), FakeStorage()
    settings = pipeline_settings.model_copy(
        update={
            "database_url": None,  # nothing may reach PostgreSQL except through PostgREST
            "supabase_url": SUPABASE_URL,
            "supabase_service_role_key": SecretStr(SERVICE_ROLE_KEY),
            "storage_backend": StorageBackend.SUPABASE,
        }
    )
    with respx.mock(assert_all_called=False) as router:
        router.route(url__startswith=f"{SUPABASE_URL}/rest/v1/").mock(side_effect=rest.handle)
        router.route(url__startswith=f"{STORAGE_URL}/").mock(side_effect=storage.handle)
        runtime = await build_runtime(settings, ArqJobQueue(arq_redis), worker_id="supabase-worker")
        yield runtime, rest, storage
        await runtime.close()


async def test_document_on_supabase_backends(
    supabase_backends: tuple[Runtime, FakePostgrest, FakeStorage],
    arq_redis: ArqRedis,
    pool: asyncpg.Pool,
    matter_id: UUID,
    tmp_path: Path,
) -> None:
    runtime, rest, storage = supabase_backends
    assert isinstance(runtime.service.repository, SupabaseChunkRepository)
    assert isinstance(runtime.store, SupabaseBlobStore)
    texts = make_born_digital_pdf(tmp_path / "doc.pdf", pages=7, seed=41)
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        tmp_path / "doc.pdf",
        matter_id=matter_id,
        engine="text-layer",
        chunk_pages=3,
        workers=2,
    )
    worker = burst_worker(arq_redis, runtime)
    await worker.main()
    assert (worker.jobs_complete, worker.jobs_failed) == (4, 0)

    document = await runtime.service.get_document(started.document.id)
    assert document.ocr_status is DocumentStatus.COMPLETED
    assert document.result_storage_path is not None
    merged_object = storage.objects[document.result_storage_path]
    assert hashlib.sha256(merged_object.data).hexdigest() == document.result_checksum
    merged = MergedResult.model_validate_json(merged_object.data)
    assert [p.text.split() for p in merged.pages] == [t.split() for t in texts]

    rows = await pool.fetch(
        "select * from document_ocr_chunks where document_id = $1 order by chunk_index", document.id
    )
    assert [r["status"] for r in rows] == [ChunkStatus.COMPLETED.value] * 3
    for row in rows:
        result = storage.objects[row["result_storage_path"]]
        assert hashlib.sha256(result.data).hexdigest() == row["result_checksum"]
        assert result.metadata == {"sha256": row["result_checksum"]}
        assert result.content_type == "application/json"
        pdf_input = storage.objects[row["input_storage_path"]]
        assert (pdf_input.content_type, hashlib.sha256(pdf_input.data).hexdigest()) == (
            "application/pdf",
            row["input_checksum"],
        )
    called = {c.path.removeprefix("rpc/") for c in rest.calls if c.path.startswith("rpc/")}
    assert {
        "ocr_start_document",
        "ocr_claim_for_holder",
        "ocr_heartbeat_chunk",
        "ocr_complete_chunk",
        "ocr_chunk_progress",
        "ocr_claim_finalize",
        "ocr_complete_finalize",
    } <= called
