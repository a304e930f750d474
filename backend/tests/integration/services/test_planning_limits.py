"""Planning limits: a page tree that repeats one page is refused past MAX_PAGES_PER_DOCUMENT, and
planning a large file leaves the event loop free (the API serves other requests meanwhile)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from uuid import UUID

import asyncpg
import pytest
from arq.connections import ArqRedis

from app.pdf.errors import TooManyPagesError
from app.pdf.plan import plan_chunks
from app.pdf.samples import make_born_digital_pdf
from app.services.planner import plan_document, start_document
from app.services.queue import ArqJobQueue
from app.services.runtime import Runtime
from tests.bombs import repeated_page_pdf


async def _counts(pool: asyncpg.Pool) -> tuple[int, int]:
    documents = await pool.fetchval("select count(*) from documents")
    chunks = await pool.fetchval("select count(*) from document_ocr_chunks")
    return documents, chunks


async def test_a_page_tree_naming_one_page_100000_times_is_refused(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    pdf = repeated_page_pdf(tmp_path / "repeated.pdf", 100_000)
    assert pdf.stat().st_size < 1_000_000  # small on disk: the page count is the cost
    assert runtime.settings.max_pages_per_document == 10_000  # the default
    with pytest.raises(TooManyPagesError) as raised:
        await start_document(
            runtime.service, runtime.store, ArqJobQueue(arq_redis), pdf, matter_id=matter_id, engine="auto"
        )
    assert raised.value.code == "too_many_pages"
    assert not raised.value.retryable
    assert "100000 pages" in str(raised.value)
    assert "10000" in str(raised.value)
    assert await _counts(pool) == (0, 0)  # refused before anything was written
    assert not any(runtime.settings.local_storage_dir.rglob("*.pdf"))


async def test_the_page_limit_is_a_setting_and_holds_for_a_later_start(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    pdf = repeated_page_pdf(tmp_path / "thirty.pdf", 30)
    queue = ArqJobQueue(arq_redis)
    runtime.service.settings = runtime.settings.model_copy(update={"max_pages_per_document": 30})
    at_limit = await start_document(
        runtime.service,
        runtime.store,
        queue,
        pdf,
        matter_id=matter_id,
        engine="text-layer",
        plan=False,
        keep_source=True,
    )
    assert at_limit.info.page_count == 30
    runtime.service.settings = runtime.settings.model_copy(update={"max_pages_per_document": 29})
    with pytest.raises(TooManyPagesError):  # registered earlier, planned now: the limit of now holds
        await plan_document(runtime.service, runtime.store, queue, at_limit.document)
    assert await _counts(pool) == (1, 0)


async def test_planning_a_large_file_leaves_the_event_loop_free(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    # 2,000 born-digital pages cut short: PDFium refuses the file, so inspecting and cutting it each
    # rebuild it with pypdf (pure Python, seconds on this machine) before the chunks are cut.
    make_born_digital_pdf(tmp_path / "whole.pdf", pages=2_000, seed=3)
    data = (tmp_path / "whole.pdf").read_bytes()
    (tmp_path / "big.pdf").write_bytes(data[: len(data) * 9 // 10])
    gaps: list[float] = []
    done = asyncio.Event()
    ticking = asyncio.Event()

    async def tick() -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            ticking.set()
            last = now

    ticker = asyncio.create_task(tick())
    await ticking.wait()  # ticking before planning starts, or a stall at its very start goes unseen
    started_at = time.monotonic()
    try:
        started = await start_document(
            runtime.service,
            runtime.store,
            ArqJobQueue(arq_redis),
            tmp_path / "big.pdf",
            matter_id=matter_id,
            engine="auto",
            workers=2,
        )
    finally:
        done.set()
        await ticker
    took = time.monotonic() - started_at
    assert started.info.page_count == 2_000
    assert started.info.warnings
    assert len(started.chunks) == len(plan_chunks(2_000, None, 2))  # 45: tapering to the last pages
    # The loop ticked all along: no step of planning held it for long (a generous bound on a
    # loaded 2-core machine; run on the loop, the repair alone holds it for seconds).
    assert max(gaps) < 0.5, f"the event loop stalled {max(gaps):.2f} s while planning took {took:.2f} s"
