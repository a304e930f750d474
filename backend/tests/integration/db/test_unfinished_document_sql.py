"""ocr_unfinished_document: the document a stopped `chunk-ocr run` left under way for a file, over
asyncpg and over PostgREST RPC alike."""

from __future__ import annotations

import hashlib
from uuid import UUID

import asyncpg
import pytest

from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import make_matter

FILE = hashlib.sha256(b"the file").hexdigest()
OTHER_FILE = hashlib.sha256(b"another file").hexdigest()


async def document(
    pool: asyncpg.Pool,
    matter_id: UUID,
    *,
    status: str = "processing",
    sha256: str = FILE,
    engine: str = "tesseract",
    language: str = "eng",
    age_seconds: float = 0,
) -> UUID:
    """A document row as a run leaves it, created age_seconds ago."""
    document_id: UUID = await pool.fetchval(
        """
        insert into public.documents (matter_id, filename, page_count, file_sha256, engine, language,
                                      ocr_status, result_storage_path, result_checksum, created_at)
        values ($1, 'big.pdf', 10, $2, $3, $4, $5,
                case when $5 = 'completed' then 'result.json' end,
                case when $5 = 'completed' then $2 end,
                now() - make_interval(secs => $6))
        returning id
        """,
        matter_id,
        sha256,
        engine,
        language,
        status,
        age_seconds,
    )
    return document_id


@pytest.mark.parametrize("over", ["asyncpg", "postgrest"])
async def test_the_newest_document_of_the_file_under_way_is_found(
    service: OCRChunkService, supabase_service: OCRChunkService, pool: asyncpg.Pool, over: str
) -> None:
    asking = service if over == "asyncpg" else supabase_service
    matter = await make_matter(pool)
    assert await asking.get_unfinished_document(matter, FILE, "tesseract", "eng") is None

    await document(pool, matter, age_seconds=600)
    newest = await document(pool, matter, age_seconds=60)
    # none of these is the file's document under way with that engine and language in that matter
    await document(pool, matter, status="completed")
    await document(pool, matter, status="failed")
    await document(pool, matter, status="pending")
    await document(pool, matter, sha256=OTHER_FILE)
    await document(pool, matter, engine="auto")
    await document(pool, matter, language="deu")
    await document(pool, await make_matter(pool, "Another matter"))

    found = await asking.get_unfinished_document(matter, FILE, "tesseract", "eng")
    assert found is not None
    assert found.id == newest
    assert await asking.get_unfinished_document(matter, OTHER_FILE, "tesseract", "eng") is not None
    assert await asking.get_unfinished_document(matter, FILE, "tesseract", "rus") is None


async def test_only_the_service_role_may_look(pool: asyncpg.Pool) -> None:
    signature = "public.ocr_unfinished_document(uuid, text, text, text)"
    for role in ("anon", "authenticated"):
        assert not await pool.fetchval("select has_function_privilege($1, $2, 'execute')", role, signature)
    assert await pool.fetchval("select has_function_privilege('service_role', $1, 'execute')", signature)
