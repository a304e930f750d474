"""The database's CHECK constraints and app.models.limits state the same limits.

For each limited column: a value at the Python limit is stored, one character
more is refused by PostgreSQL itself.
"""

from __future__ import annotations

from uuid import UUID

import asyncpg
import pytest

from app.models import limits
from tests.factories import make_document, make_matter

# (table, column, the Python limit, the key column of the row it is tried on)
LIMITED = [
    ("matters", "name", limits.MATTER_NAME_MAX, "id"),
    ("documents", "filename", limits.FILENAME_MAX, "id"),
    ("documents", "source_path", limits.STORAGE_PATH_MAX, "id"),
    ("documents", "engine", limits.ENGINE_NAME_MAX, "id"),
    ("documents", "language", limits.LANGUAGE_MAX, "id"),
    ("document_ocr_chunks", "language", limits.LANGUAGE_MAX, "id"),
    ("documents", "finalize_worker_id", limits.WORKER_ID_MAX, "id"),
    ("document_ocr_chunks", "worker_id", limits.WORKER_ID_MAX, "id"),
    ("document_ocr_chunks", "error_code", limits.ERROR_CODE_MAX, "id"),
    ("document_ocr_chunks", "error_message", limits.ERROR_MESSAGE_MAX, "id"),
]


async def _rows(pool: asyncpg.Pool) -> dict[str, UUID]:
    matter = await make_matter(pool)
    document = await make_document(pool, matter, page_count=2)
    chunk: UUID = await pool.fetchval(
        """
        insert into public.document_ocr_chunks (document_id, matter_id, chunk_index, page_start, page_end)
        values ($1, $2, 0, 1, 2) returning id
        """,
        document,
        matter,
    )
    return {"matters": matter, "documents": document, "document_ocr_chunks": chunk}


@pytest.mark.parametrize(("table", "column", "limit", "key"), LIMITED)
async def test_the_database_refuses_one_more_than_the_limit(
    pool: asyncpg.Pool, table: str, column: str, limit: int, key: str
) -> None:
    row = (await _rows(pool))[table]
    statement = f"update public.{table} set {column} = $1 where {key} = $2"
    await pool.execute(statement, "x" * limit, row)
    assert await pool.fetchval(f"select length({column}) from public.{table} where {key} = $1", row) == limit
    with pytest.raises(asyncpg.CheckViolationError):
        await pool.execute(statement, "x" * (limit + 1), row)


async def test_checksum_pattern_is_the_same(pool: asyncpg.Pool) -> None:
    row = (await _rows(pool))["documents"]
    good, bad = "0" * 64, "0" * 63 + "A"
    assert limits.SHA256_HEX_PATTERN == r"^[0-9a-f]{64}$"
    statement = "update public.documents set result_checksum = $1 where id = $2"
    await pool.execute(statement, good, row)
    with pytest.raises(asyncpg.CheckViolationError):
        await pool.execute(statement, bad, row)
