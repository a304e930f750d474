"""A document's budget of page timeouts (app.services.page_budget): once MAX_DOCUMENT_PAGE_TIMEOUTS
of its pages have used up MAX_PAGE_CPU_SECONDS, each page of it still to be read gets
MAX_PAGE_CPU_SECONDS_AFTER_TIMEOUTS. On the code before, every page had the full limit however
many of the document's pages had used it up: a file of a thousand slow pages held the fleet for
a thousand times the limit."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from uuid import UUID, uuid4

import pytest
from arq.connections import ArqRedis
from pypdf import PdfReader, PdfWriter

from app.core.config import Settings
from app.engines.pool import page_timeout
from app.models.document import DocumentStatus
from app.pdf.samples import make_born_digital_pdf
from app.services.merge import read_merged
from app.services.page_budget import PageTimeoutBudget
from app.services.planner import start_document
from app.services.queue import PAGE_TIMEOUTS_KEY_PREFIX, ArqJobQueue, connect_redis
from app.services.runtime import build_runtime
from tests import servers
from tests.bombs import scattered_glyphs_pdf
from tests.integration.conftest import burst_worker
from tests.integration.test_full_redis import refusing
from tests.servers import PrivateRedis

private_redis = servers.private_redis

# PDFium's text page of scattered glyphs takes time as the square of their number: 50,000 take
# about 11 s of CPU on a 2-core machine, 10,000 about 0.5 s (a slow page outlasts the full limit
# on a machine several times faster; a moderate page is read within it on one several times
# slower, and not within the shorter limit on one several times faster).
SLOW_GLYPHS, MODERATE_GLYPHS = 50_000, 10_000
FULL_SECONDS, AFTER_SECONDS = 2, 0.1


def _document(path: Path, middle: list[Path]) -> list[str]:
    """A born-digital page, the pages of middle, another born-digital page; their two texts."""
    before, after = path.with_name(f"{path.stem}-before.pdf"), path.with_name(f"{path.stem}-after.pdf")
    texts = make_born_digital_pdf(before, pages=1, seed=3) + make_born_digital_pdf(after, pages=1, seed=4)
    writer = PdfWriter()
    for part in (before, *middle, after):
        writer.append(PdfReader(part))
    writer.write(path)
    return texts


@pytest.mark.timeout(300)
async def test_past_its_budget_a_documents_pages_get_fewer_seconds(
    pipeline_settings: Settings, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    """Two slow pages use up the full limit and spend the budget of two; the moderate page after
    them, which the full limit reads, then fails within the shorter one. The same moderate page
    in another document, whose budget is whole, is read."""
    slow = scattered_glyphs_pdf(tmp_path / "slow.pdf", SLOW_GLYPHS)
    moderate = scattered_glyphs_pdf(tmp_path / "moderate.pdf", MODERATE_GLYPHS)
    hostile, sound = tmp_path / "hostile.pdf", tmp_path / "sound.pdf"
    texts = _document(hostile, [slow, slow, moderate])
    _document(sound, [moderate])
    settings = pipeline_settings.model_copy(
        update={
            "max_page_cpu_seconds": FULL_SECONDS,
            "max_document_page_timeouts": 2,
            "max_page_cpu_seconds_after_timeouts": AFTER_SECONDS,
        }
    )
    runtime = await build_runtime(settings, ArqJobQueue(arq_redis), worker_id="budget-worker")
    try:
        started = [
            await start_document(
                runtime.service,
                runtime.store,
                ArqJobQueue(arq_redis),
                pdf,
                matter_id=matter_id,
                engine="text-layer",
                chunk_pages=5,
                workers=1,
            )
            for pdf in (hostile, sound)
        ]
        await burst_worker(arq_redis, runtime).main()
        merged = []
        for each in started:
            document = await runtime.service.get_document(each.document.id)
            assert document.ocr_status is DocumentStatus.COMPLETED
            merged.append(await read_merged(runtime.store, document))
    finally:
        await runtime.close()

    hostile_result, sound_result = merged
    assert hostile_result is not None
    assert sound_result is not None
    failed = [(f.page_number, f.code, f.message) for f in hostile_result.failed_pages]
    assert [(number, code) for number, code, _ in failed] == [
        (2, "page_timeout"),
        (3, "page_timeout"),
        (4, "page_timeout"),
    ]
    assert [
        message.endswith(f"more than {FULL_SECONDS} s of CPU time to read (MAX_PAGE_CPU_SECONDS)")
        for _, _, message in failed
    ] == [True, True, False]
    assert failed[2][2] == (
        f"page 4 took more than {AFTER_SECONDS:g} s of CPU time to read (MAX_PAGE_CPU_SECONDS_AFTER_TIMEOUTS)"
    )
    pages = hostile_result.pages
    assert [pages[0].text.split(), pages[4].text.split()] == [t.split() for t in texts]
    # the other document's budget is its own: the moderate page is read within the full limit
    assert sound_result.failed_pages == ()
    assert sound_result.pages[1].text.count("x") == MODERATE_GLYPHS
    assert await arq_redis.get(PAGE_TIMEOUTS_KEY_PREFIX + str(started[0].document.id)) == b"3"
    assert await arq_redis.get(PAGE_TIMEOUTS_KEY_PREFIX + str(started[1].document.id)) is None


@pytest.mark.parametrize("redis_is", ["refusing", "silent"])
async def test_without_redis_pages_keep_the_full_limit(pipeline_settings: Settings, redis_is: str) -> None:
    """The count is best-effort: a Redis that refuses connections, or one that takes them and
    never answers (stopped), leaves every page the full limit within `ask_seconds`, and a
    timeout is still the page's own failure."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        if redis_is == "silent":
            server.listen()  # connects succeed (the backlog); nothing is ever read or answered
        port = server.getsockname()[1]
        redis = ArqRedis(host="127.0.0.1", port=port, socket_connect_timeout=1)
        budget = PageTimeoutBudget(ArqJobQueue(redis), pipeline_settings, ask_seconds=0.5)
        document_id = uuid4()
        try:
            assert await budget.page_seconds(document_id) is None
            error = page_timeout(7, 120, "MAX_PAGE_CPU_SECONDS")
            assert await budget.timed_out(document_id, error, None) == (error, None)
        finally:
            await redis.aclose()


async def test_a_stop_that_lands_as_redis_answers_is_not_lost(
    pipeline_settings: Settings, arq_redis: ArqRedis
) -> None:
    """Every chunk asks Redis its document's count before it reads. A cancel (the worker's stop)
    that landed in the same turn of the loop as Redis's answer was lost in asyncio.wait_for
    (Python 3.11): the chunk read on past its worker's stop, and the OCR processes were stopped
    under it. The answer and the cancel are made to land together here."""
    budget = PageTimeoutBudget(ArqJobQueue(arq_redis), pipeline_settings)
    answer: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def count() -> int:  # Redis's reply, when the test gives it
        return await answer

    asking = asyncio.ensure_future(budget._asked(count(), uuid4(), "page_timeouts_unknown"))
    for _ in range(3):  # the question is out: the ask awaits its answer
        await asyncio.sleep(0)
    answer.set_result(0)
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fault", ["full", "unsaved", "frozen"])
async def test_a_redis_that_refuses_writes_or_is_stopped_costs_the_count_not_the_chunk(
    pipeline_settings: Settings, private_redis: PrivateRedis, fault: str
) -> None:
    """At its maxmemory (OOM) or unable to save (MISCONF), Redis still answers the count and
    refuses to add to it; stopped, it answers nothing. Neither fails the page's chunk: its
    timeout is its own failure, and the count is what Redis could say within ask_seconds."""
    redis = await connect_redis(private_redis.url, reply_timeout=0.5)
    budget = PageTimeoutBudget(ArqJobQueue(redis), pipeline_settings, ask_seconds=0.5)
    document_id = uuid4()
    over = pipeline_settings.max_document_page_timeouts
    await redis.set(PAGE_TIMEOUTS_KEY_PREFIX + str(document_id), over)
    after = pipeline_settings.max_page_cpu_seconds_after_timeouts
    error = page_timeout(7, 120, "MAX_PAGE_CPU_SECONDS")
    try:
        async with refusing(fault, private_redis):
            known = await budget.page_seconds(document_id)
            assert known == (None if fault == "frozen" else after)
            assert await budget.timed_out(document_id, error, None) == (error, None)
        assert await redis.get(PAGE_TIMEOUTS_KEY_PREFIX + str(document_id)) == str(over).encode()
    finally:
        await redis.aclose()
