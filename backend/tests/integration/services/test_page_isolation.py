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
from app.models.results import MergedResult
from app.services.merge import read_merged
from app.services.planner import start_document
from app.services.queue import ArqJobQueue
from app.services.runtime import Runtime, build_runtime
from tests.bombs import content_bomb_pdf, scattered_glyphs_pdf
from tests.integration.conftest import burst_worker
from tests.pdf_factories import between_text_pages, cer


async def _runtime(pipeline_settings: Settings, arq_redis: ArqRedis, **update: object) -> Runtime:
    return await build_runtime(
        pipeline_settings.model_copy(update=update), ArqJobQueue(arq_redis), worker_id="test-worker"
    )


@pytest.fixture
async def fragile_runtime(
    pipeline_settings: Settings, arq_redis: ArqRedis, pool: asyncpg.Pool
) -> AsyncIterator[Runtime]:
    """OCR processes without the page meter and with 768 MiB of address space: PDFium aborts the
    process on a page whose content inflates past it, as it does on pages that crash it."""
    runtime = await _runtime(pipeline_settings, arq_redis, max_page_decoded_mb=0, ocr_process_memory_mb=768)
    yield runtime
    await runtime.close()


@pytest.fixture
async def timed_runtime(
    pipeline_settings: Settings, arq_redis: ArqRedis, pool: asyncpg.Pool
) -> AsyncIterator[Runtime]:
    """OCR processes that give each page one second of CPU time."""
    runtime = await _runtime(pipeline_settings, arq_redis, max_page_cpu_seconds=1)
    yield runtime
    await runtime.close()


async def _read_with_page_2_lost(
    runtime: Runtime,
    arq_redis: ArqRedis,
    matter_id: UUID,
    pdf: Path,
    texts: list[str],
    code: str,
    engine: str = "text-layer",
) -> tuple[list[dict[str, object]], MergedResult]:
    """pdf's three pages as one chunk through a worker: the chunk completes on its first attempt
    and the document with page 2 failed (code) and pages 1 and 3 read (word for word from the text
    layer; within 2 % CER by OCR). Returns the worker's `ocr_process_died_on_page` events and the
    merged result."""
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        pdf,
        matter_id=matter_id,
        engine=engine,
        chunk_pages=3,
        workers=1,
    )
    with capture_logs() as logs:
        await burst_worker(arq_redis, runtime).main()
    (chunk,) = await runtime.service.get_chunks_by_document(started.document.id)
    assert (chunk.status, chunk.attempt_count) == (ChunkStatus.COMPLETED, 1)
    document = await runtime.service.get_document(started.document.id)
    assert (document.ocr_status, document.pages_failed) == (DocumentStatus.COMPLETED, 1)
    merged = await read_merged(runtime.store, document)
    assert merged is not None
    assert [(f.page_number, f.code) for f in merged.failed_pages] == [(2, code)]
    read = [merged.pages[0].text, merged.pages[2].text]
    if engine == "text-layer":
        assert [text.split() for text in read] == [text.split() for text in texts]
    else:  # page 1 is not the blank that stood in for it on a later run
        assert all(cer(truth, text) < 0.02 for truth, text in zip(texts, read, strict=True)), read
    return [e for e in logs if e["event"] == "ocr_process_died_on_page"], merged


@pytest.mark.timeout(300)
async def test_a_page_that_kills_the_ocr_process_fails_alone(
    fragile_runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    bomb = content_bomb_pdf(tmp_path / "bomb.pdf", 1 << 30)
    texts = between_text_pages(tmp_path / "doc.pdf", bomb, seeds=(7, 8))
    deaths, merged = await _read_with_page_2_lost(
        fragile_runtime, arq_redis, matter_id, tmp_path / "doc.pdf", texts, "ocr_process_died"
    )
    assert [(e["page"], e["deaths"], e["page_failed"]) for e in deaths] == [(2, 1, False), (2, 2, True)]
    assert "died on page 2" in merged.failed_pages[0].message


@pytest.mark.timeout(120)
async def test_a_page_that_uses_up_its_cpu_time_fails_alone_on_its_first_run(
    timed_runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    slow = scattered_glyphs_pdf(tmp_path / "slow.pdf", 40_000)  # PDFium's text page: seconds
    texts = between_text_pages(tmp_path / "doc.pdf", slow, seeds=(7, 8))
    deaths, merged = await _read_with_page_2_lost(
        timed_runtime, arq_redis, matter_id, tmp_path / "doc.pdf", texts, "page_timeout"
    )
    # blamed at once: CPU time is the same on a second run
    assert [(e["page"], e["error_code"], e["deaths"], e["page_failed"]) for e in deaths] == [
        (2, "page_timeout", 1, True)
    ]
    assert "MAX_PAGE_CPU_SECONDS" in merged.failed_pages[0].message


@pytest.mark.timeout(300)
async def test_the_pages_read_before_a_death_are_kept_through_every_run_of_the_chunk(
    fragile_runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    """Read by tesseract, page 1 was read again after each death of the process on page 2 (up to
    a chunk of OCR each time). It is kept from the first run: the second run and the third leave
    it out, and the document has the first run's reading of it."""
    bomb = content_bomb_pdf(tmp_path / "bomb.pdf", 1 << 30)
    texts = between_text_pages(tmp_path / "doc.pdf", bomb, seeds=(7, 8))
    deaths, _ = await _read_with_page_2_lost(
        fragile_runtime, arq_redis, matter_id, tmp_path / "doc.pdf", texts, "ocr_process_died", "tesseract"
    )
    assert [(e["page"], e["deaths"], e["pages_kept"]) for e in deaths] == [(2, 1, 1), (2, 2, 1)]
