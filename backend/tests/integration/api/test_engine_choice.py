"""The API refuses an engine no live worker can run, going by what workers advertise in Redis.

Workers write engine -> unix time into ENGINES_KEY (ArqJobQueue.advertise_engines).
No fresh advertisement at all means the API cannot know, so it accepts the
engine and a worker that cannot run it fails the chunk permanently (see
tests/integration/services/test_engines.py).
"""

from __future__ import annotations

import time
from pathlib import Path
from uuid import UUID

import asyncpg
import httpx
import pytest
from arq.connections import ArqRedis

from app.core.config import Settings
from app.pdf.samples import make_born_digital_pdf
from app.services.queue import ENGINE_ADVERTISEMENT_TTL_SECONDS, ENGINES_KEY, ArqJobQueue
from tests.factories import make_matter, make_user
from tests.integration.api.conftest import bearer

WORKER_ENGINES = ["auto", "tesseract", "text-layer", "null"]  # a worker without Google credentials


@pytest.fixture
async def member(pool: asyncpg.Pool) -> tuple[UUID, UUID]:
    matter = await make_matter(pool, "Engines")
    return matter, await make_user(pool, matter)


@pytest.fixture
def pdf(tmp_path: Path) -> bytes:
    make_born_digital_pdf(tmp_path / "doc.pdf", pages=2, seed=71)
    return (tmp_path / "doc.pdf").read_bytes()


async def upload(
    client: httpx.AsyncClient, member: tuple[UUID, UUID], pdf: bytes, engine: str, start: bool = True
) -> httpx.Response:
    matter, user = member
    return await client.post(
        "/documents",
        headers=bearer(user),
        data={"matterId": str(matter), "engine": engine, "start": str(start).lower()},
        files={"file": ("doc.pdf", pdf, "application/pdf")},
    )


def stored_objects(settings: Settings) -> list[Path]:
    bucket = settings.local_storage_dir / settings.storage_bucket
    return sorted(p for p in bucket.rglob("*") if p.is_file()) if bucket.exists() else []


async def advertise_long_ago(arq_redis: ArqRedis, engines: list[str]) -> None:
    """What a worker that stopped advertising left behind: entries older than the TTL."""
    then = str(int(time.time()) - ENGINE_ADVERTISEMENT_TTL_SECONDS - 60)
    await arq_redis.hset(ENGINES_KEY, mapping=dict.fromkeys(engines, then))  # type: ignore[misc]


async def test_engine_no_worker_offers_is_refused_before_anything_is_written(
    client: httpx.AsyncClient,
    arq_redis: ArqRedis,
    pool: asyncpg.Pool,
    api_settings: Settings,
    member: tuple[UUID, UUID],
    pdf: bytes,
) -> None:
    await ArqJobQueue(arq_redis).advertise_engines(WORKER_ENGINES)

    refused = await upload(client, member, pdf, "google-vision")
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "engine_unavailable"), refused.text
    assert "google-vision" in refused.json()["error"]["message"]
    assert await pool.fetchval("select count(*) from documents") == 0
    assert stored_objects(api_settings) == []

    accepted = await upload(client, member, pdf, "tesseract")
    assert accepted.status_code == 201, accepted.text
    document_id = UUID(accepted.json()["document"]["id"])
    assert await pool.fetchval("select engine from documents where id = $1", document_id) == "tesseract"
    engines = await pool.fetch("select engine from document_ocr_chunks where document_id = $1", document_id)
    assert engines
    assert {r["engine"] for r in engines} == {"tesseract"}


async def test_without_any_advertisement_the_engine_is_accepted(
    client: httpx.AsyncClient, arq_redis: ArqRedis, pool: asyncpg.Pool, member: tuple[UUID, UUID], pdf: bytes
) -> None:
    assert await arq_redis.exists(ENGINES_KEY) == 0  # a fresh Redis: no worker has said anything
    accepted = await upload(client, member, pdf, "google-vision")
    assert accepted.status_code == 201, accepted.text
    document_id = UUID(accepted.json()["document"]["id"])
    engines = await pool.fetch("select engine from document_ocr_chunks where document_id = $1", document_id)
    assert engines
    assert {r["engine"] for r in engines} == {"google-vision"}  # workers fail it for good


async def test_a_stale_advertisement_counts_as_none(
    client: httpx.AsyncClient, arq_redis: ArqRedis, member: tuple[UUID, UUID], pdf: bytes
) -> None:
    await advertise_long_ago(arq_redis, WORKER_ENGINES)
    accepted = await upload(client, member, pdf, "google-vision")
    assert accepted.status_code == 201, accepted.text


async def test_a_stale_entry_does_not_offer_its_engine_beside_fresh_ones(
    client: httpx.AsyncClient, arq_redis: ArqRedis, pool: asyncpg.Pool, member: tuple[UUID, UUID], pdf: bytes
) -> None:
    await advertise_long_ago(arq_redis, ["google-vision"])  # a worker with credentials, gone
    await ArqJobQueue(arq_redis).advertise_engines(WORKER_ENGINES)  # the workers running now
    refused = await upload(client, member, pdf, "google-vision")
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "engine_unavailable"), refused.text
    assert await pool.fetchval("select count(*) from documents") == 0


async def test_start_of_a_registered_document_checks_its_engine_again(
    client: httpx.AsyncClient, arq_redis: ArqRedis, pool: asyncpg.Pool, member: tuple[UUID, UUID], pdf: bytes
) -> None:
    registered = await upload(client, member, pdf, "google-vision", start=False)
    assert registered.status_code == 201, registered.text
    document_id = registered.json()["document"]["id"]
    await ArqJobQueue(arq_redis).advertise_engines(WORKER_ENGINES)  # workers came up without it

    _, user = member
    refused = await client.post(f"/documents/{document_id}/ocr", headers=bearer(user))
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "engine_unavailable"), refused.text
    status = await pool.fetchval("select ocr_status from documents where id = $1", UUID(document_id))
    assert status == "pending"  # still startable once a worker offers it
    assert await pool.fetchval("select count(*) from document_ocr_chunks") == 0
