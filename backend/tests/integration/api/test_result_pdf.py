"""GET /documents/{id}/ocr/result.pdf: the searchable PDF, verified, to members only."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from uuid import UUID

import asyncpg
import httpx
import pytest
from arq.connections import ArqRedis

from app.pdf.samples import make_born_digital_pdf
from app.services.runtime import Runtime
from app.storage.checksums import sha256_hex
from tests.factories import make_matter, make_user
from tests.integration.api.conftest import bearer
from tests.integration.api.test_documents import upload
from tests.integration.api.test_error_contract import assert_error
from tests.integration.conftest import burst_worker
from tests.pdf_factories import make_mixed_pdf


@pytest.fixture
async def member(pool: asyncpg.Pool) -> tuple[UUID, UUID]:
    matter = await make_matter(pool, "A")
    return matter, await make_user(pool, matter)


async def completed(
    client: httpx.AsyncClient, runtime: Runtime, arq_redis: ArqRedis, user: UUID, matter: UUID, pdf: Path
) -> str:
    created = await upload(client, user, matter, pdf, chunkPages="2", engine="auto")
    assert created.status_code == 201, created.text
    await burst_worker(arq_redis, runtime).main()
    return str(created.json()["document"]["id"])


async def test_result_pdf_streams_the_verified_searchable_pdf(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    pool: asyncpg.Pool,
    tmp_path: Path,
) -> None:
    matter, user = member
    make_mixed_pdf(tmp_path / "letter.pdf", "sd", seed=61)
    document_id = await completed(client, runtime, arq_redis, user, matter, tmp_path / "letter.pdf")

    response = await client.get(f"/documents/{document_id}/ocr/result.pdf", headers=bearer(user))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/pdf"
    assert response.content.startswith(b"%PDF-")
    assert response.headers["x-checksum-sha256"] == sha256_hex(response.content)
    assert 'filename="letter.ocr.pdf"' in response.headers["content-disposition"]
    assert response.headers["cache-control"] == "private, no-store"  # as the JSON result: no proxy keeps it

    # a stranger learns nothing; no token is 401
    stranger = await make_user(pool, await make_matter(pool, "B"))
    refused = await client.get(f"/documents/{document_id}/ocr/result.pdf", headers=bearer(stranger))
    assert refused.status_code == 404
    anonymous = await client.get(f"/documents/{document_id}/ocr/result.pdf")
    assert anonymous.status_code == 401

    # altered in storage: not sent, grafted again by a worker, then sent as before
    stored = runtime.settings.local_storage_dir / runtime.settings.storage_bucket
    (result_pdf,) = stored.rglob("result.pdf")
    result_pdf.write_bytes(response.content.replace(b"%PDF-", b"%PDF-\n%altered", 1))
    rebuilding = await client.get(f"/documents/{document_id}/ocr/result.pdf", headers=bearer(user))
    assert (rebuilding.status_code, rebuilding.json()["error"]["code"]) == (503, "result_rebuilding")
    await burst_worker(arq_redis, runtime).main()
    again = await client.get(f"/documents/{document_id}/ocr/result.pdf", headers=bearer(user))
    assert again.status_code == 200
    assert again.content == response.content


async def test_a_document_with_nothing_to_ocr_has_no_result_pdf(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    matter, user = member
    make_born_digital_pdf(tmp_path / "born.pdf", pages=2, seed=62)
    document_id = await completed(client, runtime, arq_redis, user, matter, tmp_path / "born.pdf")
    response = await client.get(f"/documents/{document_id}/ocr/result.pdf", headers=bearer(user))
    assert (response.status_code, response.json()["error"]["code"]) == (404, "no_searchable_pdf")
    assert "no page of it needed OCR" in response.json()["error"]["message"]


async def test_a_document_ocr_found_no_words_on_says_so(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    """Its pages were OCR'd (by the null engine, which reads nothing): no word to lay over them. It
    said SEARCHABLE_PDF was off."""
    matter, user = member
    make_mixed_pdf(tmp_path / "scan.pdf", "s", seed=64)
    created = await upload(client, user, matter, tmp_path / "scan.pdf", engine="null")
    assert created.status_code == 201, created.text
    await burst_worker(arq_redis, runtime).main()
    response = await client.get(
        f"/documents/{created.json()['document']['id']}/ocr/result.pdf", headers=bearer(user)
    )
    assert (response.status_code, response.json()["error"]["code"]) == (404, "no_searchable_pdf")
    assert "OCR found no words on the pages it read" in response.json()["error"]["message"]


async def test_result_pdf_before_completion_is_409(
    client: httpx.AsyncClient, member: tuple[UUID, UUID], tmp_path: Path
) -> None:
    matter, user = member
    make_mixed_pdf(tmp_path / "scan.pdf", "s", seed=63)
    created = await upload(client, user, matter, tmp_path / "scan.pdf", engine="auto")
    document_id = created.json()["document"]["id"]
    response = await client.get(f"/documents/{document_id}/ocr/result.pdf", headers=bearer(user))
    assert (response.status_code, response.json()["error"]["code"]) == (409, "result_not_ready")


async def test_a_rebuilt_merged_result_names_a_searchable_pdf_again(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    """result.json lost: the API rebuilds it from the verified chunk results, and grafts the
    searchable PDF again from verified inputs (no OCR, so no worker is needed for it)."""
    matter, user = member
    make_mixed_pdf(tmp_path / "memo.pdf", "s", seed=64)
    document_id = await completed(client, runtime, arq_redis, user, matter, tmp_path / "memo.pdf")
    before = await client.get(f"/documents/{document_id}/ocr/result.pdf", headers=bearer(user))
    assert before.status_code == 200
    stored = runtime.settings.local_storage_dir / runtime.settings.storage_bucket
    (result_json,) = stored.rglob("result.json")
    result_json.unlink()

    rebuilt = await client.get(f"/documents/{document_id}/ocr/result", headers=bearer(user))
    assert rebuilt.status_code == 200, rebuilt.text
    after = await client.get(f"/documents/{document_id}/ocr/result.pdf", headers=bearer(user))
    assert after.status_code == 200
    assert after.content == before.content  # the same graft of the same verified inputs


async def test_a_refused_range_leaves_no_copy_of_the_result_behind(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The file was sent from a scratch copy, and a Range Starlette refuses (400, 416) skipped
    the response's clean-up, so each such request left a whole copy on the API's disk. (It is
    sent from the store's own file now: test_a_download_is_sent_from_the_stored_file_not_a_copy.)"""
    matter, user = member
    make_mixed_pdf(tmp_path / "letter.pdf", "sd", seed=62)
    document_id = await completed(client, runtime, arq_redis, user, matter, tmp_path / "letter.pdf")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    url = f"/documents/{document_id}/ocr/result.pdf"
    answers = [
        await client.get(url, headers=bearer(user) | {"Range": value})
        for value in ("bytes=999999999-", "bytes=5-1", "items=0-1", "bytes=0-99", "bytes=0-9,20-29")
    ]
    assert [answer.status_code for answer in answers] == [416, 200, 200, 206, 206]
    whole = await client.get(url, headers=bearer(user))
    assert whole.status_code == 200
    assert list(scratch.iterdir()) == []
    # Refused as the rest of the API refuses; a malformed Range is ignored (RFC 9110 14.2).
    assert_error(answers[0], 416, "range_not_satisfiable")
    assert answers[0].headers["content-range"] == f"bytes */{len(whole.content)}"
    assert answers[1].content == answers[2].content == whole.content
    assert answers[3].content == whole.content[:100]


async def test_a_download_resumed_with_if_range_gets_the_rest_only(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    """The file's ETag was its scratch copy's time and size: another at every request, so a
    resumed download (If-Range with the first answer's ETag) was sent whole again. It is now the
    file's checksum."""
    matter, user = member
    make_mixed_pdf(tmp_path / "letter.pdf", "sd", seed=63)
    document_id = await completed(client, runtime, arq_redis, user, matter, tmp_path / "letter.pdf")
    url = f"/documents/{document_id}/ocr/result.pdf"
    first = await client.get(url, headers=bearer(user) | {"Range": "bytes=0-99"})
    assert first.status_code == 206
    assert first.headers["etag"] == f'"{first.headers["x-checksum-sha256"]}"'
    rest = await client.get(
        url, headers=bearer(user) | {"Range": "bytes=100-", "If-Range": first.headers["etag"]}
    )
    assert rest.status_code == 206
    assert rest.headers["etag"] == first.headers["etag"]
    assert sha256_hex(first.content + rest.content) == first.headers["x-checksum-sha256"]
    stale = await client.get(url, headers=bearer(user) | {"Range": "bytes=100-", "If-Range": '"another"'})
    assert stale.status_code == 200  # not the file it had: the whole of it


async def test_a_download_is_sent_from_the_stored_file_not_a_copy(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    member: tuple[UUID, UUID],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each download copied the whole file into the temporary directory and sent the copy: N slow
    downloads held N copies (any reader could fill the API's disk, or a tmpfs's memory), each
    after a copy and a hash. The store's own file is sent, hashed once for as long as its stat
    stays as it was, so the temporary directory is not even needed."""
    matter, user = member
    make_mixed_pdf(tmp_path / "letter.pdf", "sd", seed=65)
    document_id = await completed(client, runtime, arq_redis, user, matter, tmp_path / "letter.pdf")
    unusable = tmp_path / "not-a-directory"
    unusable.write_bytes(b"")
    monkeypatch.setattr(tempfile, "tempdir", str(unusable))
    url = f"/documents/{document_id}/ocr/result.pdf"
    whole = await client.get(url, headers=bearer(user))
    assert whole.status_code == 200, whole.text
    assert sha256_hex(whole.content) == whole.headers["x-checksum-sha256"]
    again = await client.get(url, headers=bearer(user))
    part = await client.get(url, headers=bearer(user) | {"Range": "bytes=10-19"})
    assert (again.status_code, part.status_code) == (200, 206)
    assert again.content == whole.content
    assert part.content == whole.content[10:20]

    # Changed in place, its size and modification time put back as they were: its ctime, which
    # nobody can set back, has moved, so it is hashed again, and not sent.
    stored = runtime.settings.local_storage_dir / runtime.settings.storage_bucket
    (result_pdf,) = stored.rglob("result.pdf")
    before = result_pdf.stat()
    with result_pdf.open("r+b") as handle:
        handle.seek(len(whole.content) // 2)
        handle.write(b"X")
    os.utime(result_pdf, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert result_pdf.stat().st_size == before.st_size
    altered = await client.get(url, headers=bearer(user))
    assert (altered.status_code, altered.json()["error"]["code"]) == (503, "result_rebuilding")
