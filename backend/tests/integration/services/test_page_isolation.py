"""A page on which PDFium kills its OCR process fails alone: the chunk's other pages are read in
the same attempt, and the document completes with that page recorded as failed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from uuid import UUID

import asyncpg
import pytest
from arq.connections import ArqRedis
from structlog.testing import capture_logs

from app.core.config import Settings
from app.models.document import DocumentStatus
from app.models.ocr_chunk import ChunkStatus
from app.services.merge import read_merged
from app.services.planner import start_document
from app.services.queue import ArqJobQueue
from app.services.runtime import Runtime, build_runtime
from tests.bombs import content_bomb_pdf, scattered_glyphs_pdf
from tests.integration.conftest import burst_worker
from tests.pdf_factories import between_text_pages


@pytest.fixture
async def fragile_runtime(
    pipeline_settings: Settings, arq_redis: ArqRedis, pool: asyncpg.Pool
) -> AsyncIterator[Runtime]:
    """OCR processes without the page meter and with 768 MiB of address space: PDFium aborts the
    process on a page whose content inflates past it, as it does on pages that crash it."""
    settings = pipeline_settings.model_copy(update={"max_page_decoded_mb": 0, "ocr_process_memory_mb": 768})
    runtime = await build_runtime(settings, ArqJobQueue(arq_redis), worker_id="test-worker")
    yield runtime
    await runtime.close()


@pytest.mark.timeout(300)
async def test_a_page_that_kills_the_ocr_process_fails_alone(
    fragile_runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    bomb = content_bomb_pdf(tmp_path / "bomb.pdf", 1 << 30)
    texts = between_text_pages(tmp_path / "doc.pdf", bomb, seeds=(7, 8))
    runtime = fragile_runtime
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        tmp_path / "doc.pdf",
        matter_id=matter_id,
        engine="text-layer",
        chunk_pages=3,
        workers=1,
    )
    with capture_logs() as logs:
        await burst_worker(arq_redis, runtime).main()

    deaths = [e for e in logs if e["event"] == "ocr_process_died_on_page"]
    assert [(e["page"], e["deaths"], e["page_failed"]) for e in deaths] == [(2, 1, False), (2, 2, True)]
    (chunk,) = await runtime.service.get_chunks_by_document(started.document.id)
    assert (chunk.status, chunk.attempt_count) == (ChunkStatus.COMPLETED, 1)
    document = await runtime.service.get_document(started.document.id)
    assert (document.ocr_status, document.pages_failed) == (DocumentStatus.COMPLETED, 1)
    merged = await read_merged(runtime.store, document)
    assert merged is not None
    assert [(f.page_number, f.code) for f in merged.failed_pages] == [(2, "ocr_process_died")]
    assert "died on page 2" in merged.failed_pages[0].message
    assert [p.text.split() for p in (merged.pages[0], merged.pages[2])] == [t.split() for t in texts]


@pytest.fixture
async def timed_runtime(
    pipeline_settings: Settings, arq_redis: ArqRedis, pool: asyncpg.Pool
) -> AsyncIterator[Runtime]:
    """OCR processes that give each page one second of CPU time."""
    settings = pipeline_settings.model_copy(update={"max_page_cpu_seconds": 1})
    runtime = await build_runtime(settings, ArqJobQueue(arq_redis), worker_id="test-worker")
    yield runtime
    await runtime.close()


@pytest.mark.timeout(120)
async def test_a_page_that_uses_up_its_cpu_time_fails_alone_on_its_first_run(
    timed_runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    slow = scattered_glyphs_pdf(tmp_path / "slow.pdf", 40_000)  # PDFium's text page: seconds
    texts = between_text_pages(tmp_path / "doc.pdf", slow, seeds=(7, 8))
    runtime = timed_runtime
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        tmp_path / "doc.pdf",
        matter_id=matter_id,
        engine="text-layer",
        chunk_pages=3,
        workers=1,
    )
    with capture_logs() as logs:
        await burst_worker(arq_redis, runtime).main()

    deaths = [e for e in logs if e["event"] == "ocr_process_died_on_page"]
    # blamed at once: CPU time is the same on a second run
    assert [(e["page"], e["error_code"], e["deaths"], e["page_failed"]) for e in deaths] == [
        (2, "page_timeout", 1, True)
    ]
    (chunk,) = await runtime.service.get_chunks_by_document(started.document.id)
    assert (chunk.status, chunk.attempt_count) == (ChunkStatus.COMPLETED, 1)
    document = await runtime.service.get_document(started.document.id)
    assert (document.ocr_status, document.pages_failed) == (DocumentStatus.COMPLETED, 1)
    merged = await read_merged(runtime.store, document)
    assert merged is not None
    assert [(f.page_number, f.code) for f in merged.failed_pages] == [(2, "page_timeout")]
    assert "MAX_PAGE_CPU_SECONDS" in merged.failed_pages[0].message
    assert [p.text.split() for p in (merged.pages[0], merged.pages[2])] == [t.split() for t in texts]
