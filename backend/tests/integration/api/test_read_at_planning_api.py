"""The API with pages read at planning (the default): a born-digital upload answers completed."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import asyncpg
import httpx
import pytest
from arq.connections import ArqRedis

from app.core.config import Settings
from app.pdf.samples import make_born_digital_pdf
from tests.factories import make_matter, make_user
from tests.integration.api.conftest import bearer
from tests.integration.api.test_documents import upload


@pytest.fixture
def api_settings(api_settings: Settings) -> Settings:
    return api_settings.model_copy(update={"read_text_at_planning": True})


async def test_a_born_digital_upload_answers_completed_and_its_result_is_there(
    client: httpx.AsyncClient, arq_redis: ArqRedis, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    matter = await make_matter(pool, "A")
    user: UUID = await make_user(pool, matter)
    texts = make_born_digital_pdf(tmp_path / "contract.pdf", pages=12, seed=61)

    created = await upload(client, user, matter, tmp_path / "contract.pdf", engine="auto")

    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["chunks"], body["document"]["ocrStatus"]) == (1, "completed")
    assert await arq_redis.zcard("chunk-ocr:queue") == 0  # no worker is needed, or asked
    document_id = body["document"]["id"]
    progress = (await client.get(f"/documents/{document_id}/ocr/progress", headers=bearer(user))).json()
    assert (progress["status"], progress["percent"], progress["pagesDone"]) == ("completed", 100.0, 12)
    result = await client.get(f"/documents/{document_id}/ocr/result", headers=bearer(user))
    assert result.status_code == 200
    assert [p["text"].split() for p in result.json()["pages"]] == [t.split() for t in texts]
    assert {p["source"] for p in result.json()["pages"]} == {"text-layer"}


async def test_a_registered_document_started_later_is_read_when_it_starts(
    client: httpx.AsyncClient, arq_redis: ArqRedis, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    matter = await make_matter(pool, "A")
    user: UUID = await make_user(pool, matter)
    texts = make_born_digital_pdf(tmp_path / "later.pdf", pages=9, seed=62)
    created = await upload(client, user, matter, tmp_path / "later.pdf", start="false", engine="text-layer")
    assert (created.json()["chunks"], created.json()["document"]["ocrStatus"]) == (0, "pending")
    document_id = created.json()["document"]["id"]

    started = await client.post(f"/documents/{document_id}/ocr", headers=bearer(user))

    assert started.status_code == 202, started.text
    assert started.json()["document"]["ocrStatus"] == "completed"
    assert await arq_redis.zcard("chunk-ocr:queue") == 0
    again = await client.post(f"/documents/{document_id}/ocr", headers=bearer(user))
    assert (again.status_code, again.json()["error"]["code"]) == (409, "ocr_already_started")
    result = await client.get(f"/documents/{document_id}/ocr/result", headers=bearer(user))
    assert [p["text"].split() for p in result.json()["pages"]] == [t.split() for t in texts]
