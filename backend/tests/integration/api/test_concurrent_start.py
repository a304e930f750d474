"""Concurrent starts of one document: one plan wins, the losers leave the winner's inputs alone.

Several POST /documents/{id}/ocr for the same pending document are sent at
once through the ASGI client. Each start cuts the stored PDF page by page in a
thread and uploads every piece before it asks the database (atomically) to
create the chunk rows, so the requests really do overlap: each that got past
the cheap "already started?" check leaves its own plan directory under
input/ (the local blob store deletes objects, not their directories), and the
test asserts more than one such directory appeared.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from uuid import UUID

import asyncpg
import httpx
import pytest
from arq.connections import ArqRedis

from app.core.config import Settings
from app.models.document import DocumentStatus
from app.pdf.samples import make_born_digital_pdf
from app.services.runtime import Runtime
from tests.factories import make_matter, make_user
from tests.integration.api.conftest import bearer
from tests.integration.conftest import burst_worker

PAGES = 12  # with chunkPages=1: twelve cuts and twelve uploads per start, time enough to overlap


@pytest.fixture
async def member(pool: asyncpg.Pool) -> tuple[UUID, UUID]:
    matter = await make_matter(pool, "Race")
    return matter, await make_user(pool, matter)


async def register(client: httpx.AsyncClient, user: UUID, matter: UUID, pdf: Path) -> str:
    """Upload with start=false: a pending document with its source PDF stored."""
    response = await client.post(
        "/documents",
        headers=bearer(user),
        data={"matterId": str(matter), "engine": "text-layer", "start": "false"},
        files={"file": (pdf.name, await asyncio.to_thread(pdf.read_bytes), "application/pdf")},
    )
    assert response.status_code == 201, response.text
    assert (response.json()["chunks"], response.json()["document"]["ocrStatus"]) == (0, "pending")
    document_id: str = response.json()["document"]["id"]
    return document_id


@pytest.mark.parametrize("starts", [2, 5])
async def test_concurrent_starts_give_one_plan_whose_inputs_survive(
    client: httpx.AsyncClient,
    runtime: Runtime,
    arq_redis: ArqRedis,
    pool: asyncpg.Pool,
    pipeline_settings: Settings,
    member: tuple[UUID, UUID],
    tmp_path: Path,
    starts: int,
) -> None:
    matter, user = member
    texts = make_born_digital_pdf(tmp_path / "race.pdf", pages=PAGES, seed=starts)
    document_id = await register(client, user, matter, tmp_path / "race.pdf")

    answers = await asyncio.gather(
        *(
            client.post(f"/documents/{document_id}/ocr", headers=bearer(user), data={"chunkPages": "1"})
            for _ in range(starts)
        )
    )

    # exactly one start wins; every other one is told the OCR has already started
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [202] + [409] * (starts - 1), [a.text for a in answers]
    (winner,) = [a for a in answers if a.status_code == 202]
    assert (winner.json()["chunks"], winner.json()["document"]["ocrStatus"]) == (PAGES, "processing")
    assert {a.json()["error"]["code"] for a in answers if a.status_code == 409} == {"ocr_already_started"}

    # one set of chunk rows
    rows = await pool.fetch(
        "select * from document_ocr_chunks where document_id = $1 order by chunk_index", UUID(document_id)
    )
    assert [(r["chunk_index"], r["page_start"], r["page_end"]) for r in rows] == [
        (i, i + 1, i + 1) for i in range(PAGES)
    ]

    bucket = pipeline_settings.local_storage_dir / pipeline_settings.storage_bucket
    input_dir = bucket / str(matter) / document_id / "input"
    plans = sorted(p for p in input_dir.iterdir() if p.is_dir())
    # The race was real: more than one start got past the cheap pending check and cut a plan.
    assert len(plans) > 1, f"the starts did not overlap: {plans}"

    # Exactly one plan keeps objects, and they are exactly the rows' inputs, each verifying.
    # Before inputs lived under their plan, every start wrote the same input/<index>.pdf paths,
    # so a loser's clean-up deleted the very objects the winner's rows point at: the checks
    # below (and then the worker, with object_not_found) failed.
    objects = sorted(p for p in input_dir.rglob("*") if p.is_file())
    assert {p.parent for p in objects} == {input_dir / rows[0]["input_storage_path"].split("/")[-2]}
    assert sorted(str(p.relative_to(bucket)) for p in objects) == sorted(
        r["input_storage_path"] for r in rows
    )
    for row in rows:
        data = (bucket / row["input_storage_path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == row["input_checksum"]

    worker = burst_worker(arq_redis, runtime)
    await worker.main()
    assert (worker.jobs_complete, worker.jobs_failed) == (PAGES + 1, 0)  # each chunk, then the merge

    document = await runtime.service.get_document(document_id)
    assert document.ocr_status is DocumentStatus.COMPLETED
    result = await client.get(f"/documents/{document_id}/ocr/result", headers=bearer(user))
    assert result.status_code == 200, result.text
    pages = result.json()["pages"]
    assert [p["pageNumber"] for p in pages] == list(range(1, PAGES + 1))
    assert [p["text"].split() for p in pages] == [t.split() for t in texts]
