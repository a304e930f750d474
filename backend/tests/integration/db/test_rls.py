"""Row level security as Supabase's `authenticated` role sees it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from uuid import UUID

import asyncpg
import pytest

from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import make_document, make_matter, make_user, ranges


@asynccontextmanager
async def as_user(pool: asyncpg.Pool, user_id: UUID) -> AsyncIterator[asyncpg.Connection]:
    """A transaction running as PostgREST runs a request bearing this user's JWT."""
    async with pool.acquire() as conn, conn.transaction():
        claims = json.dumps({"sub": str(user_id), "role": "authenticated"})
        await conn.execute("select set_config('request.jwt.claims', $1, true)", claims)
        await conn.execute("set local role authenticated")
        yield conn


@pytest.fixture
async def two_matters(service: OCRChunkService, pool: asyncpg.Pool) -> dict[str, UUID]:
    matter_a, matter_b = await make_matter(pool, "A"), await make_matter(pool, "B")
    member_a = await make_user(pool, matter_a)
    doc_a, doc_b = await make_document(pool, matter_a, 10), await make_document(pool, matter_b, 10)
    await service.create_chunks_for_document(doc_a, ranges(10, 5))
    await service.create_chunks_for_document(doc_b, ranges(10, 5))
    return {"matter_a": matter_a, "matter_b": matter_b, "member_a": member_a, "doc_a": doc_a, "doc_b": doc_b}


async def test_member_sees_only_their_matters_rows(pool: asyncpg.Pool, two_matters: dict[str, UUID]) -> None:
    async with as_user(pool, two_matters["member_a"]) as conn:
        assert await conn.fetchval("select auth.uid()") == two_matters["member_a"]
        assert {r["id"] for r in await conn.fetch("select id from matters")} == {two_matters["matter_a"]}
        assert {r["id"] for r in await conn.fetch("select id from documents")} == {two_matters["doc_a"]}
        chunk_docs = {
            r["document_id"] for r in await conn.fetch("select document_id from document_ocr_chunks")
        }
        assert chunk_docs == {two_matters["doc_a"]}
        progress_b = await conn.fetchrow("select * from ocr_chunk_progress($1)", two_matters["doc_b"])
        assert progress_b["total"] == 0  # B's chunks exist (2 of them) but are invisible
        progress_a = await conn.fetchrow("select * from ocr_chunk_progress($1)", two_matters["doc_a"])
        assert progress_a["total"] == 2


async def test_member_cannot_write_another_matters_rows(
    pool: asyncpg.Pool, two_matters: dict[str, UUID]
) -> None:
    async with as_user(pool, two_matters["member_a"]) as conn:
        updated = await conn.execute(
            "update documents set filename = 'x.pdf' where id = $1", two_matters["doc_b"]
        )
        assert updated == "UPDATE 0"
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute(
                "insert into documents (matter_id, filename, page_count, file_sha256) values ($1, 'x', 1, $2)",
                two_matters["matter_b"],
                "0" * 64,
            )
    async with as_user(pool, two_matters["member_a"]) as conn:
        # writing chunk rows directly is for workers only, in any matter
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute(
                "update document_ocr_chunks set page_end = page_end where document_id = $1",
                two_matters["doc_a"],
            )
    async with as_user(pool, two_matters["member_a"]) as conn:
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.fetch("select * from ocr_claim_next_chunk('user')")
    assert (
        await pool.fetchval("select filename from documents where id = $1", two_matters["doc_b"])
        == "scan.pdf"
    )
    assert (
        await pool.fetchval("select count(*) from documents where matter_id = $1", two_matters["matter_b"])
        == 1
    )
    assert await pool.fetchval("select count(*) from document_ocr_chunks where status = 'pending'") == 4


async def test_member_can_write_in_their_own_matter(pool: asyncpg.Pool, two_matters: dict[str, UUID]) -> None:
    async with as_user(pool, two_matters["member_a"]) as conn:
        updated = await conn.execute(
            "update documents set filename = 'mine.pdf' where id = $1", two_matters["doc_a"]
        )
        assert updated == "UPDATE 1"
    async with as_user(pool, two_matters["member_a"]) as conn:
        # documents are created by the service (service role) only: see test_roles_sql.py
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute(
                "insert into documents (matter_id, filename, page_count, file_sha256)"
                " values ($1, 'new.pdf', 1, $2)",
                two_matters["matter_a"],
                "0" * 64,
            )
    assert (
        await pool.fetchval("select count(*) from documents where matter_id = $1", two_matters["matter_a"])
        == 1
    )


async def test_anonymous_sees_nothing(pool: asyncpg.Pool, two_matters: dict[str, UUID]) -> None:
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("set local role anon")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.fetch("select * from documents")


async def test_service_role_bypasses_rls(pool: asyncpg.Pool, two_matters: dict[str, UUID]) -> None:
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("set local role service_role")
        assert await conn.fetchval("select count(*) from documents") == 2
        claimed = await conn.fetch("select * from ocr_claim_next_chunk('worker')")
        assert len(claimed) == 1
