"""A statement that ran while its answer was lost (the connection dropped in between).

The claim is the one that matters: it commits a lease. A worker that only retries
it takes a second chunk and leaves the first `processing`, leased to nobody,
until the stale sweep fails it and it runs a second attempt.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit
from uuid import UUID

import pytest
from arq.connections import ArqRedis

from app.core.backoff import Backoff
from app.core.config import Settings
from app.models.ocr_chunk import ChunkStatus
from app.pdf.samples import make_born_digital_pdf
from app.services.chunk_processor import ChunkOutcome
from app.services.queue import ArqJobQueue
from app.services.runtime import Runtime, build_runtime
from tests.integration.services.test_pipeline import start
from tests.pg_cut import PgCut


@pytest.fixture
async def cut(database_url: str) -> AsyncIterator[PgCut]:
    parts = urlsplit(database_url)
    proxy = PgCut(parts.hostname or "127.0.0.1", parts.port or 5432)
    await proxy.start()
    yield proxy
    await proxy.close()


@pytest.fixture
async def cut_runtime(
    pipeline_settings: Settings, database_url: str, arq_redis: ArqRedis, cut: PgCut
) -> AsyncIterator[Runtime]:
    """A worker's runtime whose database connections all go through the proxy."""
    settings = pipeline_settings.model_copy(
        update={"database_url": cut.dsn(database_url), "stale_chunk_threshold_seconds": 30.0}
    )
    runtime = await build_runtime(settings, ArqJobQueue(arq_redis), worker_id="cut-worker")
    runtime.processor.database_backoff = Backoff(base=0.05, cap=0.2)
    yield runtime
    await runtime.close()


async def test_a_claim_whose_answer_was_lost_is_taken_up_not_left_to_the_sweep(
    cut_runtime: Runtime, runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, cut: PgCut
) -> None:
    make_born_digital_pdf(tmp_path / "born.pdf", pages=6, seed=41)
    started = await start(runtime, arq_redis, tmp_path / "born.pdf", matter_id, chunk_pages=2)
    first = started.chunks[0]

    cut.arm("ocr_claim_for_holder")
    assert await cut_runtime.processor.process(str(first.id)) is ChunkOutcome.COMPLETED
    assert cut.cuts == 1  # the claim ran, and its answer never arrived

    chunks = await runtime.service.get_chunks_by_document(started.document.id)
    by_status = {status: [c for c in chunks if c.status is status] for status in ChunkStatus}
    assert by_status[ChunkStatus.PROCESSING] == []  # nothing leased to nobody
    (done,) = by_status[ChunkStatus.COMPLETED]
    assert done.attempt_count == 1
    assert {c.attempt_count for c in by_status[ChunkStatus.PENDING]} == {0}
