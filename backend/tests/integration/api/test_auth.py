"""Bearer auth and matter isolation on every document route."""

from __future__ import annotations

from uuid import UUID

import asyncpg
import httpx
import pytest

from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import make_document, make_matter, make_user, ranges
from tests.integration.api.conftest import bearer, token

ROUTES = [
    ("GET", "/documents/{id}/ocr/progress"),
    ("GET", "/documents/{id}/ocr/chunks"),
    ("GET", "/documents/{id}/ocr/result"),
    ("POST", "/documents/{id}/ocr/retry"),
    ("POST", "/documents/{id}/ocr"),
]


@pytest.fixture
async def two_matters(pool: asyncpg.Pool, service: OCRChunkService) -> dict[str, UUID]:
    matter_a, matter_b = await make_matter(pool, "A"), await make_matter(pool, "B")
    doc_b = await make_document(pool, matter_b, 10)
    await service.create_chunks_for_document(doc_b, ranges(10, 5))
    return {
        "member_a": await make_user(pool, matter_a),
        "member_b": await make_user(pool, matter_b),
        "doc_b": doc_b,
    }


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"Authorization": "Bearer not.a.jwt"},
        {
            "Authorization": f"Bearer {token('6f1d7a70-2c4e-4a0b-9d3e-0c5b1f2a3b4c', secret='another-secret-another-secret-xx')}"
        },
        {"Authorization": f"Bearer {token('6f1d7a70-2c4e-4a0b-9d3e-0c5b1f2a3b4c', expires_in=-3600)}"},
        {"Authorization": f"Bearer {token('6f1d7a70-2c4e-4a0b-9d3e-0c5b1f2a3b4c', audience='anon')}"},
        {"Authorization": f"Bearer {token('not-a-user-id')}"},
    ],
    ids=["none", "basic", "garbage", "bad-signature", "expired", "wrong-audience", "bad-subject"],
)
async def test_bad_credentials_are_401(
    client: httpx.AsyncClient, two_matters: dict[str, UUID], headers: dict[str, str]
) -> None:
    for method, route in ROUTES:
        response = await client.request(method, route.format(id=two_matters["doc_b"]), headers=headers)
        assert response.status_code == 401, (method, route, response.text)
        assert response.json()["error"]["code"] == "unauthorized"
        assert response.headers["www-authenticate"] == "Bearer"


async def test_other_matters_documents_are_404_not_403(
    client: httpx.AsyncClient, two_matters: dict[str, UUID], pool: asyncpg.Pool
) -> None:
    missing = "6f1d7a70-2c4e-4a0b-9d3e-0c5b1f2a3b4c"
    before = await pool.fetch("select * from document_ocr_chunks order by id")
    for method, route in ROUTES:
        foreign = await client.request(
            method, route.format(id=two_matters["doc_b"]), headers=bearer(two_matters["member_a"])
        )
        absent = await client.request(
            method, route.format(id=missing), headers=bearer(two_matters["member_a"])
        )
        assert (foreign.status_code, absent.status_code) == (404, 404), (method, route)
        assert foreign.json()["error"]["code"] == absent.json()["error"]["code"] == "document_not_found"
        own = await client.request(
            method, route.format(id=two_matters["doc_b"]), headers=bearer(two_matters["member_b"])
        )
        assert own.status_code not in (401, 403, 404), (method, route, own.text)
    assert (
        await pool.fetch("select * from document_ocr_chunks order by id") == before
    )  # A changed nothing of B's


async def test_malformed_document_id_is_422(client: httpx.AsyncClient, two_matters: dict[str, UUID]) -> None:
    response = await client.get("/documents/not-a-uuid/ocr/progress", headers=bearer(two_matters["member_a"]))
    assert (response.status_code, response.json()["error"]["code"]) == (422, "invalid_input")
