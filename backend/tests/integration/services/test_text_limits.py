"""How much text a page (MAX_PAGE_TEXT_CHARS) and a document's merged result
(MAX_DOCUMENT_TEXT_CHARS) may hold: a page over its limit fails alone with `resource_limit`,
whether a worker or the planner's text pass reads it; a document over its limit is failed
before its merge holds more, by the planner's merge and a worker's alike."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from uuid import UUID

import asyncpg
import pikepdf
import pytest
from arq.connections import ArqRedis
from structlog.testing import capture_logs

from app.core.config import Settings
from app.models.document import DocumentStatus
from app.models.ocr_chunk import ChunkStatus
from app.pdf.samples import make_born_digital_pdf
from app.services.documents import Documents
from app.services.merge import read_merged
from app.services.queue import ArqJobQueue
from app.services.runtime import Runtime, build_runtime
from app.services.text_reader import TextReader
from tests.integration.conftest import burst_worker

Limited = Callable[..., Awaitable[tuple[Runtime, Documents]]]


@pytest.fixture
async def limited(
    pipeline_settings: Settings, arq_redis: ArqRedis, pool: asyncpg.Pool
) -> AsyncIterator[Limited]:
    """limited(**settings): a worker's runtime and the planner's documents service (with its text
    pass) under those settings."""
    opened: list[Runtime | TextReader] = []

    async def open_limited(**update: object) -> tuple[Runtime, Documents]:
        settings = pipeline_settings.model_copy(update={"read_text_at_planning": True, **update})
        runtime = await build_runtime(settings, ArqJobQueue(arq_redis), worker_id="test-worker")
        reader = TextReader(settings)
        opened.extend((runtime, reader))
        return runtime, Documents(runtime.service, runtime.store, ArqJobQueue(arq_redis), reader)

    yield open_limited
    for part in reversed(opened):
        await part.close()


def text_then_blank(tmp_path: Path) -> tuple[Path, str]:
    """Page 1 has about 600 characters of text, page 2 none."""
    (text,) = make_born_digital_pdf(tmp_path / "text.pdf", pages=1, seed=3)
    make_born_digital_pdf(tmp_path / "blank.pdf", pages=1, blank=True)
    with pikepdf.open(tmp_path / "text.pdf") as out, pikepdf.open(tmp_path / "blank.pdf") as blank:
        out.pages.extend(blank.pages)
        out.save(tmp_path / "doc.pdf")
    return tmp_path / "doc.pdf", text


@pytest.mark.parametrize("read_at_planning", [True, False])
async def test_a_page_with_more_text_than_its_limit_fails_alone(
    limited: Limited, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, read_at_planning: bool
) -> None:
    runtime, documents = await limited(max_page_text_chars=100)
    pdf, text = text_then_blank(tmp_path)
    assert len(text) > 100
    if not read_at_planning:
        documents = Documents(runtime.service, runtime.store, documents.queue, None)

    with capture_logs() as logs:
        started = await documents.submit(pdf, matter_id=matter_id, engine="text-layer", workers=1)
    if read_at_planning:  # the pass read page 2 and left page 1 to the workers
        (text_pass,) = [e for e in logs if e["event"] == "text_pass"]
        assert (text_pass["pages"], text_pass["read"]) == (2, 1)
    assert {c.status for c in started.chunks} == {ChunkStatus.PENDING}
    await burst_worker(arq_redis, runtime).main()

    document = await runtime.service.get_document(started.document.id)
    assert (document.ocr_status, document.pages_failed) == (DocumentStatus.COMPLETED, 1)
    merged = await read_merged(runtime.store, document)
    assert merged is not None
    assert [(f.page_number, f.code) for f in merged.failed_pages] == [(1, "resource_limit")]
    assert "MAX_PAGE_TEXT_CHARS" in merged.failed_pages[0].message
    assert [p.text for p in merged.pages] == ["", ""]


async def test_a_document_with_more_text_than_its_limit_is_failed_not_merged(
    limited: Limited, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    """Three pages of about 600 characters each, every page within its own limit: the planner's
    merge stops at the limit and leaves the document to a worker, whose merge fails it."""
    runtime, documents = await limited(max_document_text_chars=1000)
    make_born_digital_pdf(tmp_path / "born.pdf", pages=3, seed=4)

    started = await documents.submit(tmp_path / "born.pdf", matter_id=matter_id, engine="auto", workers=1)
    assert {c.status for c in started.chunks} == {ChunkStatus.COMPLETED}  # every page read at planning
    assert started.document.ocr_status is DocumentStatus.PROCESSING  # but not merged
    await burst_worker(arq_redis, runtime).main()

    document = await runtime.service.get_document(started.document.id)
    assert document.ocr_status is DocumentStatus.FAILED
    assert document.error_message is not None
    assert "MAX_DOCUMENT_TEXT_CHARS" in document.error_message
    assert document.result_storage_path is None
    assert await read_merged(runtime.store, document) is None


async def test_a_document_within_its_text_limit_is_merged(
    limited: Limited, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    runtime, documents = await limited(max_document_text_chars=10_000)
    texts = make_born_digital_pdf(tmp_path / "born.pdf", pages=3, seed=4)
    assert sum(map(len, texts)) < 10_000

    started = await documents.submit(tmp_path / "born.pdf", matter_id=matter_id, engine="auto", workers=1)

    assert started.document.ocr_status is DocumentStatus.COMPLETED
    merged = await read_merged(runtime.store, started.document)
    assert merged is not None
    assert [p.text.split() for p in merged.pages] == [t.split() for t in texts]
