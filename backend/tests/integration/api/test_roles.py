"""Roles through the HTTP API: a viewer reads, owners and members also act, outsiders see nothing.

Every (role, route) pair of the document-scoped routes: viewers get 403
`forbidden` on start and retry and nothing changes; non-members get 404 on
every route (ids do not leak); owners and members are allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from uuid import UUID, uuid4

import asyncpg
import httpx
import pytest
from arq.connections import ArqRedis

from app.models.ocr_chunk import ChunkStatus
from app.pdf.samples import make_born_digital_pdf
from app.services.ocr_chunk_service import OCRChunkService
from app.services.runtime import Runtime
from tests.factories import make_document, make_matter, make_user, ranges
from tests.integration.api.conftest import bearer
from tests.integration.conftest import burst_worker

ROLES = ["owner", "member", "viewer", "outsider"]


@dataclass
class Matter:
    id: UUID
    users: dict[str, UUID]  # by role; "outsider" belongs to another matter only


@pytest.fixture
async def matter(pool: asyncpg.Pool) -> Matter:
    matter_id, elsewhere = await make_matter(pool, "Roles"), await make_matter(pool, "Elsewhere")
    users = {role: await make_user(pool, matter_id, role=role) for role in ("owner", "member", "viewer")}
    users["outsider"] = await make_user(pool, elsewhere, role="owner")  # an owner, but of another matter
    return Matter(matter_id, users)


async def upload(
    client: httpx.AsyncClient, user: UUID, matter_id: UUID, pdf: Path, **form: str
) -> httpx.Response:
    with pdf.open("rb") as handle:
        return await client.post(
            "/documents",
            headers=bearer(user),
            data={"matterId": str(matter_id), **form},
            files={"file": (pdf.name, handle, "application/pdf")},
        )


async def registered(client: httpx.AsyncClient, matter: Matter, tmp_path: Path) -> str:
    """A document uploaded by a member with start=false: pending, with its source stored."""
    make_born_digital_pdf(tmp_path / "later.pdf", pages=2)
    created = await upload(
        client, matter.users["member"], matter.id, tmp_path / "later.pdf", start="false", engine="text-layer"
    )
    assert created.status_code == 201, created.text
    document_id: str = created.json()["document"]["id"]
    return document_id


async def with_a_failed_chunk(pool: asyncpg.Pool, service: OCRChunkService, matter: Matter) -> UUID:
    """A document of the matter with two chunks, the first failed for good (plain SQL + the service)."""
    document_id = await make_document(pool, matter.id, page_count=2)
    first, _ = await service.create_chunks_for_document(document_id, ranges(2, 1))
    claimed = await service.claim_chunk(first.id, "worker-1")
    assert claimed is not None
    await service.fail_chunk(claimed.lease, error_code="tesseract_failed", error_message="x", retryable=False)
    return document_id


def error_code(response: httpx.Response) -> str:
    code: str = response.json()["error"]["code"]
    return code


# -- reading: every member, whatever the role ------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
async def test_reading_routes(
    client: httpx.AsyncClient, pool: asyncpg.Pool, service: OCRChunkService, matter: Matter, role: str
) -> None:
    document_id = await with_a_failed_chunk(pool, service, matter)
    headers = bearer(matter.users[role])
    progress = await client.get(f"/documents/{document_id}/ocr/progress", headers=headers)
    chunks = await client.get(f"/documents/{document_id}/ocr/chunks", headers=headers)
    result = await client.get(f"/documents/{document_id}/ocr/result", headers=headers)
    if role == "outsider":
        assert [(r.status_code, error_code(r)) for r in (progress, chunks, result)] == [
            (404, "document_not_found")
        ] * 3
        return
    assert progress.status_code == 200, progress.text
    assert (progress.json()["failed"], progress.json()["pending"]) == (1, 1)
    assert chunks.status_code == 200, chunks.text
    assert [c["status"] for c in chunks.json()] == ["failed", "pending"]
    assert (result.status_code, error_code(result)) == (409, "result_not_ready")


@pytest.mark.parametrize("role", ROLES)
async def test_reading_a_completed_result(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    matter: Matter,
    tmp_path: Path,
    role: str,
) -> None:
    make_born_digital_pdf(tmp_path / "done.pdf", pages=2)
    created = await upload(
        client, matter.users["member"], matter.id, tmp_path / "done.pdf", engine="text-layer"
    )
    assert created.status_code == 201, created.text
    document_id = created.json()["document"]["id"]
    await burst_worker(arq_redis, runtime).main()
    result = await client.get(f"/documents/{document_id}/ocr/result", headers=bearer(matter.users[role]))
    if role == "outsider":
        assert (result.status_code, error_code(result)) == (404, "document_not_found")
    else:
        assert result.status_code == 200, result.text
        assert result.json()["pageCount"] == 2


# -- acting: owners and members; a viewer is refused with 403, an outsider with 404 -----------


@pytest.mark.parametrize(
    ("role", "status"), [("owner", 202), ("member", 202), ("viewer", 403), ("outsider", 404)]
)
async def test_start(
    client: httpx.AsyncClient,
    service: OCRChunkService,
    matter: Matter,
    tmp_path: Path,
    role: str,
    status: int,
) -> None:
    document_id = await registered(client, matter, tmp_path)
    started = await client.post(
        f"/documents/{document_id}/ocr", headers=bearer(matter.users[role]), data={"chunkPages": "1"}
    )
    assert started.status_code == status, started.text
    chunks = await service.get_chunks_by_document(document_id)
    if status == 202:
        assert started.json()["chunks"] == 2
        assert len(chunks) == 2
        return
    assert error_code(started) == {403: "forbidden", 404: "document_not_found"}[status]
    assert chunks == []  # nothing was planned
    assert (await service.get_document(document_id)).ocr_status.value == "pending"


@pytest.mark.parametrize(
    ("role", "status"), [("owner", 200), ("member", 200), ("viewer", 403), ("outsider", 404)]
)
async def test_retry(
    client: httpx.AsyncClient,
    pool: asyncpg.Pool,
    service: OCRChunkService,
    arq_redis: ArqRedis,
    matter: Matter,
    role: str,
    status: int,
) -> None:
    document_id = await with_a_failed_chunk(pool, service, matter)
    retried = await client.post(f"/documents/{document_id}/ocr/retry", headers=bearer(matter.users[role]))
    assert retried.status_code == status, retried.text
    statuses = [c.status for c in await service.get_chunks_by_document(document_id)]
    if status == 200:
        assert retried.json() == {"documentId": str(document_id), "retried": 1}
        assert statuses == [ChunkStatus.PENDING, ChunkStatus.PENDING]
        return
    assert error_code(retried) == {403: "forbidden", 404: "document_not_found"}[status]
    assert statuses == [ChunkStatus.FAILED, ChunkStatus.PENDING]  # the viewer's retry changed nothing


async def test_an_unknown_document_is_404_for_acting_routes_too(
    client: httpx.AsyncClient, matter: Matter
) -> None:
    missing = uuid4()
    for role in ("member", "viewer"):
        for path in (f"/documents/{missing}/ocr", f"/documents/{missing}/ocr/retry"):
            response = await client.post(path, headers=bearer(matter.users[role]))
            assert (response.status_code, error_code(response)) == (404, "document_not_found"), path


async def test_the_403_names_the_role_not_the_document(
    client: httpx.AsyncClient, pool: asyncpg.Pool, service: OCRChunkService, matter: Matter
) -> None:
    document_id = await with_a_failed_chunk(pool, service, matter)
    refused = await client.post(f"/documents/{document_id}/ocr/retry", headers=bearer(matter.users["viewer"]))
    assert refused.status_code == 403
    assert "viewer" in refused.json()["error"]["message"]


# -- the upload route: checked by require_writer in app.api.deps -------------------------------


@pytest.mark.parametrize(
    ("role", "status"), [("owner", 201), ("member", 201), ("viewer", 403), ("outsider", 404)]
)
async def test_upload_requires_a_writing_role(
    client: httpx.AsyncClient,
    pool: asyncpg.Pool,
    runtime: Runtime,
    matter: Matter,
    tmp_path: Path,
    role: str,
    status: int,
) -> None:
    make_born_digital_pdf(tmp_path / "new.pdf", pages=1)
    response = await upload(
        client, matter.users[role], matter.id, tmp_path / "new.pdf", start="false", engine="text-layer"
    )
    assert response.status_code == status, response.text
    documents = await pool.fetchval("select count(*) from documents where matter_id = $1", matter.id)
    if status == 201:
        assert documents == 1
        return
    assert error_code(response) == {403: "forbidden", 404: "matter_not_found"}[status]
    assert documents == 0
    bucket = runtime.settings.local_storage_dir / runtime.settings.storage_bucket
    assert not bucket.exists() or not any(p.is_file() for p in bucket.rglob("*"))
