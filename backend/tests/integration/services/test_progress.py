"""Progress aggregates for a document with chunks in every state."""

from __future__ import annotations

import asyncpg

from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import checksum, make_document, ranges


async def test_progress_counts_every_state(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool, page_count=95)
    # 10 chunks of 10 pages, the last one 5 pages
    chunks = await service.create_chunks_for_document(document_id, ranges(95, 10))
    assert [c.page_count for c in chunks] == [10] * 9 + [5]

    for index in range(6):  # claim 0..5 (FIFO)
        assert (await service.claim_next_chunk("w", document_id)).chunk_index == index  # type: ignore[union-attr]
    by_index = {c.chunk_index: c for c in await service.get_chunks_by_document(document_id)}
    for index in (0, 1, 2):
        await service.complete_chunk(by_index[index].lease, f"{index}.json", checksum(bytes([index])))
    await service.fail_chunk(
        by_index[3].lease, error_code="engine_unavailable", error_message="x", retryable=True
    )
    await service.fail_chunk(by_index[4].lease, error_code="corrupt_page", error_message="x", retryable=False)
    # chunk 5 stays processing; chunks 6..9 stay pending (9 is the 5-page one)

    progress = await service.get_chunk_progress(document_id)
    assert (progress.total, progress.pending, progress.processing, progress.completed, progress.failed) == (
        10,
        4,
        1,
        3,
        2,
    )
    assert progress.failed_retryable == 1
    assert (progress.pages_total, progress.pages_completed) == (95, 30)
    assert progress.percent == round(100 * 30 / 95, 2)
    assert progress.first_started_at is not None
    assert progress.last_completed_at is not None
    assert not progress.is_complete
    assert not progress.is_stuck
    assert len(await service.get_pending_chunks(document_id)) == 4
    assert len(await service.get_processing_chunks(document_id)) == 1
    assert {c.chunk_index for c in await service.get_failed_chunks(document_id)} == {3, 4}


async def test_progress_of_a_document_without_chunks(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool)
    progress = await service.get_chunk_progress(document_id)
    assert (progress.total, progress.pages_total, progress.percent) == (0, 0, 0.0)
    assert progress.document_id == document_id


async def test_progress_serialises_camel_case(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool, page_count=10)
    await service.create_chunks_for_document(document_id, ranges(10, 5))
    body = (await service.get_chunk_progress(document_id)).model_dump(mode="json", by_alias=True)
    assert body["documentId"] == str(document_id)
    assert body["pagesTotal"] == 10
    assert "pages_total" not in body
