"""The HTTP API over a real database: upload, progress, result, retry, isolation, bad uploads."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import asyncpg
import httpx
import pikepdf
import pytest
from arq.connections import ArqRedis

from app.pdf.samples import make_born_digital_pdf
from app.services.runtime import Runtime
from tests.factories import lose_chunk_input, make_matter, make_user, pdf_with_an_unreadable_page
from tests.integration.api.conftest import bearer
from tests.integration.conftest import burst_worker
from tests.pdf_factories import make_encrypted_pdf


@pytest.fixture
async def member(pool: asyncpg.Pool) -> tuple[UUID, UUID]:
    matter = await make_matter(pool, "A")
    return matter, await make_user(pool, matter)


async def upload(
    client: httpx.AsyncClient, user: UUID, matter: UUID, pdf: Path, **form: str
) -> httpx.Response:
    with pdf.open("rb") as handle:
        return await client.post(
            "/documents",
            headers=bearer(user),
            data={"matterId": str(matter), **form},
            files={"file": (pdf.name, handle, "application/pdf")},
        )


async def test_upload_progress_result(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    matter, user = member
    texts = make_born_digital_pdf(tmp_path / "contract.pdf", pages=6, seed=51)
    created = await upload(
        client, user, matter, tmp_path / "contract.pdf", chunkPages="2", engine="text-layer"
    )
    assert created.status_code == 201, created.text
    body = created.json()
    document_id = body["document"]["id"]
    assert (body["chunks"], body["document"]["pageCount"], body["document"]["ocrStatus"]) == (
        3,
        6,
        "processing",
    )
    assert body["document"]["filename"] == "contract.pdf"

    before = await client.get(f"/documents/{document_id}/ocr/progress", headers=bearer(user))
    assert before.status_code == 200
    assert before.headers["cache-control"] == "private, no-cache"
    assert (before.json()["percent"], before.json()["pagesTotal"], before.json()["pending"]) == (0.0, 6, 3)
    unchanged = await client.get(
        f"/documents/{document_id}/ocr/progress",
        headers={**bearer(user), "If-None-Match": before.headers["etag"]},
    )
    assert unchanged.status_code == 304
    assert unchanged.content == b""
    for tag in (f"W/{before.headers['etag']}", "*", f'"other", {before.headers["etag"]}'):
        # weak comparison (a cache's weak copy of the tag) and `*` match too (RFC 9110 13.1.2)
        again = await client.get(
            f"/documents/{document_id}/ocr/progress", headers={**bearer(user), "If-None-Match": tag}
        )
        assert again.status_code == 304, tag
    not_ready = await client.get(f"/documents/{document_id}/ocr/result", headers=bearer(user))
    assert (not_ready.status_code, not_ready.json()["error"]["code"]) == (409, "result_not_ready")

    worker = burst_worker(arq_redis, runtime)
    await worker.main()

    after = await client.get(
        f"/documents/{document_id}/ocr/progress",
        headers={**bearer(user), "If-None-Match": before.headers["etag"]},
    )
    assert after.status_code == 200  # it changed, so the old ETag no longer matches
    progress = after.json()
    assert (progress["status"], progress["percent"], progress["pagesDone"], progress["completed"]) == (
        "completed",
        100.0,
        6,
        3,
    )
    chunks = (await client.get(f"/documents/{document_id}/ocr/chunks", headers=bearer(user))).json()
    assert [(c["chunkIndex"], c["status"], c["attemptCount"]) for c in chunks] == [
        (0, "completed", 1),
        (1, "completed", 1),
        (2, "completed", 1),
    ]
    result = await client.get(f"/documents/{document_id}/ocr/result", headers=bearer(user))
    assert result.status_code == 200
    assert result.headers["Cache-Control"] == "private, no-store"  # the document's text is kept nowhere
    assert [p["text"].split() for p in result.json()["pages"]] == [t.split() for t in texts]
    assert result.json()["text"].count("\f") == 5


async def test_retry_after_a_failure(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    pool: asyncpg.Pool,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    matter, user = member
    make_born_digital_pdf(tmp_path / "doc.pdf", pages=2, seed=52)
    created = await upload(client, user, matter, tmp_path / "doc.pdf", chunkPages="1", engine="text-layer")
    document_id = created.json()["document"]["id"]
    await lose_chunk_input(pool, runtime.settings.local_storage_dir, UUID(document_id), 1)
    await burst_worker(arq_redis, runtime).main()

    progress = (await client.get(f"/documents/{document_id}/ocr/progress", headers=bearer(user))).json()
    assert (progress["status"], progress["failed"], progress["completed"]) == ("failed", 1, 1)
    failed = [
        c
        for c in (await client.get(f"/documents/{document_id}/ocr/chunks", headers=bearer(user))).json()
        if c["status"] == "failed"
    ]
    assert [(c["chunkIndex"], c["errorCode"]) for c in failed] == [(1, "object_not_found")]

    retried = await client.post(f"/documents/{document_id}/ocr/retry", headers=bearer(user))
    assert retried.status_code == 200
    assert retried.json() == {"documentId": document_id, "retried": 1}
    progress = (await client.get(f"/documents/{document_id}/ocr/progress", headers=bearer(user))).json()
    assert (progress["status"], progress["pending"]) == ("processing", 1)
    assert await arq_redis.zcard("chunk-ocr:queue") == 1  # and it is queued again


async def test_a_document_with_an_unreadable_page_completes_with_errors(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    matter, user = member
    pdf_with_an_unreadable_page(tmp_path / "doc.pdf", "dhd")
    created = await upload(client, user, matter, tmp_path / "doc.pdf", chunkPages="3", engine="tesseract")
    assert created.json()["document"]["pagesFailed"] == 0
    document_id = created.json()["document"]["id"]
    await burst_worker(arq_redis, runtime).main()

    progress = (await client.get(f"/documents/{document_id}/ocr/progress", headers=bearer(user))).json()
    assert (progress["status"], progress["pagesFailed"], progress["pagesDone"], progress["percent"]) == (
        "completed_with_errors",
        1,
        3,
        100.0,
    )
    result = (await client.get(f"/documents/{document_id}/ocr/result", headers=bearer(user))).json()
    assert result["status"] == "completed_with_errors"
    (failed,) = result["failedPages"]
    assert (failed["pageNumber"], failed["code"]) == (2, "page_too_large")
    assert failed["message"].startswith("page 2 is 2778 x 1389 inches")
    page = result["pages"][1]
    assert (page["text"], page["error"]["code"]) == ("", "page_too_large")
    assert [p["error"] for p in (result["pages"][0], result["pages"][2])] == [None, None]
    assert result["text"].count("\f") == 2


async def test_register_then_start(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    matter, user = member
    make_born_digital_pdf(tmp_path / "later.pdf", pages=4)
    created = await upload(client, user, matter, tmp_path / "later.pdf", start="false", engine="text-layer")
    assert created.status_code == 201
    assert (created.json()["chunks"], created.json()["document"]["ocrStatus"]) == (0, "pending")
    document_id = created.json()["document"]["id"]
    started = await client.post(
        f"/documents/{document_id}/ocr", headers=bearer(user), data={"chunkPages": "2"}
    )
    assert started.status_code == 202, started.text
    assert started.json()["chunks"] == 2
    again = await client.post(f"/documents/{document_id}/ocr", headers=bearer(user))
    assert (again.status_code, again.json()["error"]["code"]) == (409, "ocr_already_started")
    await burst_worker(arq_redis, runtime).main()
    result = await client.get(f"/documents/{document_id}/ocr/result", headers=bearer(user))
    assert result.json()["pageCount"] == 4


@pytest.mark.parametrize(
    ("make", "status", "code"),
    [
        (lambda p: p.write_bytes(b""), 422, "empty_file"),
        (lambda p: p.write_text("not a pdf at all"), 422, "not_a_pdf"),
        (make_encrypted_pdf, 422, "encrypted_pdf"),
        (lambda p: p.write_bytes(b"%PDF-1.7\n" + b"0" * (3 * 1024 * 1024)), 413, "file_too_large"),
    ],
    ids=["empty", "not-pdf", "encrypted", "too-large"],
)
async def test_bad_uploads_leave_nothing_behind(
    client: httpx.AsyncClient,
    member: tuple[UUID, UUID],
    pool: asyncpg.Pool,
    runtime: Runtime,
    tmp_path: Path,
    make: object,
    status: int,
    code: str,
) -> None:
    matter, user = member
    path = tmp_path / "bad.pdf"
    make(path)  # type: ignore[operator]
    response = await upload(client, user, matter, path)
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert await pool.fetchval("select count(*) from documents") == 0
    bucket = runtime.settings.local_storage_dir / runtime.settings.storage_bucket
    assert not bucket.exists() or not any(p.is_file() for p in bucket.rglob("*"))


async def test_unknown_engine_and_foreign_matter(
    client: httpx.AsyncClient, member: tuple[UUID, UUID], pool: asyncpg.Pool, tmp_path: Path
) -> None:
    matter, user = member
    make_born_digital_pdf(tmp_path / "a.pdf", pages=1)
    bad_engine = await upload(client, user, matter, tmp_path / "a.pdf", engine="magic")
    assert (bad_engine.status_code, bad_engine.json()["error"]["code"]) == (422, "engine_unavailable")
    other = await make_matter(pool, "B")
    foreign = await upload(client, user, other, tmp_path / "a.pdf")
    assert (foreign.status_code, foreign.json()["error"]["code"]) == (404, "matter_not_found")
    assert await pool.fetchval("select count(*) from documents") == 0


async def test_healthz(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "redis": "ok"}
    asked = await client.head("/healthz")  # as some load balancers ask
    assert (asked.status_code, asked.content) == (200, b"")


async def test_the_start_says_what_the_file_holds_that_is_not_read(
    client: httpx.AsyncClient, member: tuple[UUID, UUID], tmp_path: Path
) -> None:
    """The warnings `run` prints (attached files, hidden layers, repaired pages, ...) come back with
    the start, one line each; none for a plain file."""
    matter, user = member
    make_born_digital_pdf(tmp_path / "plain.pdf", pages=1, seed=3)
    make_born_digital_pdf(tmp_path / "attached.pdf", pages=1, seed=3)
    with pikepdf.open(tmp_path / "attached.pdf", allow_overwriting_input=True) as pdf:
        pdf.attachments["invoice.xlsx"] = pikepdf.AttachedFileSpec(pdf, b"data", filename="invoice.xlsx")
        pdf.save(tmp_path / "attached.pdf")

    plain = await upload(client, user, matter, tmp_path / "plain.pdf", engine="text-layer")
    attached = await upload(client, user, matter, tmp_path / "attached.pdf", engine="text-layer")

    assert plain.status_code == attached.status_code == 201, attached.text
    assert plain.json()["warnings"] == []
    assert attached.json()["warnings"] == [
        "the PDF carries 1 attached file (invoice.xlsx): only its own pages are read, not them"
    ]
