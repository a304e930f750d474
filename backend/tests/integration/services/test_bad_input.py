"""Bad input gets a clear domain error and writes nothing."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest

from app.core.errors import (
    ChunkNotFoundError,
    DocumentNotFoundError,
    DuplicateChunkError,
    InvalidInputError,
    OCRError,
)
from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import make_document, ranges


async def chunk_count(pool: asyncpg.Pool) -> int:
    count: int = await pool.fetchval("select count(*) from document_ocr_chunks")
    return count


@pytest.mark.parametrize(
    ("chunk", "error"),
    [
        ({"chunk_index": 0, "page_start": 0, "page_end": 3}, InvalidInputError),
        ({"chunk_index": 0, "page_start": -2, "page_end": 3}, InvalidInputError),
        ({"chunk_index": 0, "page_start": 5, "page_end": 4}, InvalidInputError),
        ({"chunk_index": -1, "page_start": 1, "page_end": 4}, InvalidInputError),
        ({"chunk_index": 0, "page_start": 1, "page_end": 11}, InvalidInputError),  # past the last page
        ({"chunk_index": 0, "page_start": "one", "page_end": 4}, InvalidInputError),
        ({"chunk_index": 0, "page_start": 1}, InvalidInputError),
    ],
)
async def test_bad_ranges_are_refused(
    service: OCRChunkService, pool: asyncpg.Pool, chunk: dict[str, Any], error: type[OCRError]
) -> None:
    document_id = await make_document(pool, page_count=10)
    ok = {"chunk_index": 1, "page_start": 6, "page_end": 10}
    with pytest.raises(error) as raised:
        await service.create_chunks_for_document(document_id, [ok, chunk])
    assert raised.value.code == "invalid_input"
    assert await chunk_count(pool) == 0
    with pytest.raises(error):
        await service.create_chunk({**chunk, "document_id": document_id, "matter_id": document_id})
    assert await chunk_count(pool) == 0


async def test_duplicate_chunk_index_in_one_batch(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool, page_count=10)
    batch = [
        {"chunk_index": 0, "page_start": 1, "page_end": 5},
        {"chunk_index": 0, "page_start": 6, "page_end": 10},
    ]
    with pytest.raises(DuplicateChunkError):
        await service.create_chunks_for_document(document_id, batch)
    assert await chunk_count(pool) == 0


async def test_duplicate_chunk_index_against_the_database(
    service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    document_id = await make_document(pool, page_count=10)
    await service.create_chunks_for_document(document_id, ranges(10, 5))
    with pytest.raises(DuplicateChunkError) as raised:
        # the database's UNIQUE (document_id, chunk_index) decides: the ranges do not overlap
        await service.repository.create_chunks(document_id, ranges(10, 5)[:1], 3)
    assert raised.value.code == "duplicate_chunk"
    assert raised.value.retryable is False
    assert await chunk_count(pool) == 2
    # all or nothing: a batch with one clash writes none of its rows
    first = ranges(10, 5)[0]
    with pytest.raises(DuplicateChunkError):
        await service.repository.create_chunks(
            document_id, [first.model_copy(update={"chunk_index": 7}), first], 3
        )
    assert await chunk_count(pool) == 2


async def test_overlapping_ranges_are_refused(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool, page_count=10)
    with pytest.raises(InvalidInputError, match="overlap"):
        await service.create_chunks_for_document(
            document_id,
            [
                {"chunk_index": 0, "page_start": 1, "page_end": 6},
                {"chunk_index": 1, "page_start": 6, "page_end": 10},
            ],
        )
    assert await chunk_count(pool) == 0


async def test_no_chunks_is_refused(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool)
    with pytest.raises(InvalidInputError):
        await service.create_chunks_for_document(document_id, [])


@pytest.mark.parametrize("bad_id", ["", "not-a-uuid", "123", "00000000-0000-0000-0000-00000000000g"])
async def test_invalid_ids(service: OCRChunkService, bad_id: str) -> None:
    for call in (
        service.get_chunk(bad_id),
        service.get_chunks_by_document(bad_id),
        service.get_chunk_progress(bad_id),
        service.claim_chunk(bad_id, "w"),
        service.create_chunks_for_document(bad_id, ranges(1, 1)),
        service.retry_failed_chunks(bad_id),
    ):
        with pytest.raises(InvalidInputError, match="not a valid UUID"):
            await call


async def test_unknown_ids(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    missing = "6f1d7a70-2c4e-4a0b-9d3e-0c5b1f2a3b4c"
    with pytest.raises(ChunkNotFoundError):
        await service.get_chunk(missing)
    with pytest.raises(ChunkNotFoundError):
        await service.update_status(missing, "failed", error_code="x")
    with pytest.raises(DocumentNotFoundError):
        await service.create_chunks_for_document(missing, ranges(1, 1))
    assert await service.claim_chunk(missing, "w") is None


@pytest.mark.parametrize("status", ["done", "PENDING", "", "cancelled"])
async def test_unknown_status(service: OCRChunkService, pool: asyncpg.Pool, status: str) -> None:
    document_id = await make_document(pool, page_count=5)
    (chunk,) = await service.create_chunks_for_document(document_id, ranges(5, 5))
    with pytest.raises(InvalidInputError, match="status"):
        await service.update_status(chunk.id, status)
    assert (await service.get_chunk(chunk.id)) == chunk


async def test_bad_worker_id_and_results(service: OCRChunkService, pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool, page_count=5)
    (chunk,) = await service.create_chunks_for_document(document_id, ranges(5, 5))
    with pytest.raises(InvalidInputError):
        await service.claim_chunk(chunk.id, "  ")
    claimed = await service.claim_chunk(chunk.id, "w")
    assert claimed is not None
    with pytest.raises(InvalidInputError):
        await service.complete_chunk(claimed.lease, "r.json", "not-a-sha")
    with pytest.raises(InvalidInputError):
        await service.complete_chunk(claimed.lease, "", "0" * 64)
    assert (await service.get_chunk(chunk.id)).status == "processing"
