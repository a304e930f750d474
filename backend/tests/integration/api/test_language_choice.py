"""`language` on upload: checked for syntax, refused when workers have said they cannot read it
(422 `language_unavailable`, naming what they read), carried to the document, its chunks and
its result.

Workers advertise the set of languages their tesseract reads in LANGUAGES_KEY
(ArqJobQueue.advertise_languages). No fresh advertisement means the API cannot know: it
accepts, and a worker without the language fails the chunks for good (see
tests/integration/services/test_languages.py).
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
from app.services.queue import ENGINE_ADVERTISEMENT_TTL_SECONDS, LANGUAGES_KEY, ArqJobQueue
from tests.corpus.languages import russian_scan
from tests.factories import make_matter, make_user
from tests.integration.api.conftest import bearer
from tests.integration.conftest import burst_worker
from tests.pdf_factories import cer


@pytest.fixture
async def member(pool: asyncpg.Pool) -> tuple[UUID, UUID]:
    matter = await make_matter(pool, "Languages")
    return matter, await make_user(pool, matter)


@pytest.fixture
def scan(tmp_path: Path) -> bytes:
    return russian_scan(tmp_path).path.read_bytes()


async def upload(
    client: httpx.AsyncClient,
    member: tuple[UUID, UUID],
    pdf: bytes,
    *,
    language: str | None,
    engine: str = "tesseract",
    start: bool = True,
) -> httpx.Response:
    matter, user = member
    fields = {"engine": engine, "start": str(start).lower()} | ({"language": language} if language else {})
    return await client.post(
        f"/matters/{matter}/documents",
        headers=bearer(user),
        data=fields,
        files={"file": ("minutes.pdf", pdf, "application/pdf")},
    )


def stored_objects(settings: Settings) -> list[Path]:
    bucket = settings.local_storage_dir / settings.storage_bucket
    return sorted(p for p in bucket.rglob("*") if p.is_file()) if bucket.exists() else []


async def nothing_written(pool: asyncpg.Pool, settings: Settings) -> bool:
    return await pool.fetchval("select count(*) from documents") == 0 and stored_objects(settings) == []


async def test_the_language_reaches_the_document_its_chunks_and_its_result(
    client: httpx.AsyncClient,
    arq_redis: ArqRedis,
    pool: asyncpg.Pool,
    runtime: object,
    member: tuple[UUID, UUID],
    tmp_path: Path,
) -> None:
    fixture = russian_scan(tmp_path / "scan")
    _, user = member
    created = await upload(client, member, fixture.path.read_bytes(), language="rus")
    assert created.status_code == 201, created.text
    document = created.json()["document"]
    assert document["language"] == "rus"
    chunks = (await client.get(f"/documents/{document['id']}/ocr/chunks", headers=bearer(user))).json()
    assert chunks
    assert {c["language"] for c in chunks} == {"rus"}

    await burst_worker(arq_redis, runtime).main()  # type: ignore[arg-type]
    result = await client.get(f"/documents/{document['id']}/ocr/result", headers=bearer(user))
    assert result.status_code == 200, result.text
    assert result.json()["language"] == "rus"
    assert cer(fixture.expected[0], result.json()["text"]) < 0.02


async def test_without_a_language_the_document_reads_ocr_language(
    client: httpx.AsyncClient,
    pool: asyncpg.Pool,
    member: tuple[UUID, UUID],
    scan: bytes,
    api_settings: Settings,
) -> None:
    assert api_settings.ocr_language == "eng"
    created = await upload(client, member, scan, language=None)
    assert created.status_code == 201, created.text
    assert created.json()["document"]["language"] == "eng"


async def test_a_language_as_a_query_parameter_with_a_bare_pdf_body(
    client: httpx.AsyncClient, pool: asyncpg.Pool, member: tuple[UUID, UUID], scan: bytes
) -> None:
    matter, user = member
    created = await client.post(
        f"/matters/{matter}/documents",
        headers=bearer(user) | {"Content-Type": "application/pdf"},
        params={"filename": "minutes.pdf", "language": "rus+eng", "engine": "tesseract"},
        content=scan,
    )
    assert created.status_code == 201, created.text
    document_id = UUID(created.json()["document"]["id"])
    rows = await pool.fetch("select language from document_ocr_chunks where document_id = $1", document_id)
    assert rows
    assert {r["language"] for r in rows} == {"rus+eng"}


@pytest.mark.parametrize("language", ["eng deu", "eng,deu", "../etc", "rus+", "x" * 201, "osd"])
async def test_a_malformed_language_is_invalid_input_before_anything_is_written(
    client: httpx.AsyncClient,
    pool: asyncpg.Pool,
    api_settings: Settings,
    member: tuple[UUID, UUID],
    scan: bytes,
    language: str,
) -> None:
    refused = await upload(client, member, scan, language=language)
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "invalid_input"), refused.text
    assert refused.json()["error"]["message"].startswith("language: ")
    assert await nothing_written(pool, api_settings)


async def test_a_language_no_worker_reads_is_refused_naming_what_they_read(
    client: httpx.AsyncClient,
    arq_redis: ArqRedis,
    pool: asyncpg.Pool,
    api_settings: Settings,
    member: tuple[UUID, UUID],
    scan: bytes,
) -> None:
    await ArqJobQueue(arq_redis).advertise_languages(["eng", "rus"])

    refused = await upload(client, member, scan, language="xyz")
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "language_unavailable"), (
        refused.text
    )
    assert refused.json()["error"]["message"] == (
        "language 'xyz' is not installed for tesseract on any worker (installed: eng, rus); "
        'apt-get install tesseract-ocr-xyz or make install TESSERACT_LANGS="eng xyz"'
    )
    assert await nothing_written(pool, api_settings)

    accepted = await upload(client, member, scan, language="rus")
    assert accepted.status_code == 201, accepted.text
    # auto reads scanned pages with tesseract: checked the same way
    refused_auto = await upload(client, member, scan, language="deu", engine="auto")
    assert refused_auto.json()["error"]["code"] == "language_unavailable", refused_auto.text
    # engines that do not read with tesseract are not held to its languages
    text_layer = await upload(client, member, scan, language="deu", engine="text-layer")
    assert text_layer.status_code == 201, text_layer.text


async def test_every_code_must_be_read_by_one_worker(
    client: httpx.AsyncClient, arq_redis: ArqRedis, member: tuple[UUID, UUID], scan: bytes
) -> None:
    queue = ArqJobQueue(arq_redis)
    await queue.advertise_languages(["eng", "rus"])
    await queue.advertise_languages(["eng", "deu"])
    assert sorted(map(sorted, await queue.worker_languages())) == [["deu", "eng"], ["eng", "rus"]]

    assert (await upload(client, member, scan, language="eng+deu")).status_code == 201
    split = await upload(client, member, scan, language="rus+deu")
    assert split.json()["error"]["code"] == "language_unavailable", split.text
    assert split.json()["error"]["message"] == (
        "no one worker reads every language of 'rus+deu' (workers read deu+eng, eng+rus)"
    )


async def test_without_any_advertisement_the_language_is_accepted(
    client: httpx.AsyncClient, arq_redis: ArqRedis, member: tuple[UUID, UUID], scan: bytes
) -> None:
    assert await arq_redis.exists(LANGUAGES_KEY) == 0
    assert (await upload(client, member, scan, language="xyz")).status_code == 201


async def test_a_stale_advertisement_counts_as_none(
    client: httpx.AsyncClient, arq_redis: ArqRedis, member: tuple[UUID, UUID], scan: bytes
) -> None:
    then = str(int(time.time()) - ENGINE_ADVERTISEMENT_TTL_SECONDS - 60)
    await arq_redis.hset(LANGUAGES_KEY, "eng", then)  # type: ignore[misc]
    assert (await upload(client, member, scan, language="rus")).status_code == 201


async def test_start_of_a_registered_document_checks_its_language_again(
    client: httpx.AsyncClient,
    arq_redis: ArqRedis,
    pool: asyncpg.Pool,
    member: tuple[UUID, UUID],
    scan: bytes,
) -> None:
    registered = await upload(client, member, scan, language="deu", start=False)
    assert registered.status_code == 201, registered.text
    document_id = registered.json()["document"]["id"]
    await ArqJobQueue(arq_redis).advertise_languages(["eng", "rus"])  # workers came up without it

    _, user = member
    refused = await client.post(f"/documents/{document_id}/ocr", headers=bearer(user))
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "language_unavailable"), (
        refused.text
    )
    assert (
        await pool.fetchval("select ocr_status from documents where id = $1", UUID(document_id)) == "pending"
    )
    assert await pool.fetchval("select count(*) from document_ocr_chunks") == 0
