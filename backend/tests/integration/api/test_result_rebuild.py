"""GET /documents/{id}/ocr/result when the merged result went missing or was altered: rebuilt
from verified chunk results, or handed to a worker when a chunk must be OCR'd again first."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import asyncpg
import httpx
import pytest
from arq.connections import ArqRedis
from arq.jobs import Job

from app.models.document import Document
from app.models.results import ChunkResult, MergedResult
from app.pdf.samples import make_born_digital_pdf
from app.services.queue import FINALIZE_DOCUMENT_JOB, QUEUE_NAME, finalize_job_id
from app.services.runtime import Runtime
from app.storage.base import get_verified
from app.storage.paths import merged_json_path
from tests.factories import make_matter, make_user
from tests.integration.api.conftest import bearer
from tests.integration.conftest import burst_worker, heartbeating

TAMPER = (b'"text":"', b'"text":"TAMPERED ')


@pytest.fixture
async def member(pool: asyncpg.Pool) -> tuple[UUID, UUID]:
    matter = await make_matter(pool, "Rebuild")
    return matter, await make_user(pool, matter)


async def completed_document(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    pdf: Path,
) -> Document:
    """Upload through the API and let a real arq worker OCR and merge it; the queue ends empty."""
    matter, user = member
    with pdf.open("rb") as handle:
        created = await client.post(
            "/documents",
            headers=bearer(user),
            data={"matterId": str(matter), "chunkPages": "2", "engine": "text-layer"},
            files={"file": (pdf.name, handle, "application/pdf")},
        )
    assert created.status_code == 201, created.text
    worker = burst_worker(arq_redis, runtime)
    await worker.main()
    assert (worker.jobs_complete, worker.jobs_failed) == (4, 0)  # three chunks and the merge
    assert await arq_redis.zcard(QUEUE_NAME) == 0
    document = await runtime.service.get_document(created.json()["document"]["id"])
    assert document.result_checksum is not None
    return document


def stored(runtime: Runtime, path: str) -> Path:
    return runtime.settings.local_storage_dir / runtime.settings.storage_bucket / path


async def get_result(client: httpx.AsyncClient, user: UUID, document: Document) -> httpx.Response:
    return await client.get(f"/documents/{document.id}/ocr/result", headers=bearer(user))


def page_words(response: httpx.Response) -> list[list[str]]:
    return [p["text"].split() for p in response.json()["pages"]]


async def verifies_against_the_row(runtime: Runtime, document_id: UUID) -> MergedResult:
    row = await runtime.service.get_document(document_id)
    assert row.result_storage_path is not None
    assert row.result_checksum is not None
    data = await get_verified(runtime.store, row.result_storage_path, row.result_checksum)
    return MergedResult.model_validate_json(data)


async def test_a_deleted_result_is_rebuilt(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    texts = make_born_digital_pdf(tmp_path / "d.pdf", pages=6, seed=61)
    document = await completed_document(client, runtime, arq_redis, member, tmp_path / "d.pdf")
    result_file = stored(runtime, merged_json_path(document.matter_id, document.id))
    result_file.unlink()

    response = await get_result(client, member[1], document)

    assert response.status_code == 200, response.text
    assert [p["pageNumber"] for p in response.json()["pages"]] == [1, 2, 3, 4, 5, 6]
    assert page_words(response) == [t.split() for t in texts]
    assert result_file.exists()
    merged = await verifies_against_the_row(runtime, document.id)
    assert [p.text.split() for p in merged.pages] == [t.split() for t in texts]
    rebuilt = await runtime.service.get_document(document.id)
    assert (rebuilt.result_checksum, rebuilt.finalize_worker_id, rebuilt.finalize_attempt) == (
        document.result_checksum,
        None,
        2,
    )
    assert await arq_redis.zcard(QUEUE_NAME) == 0  # no OCR was needed, so no worker was asked


async def test_a_tampered_result_is_never_served_and_is_rewritten(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    texts = make_born_digital_pdf(tmp_path / "t.pdf", pages=6, seed=62)
    document = await completed_document(client, runtime, arq_redis, member, tmp_path / "t.pdf")
    result_file = stored(runtime, merged_json_path(document.matter_id, document.id))
    good = result_file.read_bytes()
    tampered = good.replace(*TAMPER, 1)
    MergedResult.model_validate_json(tampered)  # still a well-formed result: only the checksum tells
    result_file.write_bytes(tampered)

    response = await get_result(client, member[1], document)

    assert response.status_code == 200, response.text
    assert "TAMPERED" not in response.text
    assert page_words(response) == [t.split() for t in texts]
    assert result_file.read_bytes() == good
    await verifies_against_the_row(runtime, document.id)


async def test_a_bad_chunk_result_hands_the_rebuild_to_a_worker(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    texts = make_born_digital_pdf(tmp_path / "c.pdf", pages=6, seed=63)
    document = await completed_document(client, runtime, arq_redis, member, tmp_path / "c.pdf")
    result_file = stored(runtime, merged_json_path(document.matter_id, document.id))
    tampered_result = result_file.read_bytes().replace(*TAMPER, 1)
    result_file.write_bytes(tampered_result)
    chunk = (await runtime.service.get_chunks_by_document(document.id))[1]
    assert chunk.result_storage_path is not None
    assert chunk.result_checksum is not None
    chunk_file = stored(runtime, chunk.result_storage_path)
    good_chunk = chunk_file.read_bytes()
    chunk_file.write_bytes(good_chunk.replace(*TAMPER, 1))

    response = await get_result(client, member[1], document)

    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "result_rebuilding"
    assert result_file.read_bytes() == tampered_result  # the API wrote nothing
    job = Job(finalize_job_id(document.id), arq_redis, _queue_name=QUEUE_NAME)
    info = await job.info()
    assert info is not None
    assert (info.function, info.args) == (FINALIZE_DOCUMENT_JOB, (str(document.id),))
    handed = await runtime.service.get_document(document.id)
    assert handed.finalize_worker_id is None  # released, so the worker can take it at once

    worker = burst_worker(arq_redis, runtime)
    await worker.main()
    assert (worker.jobs_complete, worker.jobs_failed) == (1, 0)

    # the worker OCR'd the chunk again: its result is back at its path and verifies against the row
    redone = await runtime.service.get_chunk(chunk.id)
    assert redone.result_storage_path is not None
    assert redone.result_checksum is not None
    assert chunk_file.read_bytes() == good_chunk
    data = await get_verified(runtime.store, redone.result_storage_path, redone.result_checksum)
    assert ChunkResult.model_validate_json(data).chunk_index == chunk.chunk_index
    merged = await verifies_against_the_row(runtime, document.id)
    assert "TAMPERED" not in merged.text()
    response = await get_result(client, member[1], document)
    assert response.status_code == 200, response.text
    assert "TAMPERED" not in response.text
    assert page_words(response) == [t.split() for t in texts]


async def test_no_rebuild_while_another_merge_holds_the_lease(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    make_born_digital_pdf(tmp_path / "l.pdf", pages=6, seed=64)
    document = await completed_document(client, runtime, arq_redis, member, tmp_path / "l.pdf")
    held = await runtime.service.claim_finalize(document.id, "another-worker")
    assert held is not None
    result_file = stored(runtime, merged_json_path(document.matter_id, document.id))
    result_file.unlink()

    async with heartbeating(runtime.service, held.finalize_lease):
        response = await get_result(client, member[1], document)

    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "result_rebuilding"
    assert not result_file.exists()
    still = await runtime.service.get_document(document.id)
    assert (still.finalize_worker_id, still.finalize_attempt) == ("another-worker", held.finalize_attempt)
    assert await runtime.service.heartbeat_finalize(held.finalize_lease)  # the holder's lease is intact

    # once the holder lets go, the next request rebuilds it
    assert await runtime.service.release_finalize(held.finalize_lease)
    response = await get_result(client, member[1], document)
    assert response.status_code == 200, response.text
    assert result_file.exists()
    await verifies_against_the_row(runtime, document.id)


async def test_a_result_that_cannot_be_rebuilt_fails_the_document_once(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    """The merged result, one chunk's result and that chunk's input are all gone: nothing can
    rebuild it. The repair fails the document (a person must look), instead of every read asking
    a worker for the same doomed repair again."""
    make_born_digital_pdf(tmp_path / "gone.pdf", pages=6, seed=64)
    document = await completed_document(client, runtime, arq_redis, member, tmp_path / "gone.pdf")
    (chunk, *_) = await runtime.service.get_chunks_by_document(document.id)
    assert chunk.result_storage_path is not None
    assert chunk.input_storage_path is not None
    for path in (
        merged_json_path(document.matter_id, document.id),
        chunk.result_storage_path,
        chunk.input_storage_path,
    ):
        stored(runtime, path).unlink()

    first = await get_result(client, member[1], document)
    assert (first.status_code, first.json()["error"]["code"]) == (503, "result_rebuilding")
    worker = burst_worker(arq_redis, runtime)
    await worker.main()
    assert worker.jobs_complete == 1  # the repair ran, and failed for good

    failed = await runtime.service.get_document(document.id)
    assert failed.ocr_status == "failed"
    assert failed.error_message is not None
    assert chunk.input_storage_path in failed.error_message
    attempts = failed.finalize_attempt
    again = await get_result(client, member[1], document)
    assert (again.status_code, again.json()["error"]["code"]) == (409, "result_not_ready")
    assert await arq_redis.zcard(QUEUE_NAME) == 0  # nothing asked of the workers any more
    assert (await runtime.service.get_document(document.id)).finalize_attempt == attempts
