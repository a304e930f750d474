"""ocr_start_document with chunks the planner read: created completed in the same statement."""

from __future__ import annotations

import hashlib
import json

import asyncpg
import pytest

from tests.factories import make_document

SHA = hashlib.sha256(b"input").hexdigest()
RESULT = hashlib.sha256(b"result").hexdigest()


def _chunk(index: int, start: int, end: int, *, read: bool) -> dict[str, object]:
    chunk: dict[str, object] = {
        "chunk_index": index,
        "page_start": start,
        "page_end": end,
        "input_checksum": SHA,
    }
    if read:
        chunk |= {"result_storage_path": f"m/d/chunks/{index}.json", "result_checksum": RESULT}
    return chunk


async def test_read_chunks_are_completed_by_the_planner_and_the_others_stay_pending(
    pool: asyncpg.Pool,
) -> None:
    document = await make_document(pool, page_count=30)
    chunks = [_chunk(0, 1, 10, read=True), _chunk(1, 11, 12, read=False), _chunk(2, 13, 30, read=True)]

    rows = await pool.fetch(
        "select * from public.ocr_start_document($1, $2::jsonb)", document, json.dumps(chunks)
    )

    assert [r["chunk_index"] for r in rows] == [0, 1, 2]
    assert [r["status"] for r in rows] == ["completed", "pending", "completed"]
    for row in (rows[0], rows[2]):
        assert (row["worker_id"], row["attempt_count"]) == ("planner", 1)
        assert row["result_storage_path"] == f"m/d/chunks/{row['chunk_index']}.json"
        assert row["result_checksum"] == RESULT
        assert row["processing_completed_at"] is not None
    assert (rows[1]["worker_id"], rows[1]["attempt_count"], rows[1]["result_checksum"]) == (None, 0, None)
    assert (
        await pool.fetchval("select ocr_status from public.documents where id = $1", document) == "processing"
    )


async def test_a_document_read_whole_is_ready_to_merge(pool: asyncpg.Pool) -> None:
    document = await make_document(pool, page_count=5)
    await pool.fetch(
        "select * from public.ocr_start_document($1, $2::jsonb)",
        document,
        json.dumps([_chunk(0, 1, 5, read=True)]),
    )

    ready = await pool.fetch("select id from public.ocr_documents_ready_to_merge(10, 60)")

    assert [r["id"] for r in ready] == [document]


async def test_a_read_chunk_without_its_checksum_is_refused(pool: asyncpg.Pool) -> None:
    document = await make_document(pool, page_count=5)
    chunk = _chunk(0, 1, 5, read=True) | {"result_checksum": None}

    with pytest.raises(asyncpg.CheckViolationError):
        await pool.fetch(
            "select * from public.ocr_start_document($1, $2::jsonb)", document, json.dumps([chunk])
        )

    assert (
        await pool.fetchval(
            "select count(*) from public.document_ocr_chunks where document_id = $1", document
        )
        == 0
    )


async def test_a_chunk_still_cannot_be_inserted_completed(pool: asyncpg.Pool) -> None:
    document = await make_document(pool, page_count=5)
    with pytest.raises(asyncpg.PostgresError) as raised:
        await pool.execute(
            "insert into public.document_ocr_chunks (matter_id, document_id, chunk_index, page_start, page_end,"
            " status) select matter_id, id, 0, 1, 5, 'completed' from public.documents where id = $1",
            document,
        )
    assert raised.value.sqlstate == "OC001"
