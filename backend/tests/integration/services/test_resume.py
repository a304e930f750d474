"""A document a stopped run left under way is taken up again by a run of the same file
(app.services.resume), on real servers: the same document, its chunks queued again once."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import pytest
from arq.connections import ArqRedis

from app.core.config import Settings
from app.models.document import DocumentStatus
from app.pdf.samples import make_born_digital_pdf, make_scanned_pdf
from app.services.documents import Documents
from app.services.queue import QUEUE_NAME, ArqJobQueue
from app.services.runtime import Runtime
from tests.integration.conftest import burst_worker


@pytest.fixture
def pipeline_settings(pipeline_settings: Settings) -> Settings:
    """As `chunk-ocr run` without --output pdf: the original is not kept."""
    return pipeline_settings.model_copy(update={"searchable_pdf": False})


@pytest.fixture
def documents(runtime: Runtime, arq_redis: ArqRedis) -> Documents:
    return Documents(runtime.service, runtime.store, ArqJobQueue(arq_redis))


async def test_a_file_under_way_is_taken_up_again_and_queued_once(
    documents: Documents, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    pdf = tmp_path / "scan.pdf"
    make_scanned_pdf(pdf, pages=3, seed=5)
    started = await documents.submit(pdf, matter_id=matter_id, engine="tesseract", chunk_pages=1)
    assert await arq_redis.zcard(QUEUE_NAME) == 3

    await arq_redis.flushdb()  # the queue lost its jobs (an embedded Redis that stopped, say)
    resumed = await documents.resume(pdf, matter_id=matter_id, engine="tesseract", searchable=False)
    assert resumed is not None
    assert resumed.document.id == started.document.id
    assert resumed.document.ocr_status is DocumentStatus.PROCESSING
    assert [c.id for c in resumed.chunks] == [c.id for c in started.chunks]
    assert resumed.info.page_count == 3
    assert await arq_redis.zcard(QUEUE_NAME) == 3  # queued again

    again = await documents.resume(pdf, matter_id=matter_id, engine="tesseract", searchable=False)
    assert again is not None
    assert again.document.id == started.document.id
    assert await arq_redis.zcard(QUEUE_NAME) == 3  # a job still queued is not queued twice


async def test_only_the_same_file_engine_language_and_matter_is_taken_up(
    documents: Documents, matter_id: UUID, tmp_path: Path
) -> None:
    pdf, other = tmp_path / "scan.pdf", tmp_path / "other.pdf"
    make_scanned_pdf(pdf, pages=2, seed=6)
    make_scanned_pdf(other, pages=2, seed=7)
    await documents.submit(pdf, matter_id=matter_id, engine="tesseract", chunk_pages=1)
    another_matter = await documents.service.get_or_create_matter("another matter")

    assert await documents.resume(other, matter_id=matter_id, engine="tesseract", searchable=False) is None
    assert await documents.resume(pdf, matter_id=matter_id, engine="auto", searchable=False) is None
    assert (
        await documents.resume(pdf, matter_id=matter_id, engine="tesseract", language="deu", searchable=False)
        is None
    )
    assert await documents.resume(pdf, matter_id=another_matter, engine="tesseract", searchable=False) is None
    assert (
        await documents.resume(
            tmp_path / "gone.pdf", matter_id=matter_id, engine="tesseract", searchable=False
        )
        is None
    )


async def test_a_searchable_pdf_needs_the_original_kept(
    documents: Documents, matter_id: UUID, tmp_path: Path
) -> None:
    pdf = tmp_path / "scan.pdf"
    make_scanned_pdf(pdf, pages=2, seed=8)
    await documents.submit(pdf, matter_id=matter_id, engine="tesseract", chunk_pages=1)
    assert await documents.resume(pdf, matter_id=matter_id, engine="tesseract", searchable=True) is None

    kept = await documents.submit(
        pdf, matter_id=matter_id, engine="tesseract", chunk_pages=1, keep_source=True
    )
    resumed = await documents.resume(pdf, matter_id=matter_id, engine="tesseract", searchable=True)
    assert resumed is not None
    assert resumed.document.id == kept.document.id


async def test_a_finished_document_is_not_taken_up(
    documents: Documents, runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    """Running a file whose document is complete reads it again."""
    pdf = tmp_path / "born.pdf"
    make_born_digital_pdf(pdf, pages=2, seed=9)
    started = await documents.submit(pdf, matter_id=matter_id, engine="text-layer", chunk_pages=1)
    assert await documents.resume(pdf, matter_id=matter_id, engine="text-layer", searchable=False) is not None

    await burst_worker(arq_redis, runtime).main()
    finished = await documents.status(started.document.id)
    assert finished.document.ocr_status is DocumentStatus.COMPLETED
    assert await documents.resume(pdf, matter_id=matter_id, engine="text-layer", searchable=False) is None
