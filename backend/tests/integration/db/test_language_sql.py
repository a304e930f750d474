"""A document's language in SQL: the same syntax as Python's, copied to every chunk, and
English for the rows that existed before the column did."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from uuid import UUID

import asyncpg
import pytest
from pydantic import TypeAdapter, ValidationError

from app.core.languages import LANGUAGE_MAX, LANGUAGE_PATTERN
from app.db.migrations import default_migrations_dir, migrate
from app.models.limits import Language
from tests.factories import make_document, make_matter

LANGUAGE_MIGRATION = "20261124000200_ocr_document_language.sql"
SHA = "b" * 64

SAMPLES = [
    "eng",
    "rus",
    "chi_sim",
    "deu_latf",
    "eng+deu",
    "eng+rus+deu+chi_sim",
    "x" * LANGUAGE_MAX,
    "x" * (LANGUAGE_MAX + 1),
    "",
    "eng+",
    "+eng",
    "eng++deu",
    "eng deu",
    "eng,deu",
    " eng",
    "eng\n",
    "1eng",
    "_eng",
    "../eng",
    "script/Latin",
    "eng;drop",
    "énglish",
    "eng-deu",
]


def python_accepts(value: str) -> bool:
    try:
        TypeAdapter(Language).validate_python(value)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("value", SAMPLES, ids=[repr(s)[:30] for s in SAMPLES])
async def test_the_database_and_python_accept_the_same_languages(pool: asyncpg.Pool, value: str) -> None:
    document = await make_document(pool, page_count=2)
    try:
        await pool.execute("update public.documents set language = $1 where id = $2", value, document)
        stored = True
    except asyncpg.CheckViolationError:
        stored = False
    assert stored == python_accepts(value)
    assert stored == (bool(re.fullmatch(LANGUAGE_PATTERN, value)) and len(value) <= LANGUAGE_MAX)


async def test_every_chunk_carries_its_documents_language(pool: asyncpg.Pool) -> None:
    matter = await make_matter(pool)
    created = await pool.fetchrow(
        "select * from public.ocr_create_document(p_matter_id => $1, p_filename => 'r.pdf', p_page_count => 4,"
        " p_file_sha256 => $2, p_engine => 'tesseract', p_language => 'rus+eng')",
        matter,
        SHA,
    )
    assert (created["engine"], created["language"]) == ("tesseract", "rus+eng")
    chunks = [
        {"chunk_index": i, "page_start": 1 + 2 * i, "page_end": 2 + 2 * i, "input_checksum": SHA}
        for i in range(2)
    ]
    rows = await pool.fetch(
        "select * from public.ocr_start_document($1, $2::jsonb)", created["id"], json.dumps(chunks)
    )
    assert [(r["engine"], r["language"]) for r in rows] == [("tesseract", "rus+eng")] * 2

    # without a language the document reads English, and so do its chunks
    plain = await make_document(pool, matter, page_count=1)
    assert await pool.fetchval("select language from public.documents where id = $1", plain) == "eng"
    (row,) = await pool.fetch(
        "select * from public.ocr_start_document($1, $2::jsonb)",
        plain,
        json.dumps([{"chunk_index": 0, "page_start": 1, "page_end": 1}]),
    )
    assert row["language"] == "eng"


async def test_one_ocr_create_document_for_postgrest(pool: asyncpg.Pool) -> None:
    """A second signature of the same name would make PostgREST's RPC ambiguous."""
    signatures = await pool.fetch(
        "select oid::regprocedure::text as signature from pg_proc where proname = 'ocr_create_document'"
    )
    assert [r["signature"] for r in signatures] == [
        "ocr_create_document(uuid,text,integer,text,uuid,text,text,text)"
    ]


async def test_rows_from_before_the_column_read_english(empty_database: str, tmp_path: Path) -> None:
    """The upgrade: a database with a document and its chunk, then the language migration."""
    earlier = tmp_path / "earlier"
    earlier.mkdir()
    for path in sorted(default_migrations_dir().glob("*.sql")):
        if path.name < LANGUAGE_MIGRATION:
            shutil.copy2(path, earlier / path.name)
    await migrate(empty_database, earlier, plain_postgres=True)
    conn = await asyncpg.connect(empty_database)
    try:
        matter: UUID = await conn.fetchval("insert into public.matters (name) values ('old') returning id")
        document: UUID = await conn.fetchval(
            "insert into public.documents (matter_id, filename, page_count, file_sha256, engine)"
            " values ($1, 'old.pdf', 1, $2, 'tesseract') returning id",
            matter,
            SHA,
        )
        await conn.execute(
            "insert into public.document_ocr_chunks (matter_id, document_id, chunk_index, page_start, page_end)"
            " values ($1, $2, 0, 1, 1)",
            matter,
            document,
        )
        applied = await migrate(empty_database, plain_postgres=True)
        assert LANGUAGE_MIGRATION.removesuffix(".sql") in [f"{m.version}_{m.name}" for m in applied]
        assert await conn.fetchval("select language from public.documents where id = $1", document) == "eng"
        chunk = await conn.fetchrow(
            "select engine, language from public.document_ocr_chunks where document_id = $1", document
        )
        assert (chunk["engine"], chunk["language"]) == ("tesseract", "eng")
    finally:
        await conn.close()
