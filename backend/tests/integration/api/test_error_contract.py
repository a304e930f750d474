"""One error shape for every refusal; nothing internal in bodies; file names made safe; uploads
into the matter's own route; a bounded number of uploads at once."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID, uuid4

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from app.api.uploads import UploadSlots
from app.pdf.samples import make_born_digital_pdf
from tests.factories import make_matter, make_user
from tests.integration.api.conftest import bearer


@pytest.fixture
async def member(pool: asyncpg.Pool) -> tuple[UUID, UUID]:
    matter = await make_matter(pool, "contract")
    return matter, await make_user(pool, matter)


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    make_born_digital_pdf(tmp_path / "doc.pdf", pages=2, seed=3)
    return tmp_path / "doc.pdf"


@pytest.fixture
def pdf_bytes(pdf: Path) -> bytes:
    return pdf.read_bytes()


def assert_error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == code
    message: str = body["error"]["message"]
    return message


@pytest.mark.parametrize(
    ("form", "field"),
    [({"chunkPages": "0"}, "chunkPages"), ({"start": "maybe"}, "start"), ({"colour": "red"}, "colour")],
)
async def test_bad_form_fields_are_invalid_input(
    client: httpx.AsyncClient, member: tuple[UUID, UUID], pdf: Path, form: dict[str, str], field: str
) -> None:
    matter, user = member
    with pdf.open("rb") as handle:
        response = await client.post(
            f"/matters/{matter}/documents",
            headers=bearer(user),
            data=form,
            files={"file": ("doc.pdf", handle, "application/pdf")},
        )
    assert field in assert_error(response, 422, "invalid_input")


async def test_the_older_route_without_a_matter_is_invalid_input(
    client: httpx.AsyncClient, member: tuple[UUID, UUID], pdf: Path
) -> None:
    _, user = member
    with pdf.open("rb") as handle:
        response = await client.post(
            "/documents", headers=bearer(user), files={"file": ("doc.pdf", handle, "application/pdf")}
        )
    assert "matterId" in assert_error(response, 422, "invalid_input")


async def test_framework_refusals_have_the_same_shape(
    client: httpx.AsyncClient, member: tuple[UUID, UUID]
) -> None:
    _, user = member
    assert_error(await client.get("/no/such/route", headers=bearer(user)), 404, "not_found")
    assert_error(await client.put("/healthz"), 405, "method_not_allowed")
    assert_error(
        await client.get("/documents/not-a-uuid/ocr/progress", headers=bearer(user)), 422, "invalid_input"
    )
    assert_error(await client.get("/documents/x/ocr/progress"), 401, "unauthorized")


async def test_no_storage_paths_or_worker_ids_for_members(
    client: httpx.AsyncClient, member: tuple[UUID, UUID], pdf: Path
) -> None:
    matter, user = member
    with pdf.open("rb") as handle:
        created = await client.post(
            f"/matters/{matter}/documents",
            headers=bearer(user),
            params={"engine": "text-layer"},
            files={"file": ("..\\..\\win\u202eini.pdf", handle, "application/pdf")},
        )
    assert created.status_code == 201, created.text
    document = created.json()["document"]
    assert document["filename"] == "winini.pdf"  # no path parts, no bidi override
    assert not {"sourcePath", "resultStoragePath"} & set(document)
    chunks = await client.get(f"/documents/{document['id']}/ocr/chunks", headers=bearer(user))
    assert chunks.status_code == 200
    for chunk in chunks.json():
        assert not {"workerId", "inputStoragePath", "resultStoragePath", "matterId"} & set(chunk)
        assert {"chunkIndex", "pageStart", "pageEnd", "status", "errorCode"} <= set(chunk)


async def test_a_bare_pdf_body(
    client: httpx.AsyncClient, member: tuple[UUID, UUID], pdf_bytes: bytes
) -> None:
    matter, user = member
    response = await client.post(
        f"/matters/{matter}/documents",
        headers=bearer(user) | {"Content-Type": "application/pdf"},
        params={"filename": "scan 1.pdf", "start": "false"},
        content=pdf_bytes,
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert (body["document"]["filename"], body["document"]["ocrStatus"], body["chunks"]) == (
        "scan 1.pdf",
        "pending",
        0,
    )


async def test_too_many_uploads_at_once_is_503_with_retry_after(
    app: FastAPI, client: httpx.AsyncClient, member: tuple[UUID, UUID], pdf: Path
) -> None:
    matter, user = member
    app.state.upload_slots = UploadSlots(1)
    with app.state.upload_slots.taken_by(uuid4()):  # someone's upload in progress
        with pdf.open("rb") as handle:
            response = await client.post(
                f"/matters/{matter}/documents",
                headers=bearer(user),
                files={"file": ("doc.pdf", handle, "application/pdf")},
            )
        assert_error(response, 503, "too_many_uploads")
        assert response.headers["Retry-After"] == "5"
    with pdf.open("rb") as handle:
        again = await client.post(
            f"/matters/{matter}/documents",
            headers=bearer(user),
            params={"engine": "text-layer"},
            files={"file": ("doc.pdf", handle, "application/pdf")},
        )
    assert again.status_code == 201, again.text
