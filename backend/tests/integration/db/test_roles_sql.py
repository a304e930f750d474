"""Roles in SQL, as Supabase's `authenticated` role meets them through PostgREST or a SQL client.

A viewer's UPDATE affects no row; nobody but the service role may write the
columns workers and the service trust (status, storage paths, checksums, page
counts, source path, engine, language, the matter) or insert documents at all; the
service role still can. Runs on the real PostgreSQL with every migration.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from uuid import UUID

import asyncpg
import pytest

from app.db.migrations import default_migrations_dir
from tests.factories import make_document, make_matter, make_user

ROLES_MIGRATION = default_migrations_dir() / "20261123000300_ocr_roles.sql"
SHA = "a" * 64


@asynccontextmanager
async def as_user(pool: asyncpg.Pool, user_id: UUID) -> AsyncIterator[asyncpg.Connection]:
    """A transaction running as PostgREST runs a request bearing this user's JWT."""
    async with pool.acquire() as conn, conn.transaction():
        claims = json.dumps({"sub": str(user_id), "role": "authenticated"})
        await conn.execute("select set_config('request.jwt.claims', $1, true)", claims)
        await conn.execute("set local role authenticated")
        yield conn


@dataclass
class Setup:
    matter: UUID
    other_matter: UUID
    document: UUID
    other_document: UUID
    users: dict[str, UUID]


@pytest.fixture
async def setup(pool: asyncpg.Pool) -> Setup:
    matter, other = await make_matter(pool, "A"), await make_matter(pool, "B")
    users = {role: await make_user(pool, matter, role=role) for role in ("owner", "member", "viewer")}
    users["outsider"] = await make_user(pool, other, role="owner")
    return Setup(
        matter, other, await make_document(pool, matter, 10), await make_document(pool, other, 10), users
    )


async def document_row(pool: asyncpg.Pool, document_id: UUID) -> dict[str, object]:
    return dict(await pool.fetchrow("select * from documents where id = $1", document_id))


# The issue's own attack, then each trusted column alone.
TRUSTED_UPDATES = {
    "the-issue": "ocr_status = 'completed', result_storage_path = '{other}/x/result.json', page_count = 99999",
    "ocr_status": "ocr_status = 'failed'",
    "result_storage_path": "result_storage_path = '{other}/x/result.json'",
    "result_checksum": f"result_checksum = '{SHA}'",
    "page_count": "page_count = 99999",
    "source_path": "source_path = '/etc/passwd'",
    "file_sha256": f"file_sha256 = '{SHA}'",
    "engine": "engine = 'google-vision'",
    "language": "language = 'rus'",
    "matter_id": "matter_id = '{other}'",
    "error_message": "error_message = 'fine'",
    "finalize_worker_id": "finalize_worker_id = 'me'",
    "ocr_completed_at": "ocr_completed_at = now()",
}


@pytest.mark.parametrize("role", ["owner", "member", "viewer", "outsider"])
@pytest.mark.parametrize("assignment", TRUSTED_UPDATES.values(), ids=TRUSTED_UPDATES.keys())
async def test_nobody_but_the_service_writes_trusted_columns(
    pool: asyncpg.Pool, setup: Setup, role: str, assignment: str
) -> None:
    before = await document_row(pool, setup.document)
    async with as_user(pool, setup.users[role]) as conn:
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute(
                f"update documents set {assignment.format(other=setup.other_matter)} where id = $1",
                setup.document,
            )
    assert await document_row(pool, setup.document) == before


@pytest.mark.parametrize("role", ["owner", "member", "viewer"])
@pytest.mark.parametrize("source_path", [None, "/etc/passwd"], ids=["no-source", "etc-passwd"])
async def test_users_never_insert_documents(
    pool: asyncpg.Pool, setup: Setup, role: str, source_path: str | None
) -> None:
    async with as_user(pool, setup.users[role]) as conn:
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute(
                "insert into documents (matter_id, filename, source_path, page_count, file_sha256)"
                " values ($1, 'x.pdf', $2, 1, $3)",
                setup.matter,
                source_path,
                SHA,
            )
    assert await pool.fetchval("select count(*) from documents where matter_id = $1", setup.matter) == 1


async def test_a_viewers_update_affects_no_row(pool: asyncpg.Pool, setup: Setup) -> None:
    async with as_user(pool, setup.users["viewer"]) as conn:
        assert (
            await conn.fetchval("select count(*) from documents where id = $1", setup.document) == 1
        )  # sees it
        assert await conn.execute(
            "update documents set filename = 'x.pdf' where id = $1", setup.document
        ) == ("UPDATE 0")
        assert await conn.execute("update documents set filename = 'x.pdf'") == "UPDATE 0"
    assert (await document_row(pool, setup.document))["filename"] == "scan.pdf"


@pytest.mark.parametrize("role", ["owner", "member"])
async def test_writers_may_rename_in_their_matter_only(pool: asyncpg.Pool, setup: Setup, role: str) -> None:
    async with as_user(pool, setup.users[role]) as conn:
        assert await conn.execute(
            "update documents set filename = 'mine.pdf' where id = $1", setup.document
        ) == ("UPDATE 1")
        assert await conn.execute(
            "update documents set filename = 'theirs.pdf' where id = $1", setup.other_document
        ) == ("UPDATE 0")
    assert (await document_row(pool, setup.document))["filename"] == "mine.pdf"
    assert (await document_row(pool, setup.other_document))["filename"] == "scan.pdf"


@pytest.mark.parametrize("role", ["owner", "member", "viewer"])
@pytest.mark.parametrize(
    "statement",
    [
        "delete from documents",
        "truncate documents cascade",
        "insert into matter_members (matter_id, user_id, role) values ('{matter}', '{user}', 'owner')",
        "update matter_members set role = 'owner'",
        "delete from matter_members",
        "update document_ocr_chunks set status = 'pending'",
        "insert into matters (name) values ('mine')",
    ],
    ids=["delete", "truncate", "self-invite", "promote", "leave", "chunks", "new-matter"],
)
async def test_users_write_nothing_else(pool: asyncpg.Pool, setup: Setup, role: str, statement: str) -> None:
    async with as_user(pool, setup.users[role]) as conn:
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.execute(statement.format(matter=setup.other_matter, user=setup.users[role]))
    assert await pool.fetchval("select count(*) from documents") == 2
    assert await pool.fetchval("select count(*) from matter_members") == 4
    assert await pool.fetchval(
        "select role from matter_members where user_id = $1", setup.users["viewer"]
    ) == ("viewer")


async def test_the_service_role_still_writes_everything(pool: asyncpg.Pool, setup: Setup) -> None:
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("set local role service_role")
        path = f"{setup.matter}/{setup.document}/source.pdf"
        updated = await conn.execute(
            "update documents set page_count = 12, source_path = $2, file_sha256 = $3, ocr_status = 'processing'"
            " where id = $1",
            setup.document,
            path,
            SHA,
        )
        assert updated == "UPDATE 1"
        await conn.execute(
            "insert into documents (matter_id, filename, source_path, page_count, file_sha256)"
            " values ($1, 'svc.pdf', 'x', 1, $2)",
            setup.matter,
            SHA,
        )
        assert await conn.fetchval(
            "select ocr_user_matter_role($1, $2)", setup.matter, setup.users["viewer"]
        ) == ("viewer")
    row = await document_row(pool, setup.document)
    assert (row["page_count"], row["source_path"], row["ocr_status"]) == (12, path, "processing")


async def test_role_helpers_answer_for_the_caller(pool: asyncpg.Pool, setup: Setup) -> None:
    expected = {
        "owner": ("owner", True),
        "member": ("member", True),
        "viewer": ("viewer", False),
        "outsider": (None, False),
    }
    for role, answer in expected.items():
        async with as_user(pool, setup.users[role]) as conn:
            found = await conn.fetchrow(
                "select ocr_member_role($1) as role, ocr_can_write($1) as can_write", setup.matter
            )
            assert (found["role"], found["can_write"]) == answer, role


async def test_only_the_service_asks_for_another_users_role(pool: asyncpg.Pool, setup: Setup) -> None:
    async with as_user(pool, setup.users["owner"]) as conn:
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.fetchval("select ocr_user_matter_role($1, $2)", setup.matter, setup.users["viewer"])
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute("set local role anon")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.fetchval("select ocr_can_write($1)", setup.matter)


async def test_the_migration_removes_supabases_default_grants(pool: asyncpg.Pool) -> None:
    """Supabase grants ALL on new tables to anon and authenticated; running the roles migration
    (again: it is idempotent) leaves exactly what is meant. Rolled back afterwards."""
    tables = "public.matters, public.matter_members, public.documents, public.document_ocr_chunks"
    async with pool.acquire() as conn:
        transaction = conn.transaction()
        await transaction.start()
        try:
            await conn.execute(f"grant all on {tables} to anon, authenticated")
            await conn.execute(
                "grant execute on function public.ocr_user_matter_role(uuid, uuid) to authenticated"
            )
            await conn.execute(ROLES_MIGRATION.read_text(encoding="utf-8"))
            privileges = await conn.fetch(
                """
                select t.name, p.privilege,
                       has_table_privilege('authenticated', t.name, p.privilege) as authenticated,
                       has_table_privilege('anon', t.name, p.privilege) as anon
                  from unnest(array['public.matters', 'public.matter_members', 'public.documents',
                                    'public.document_ocr_chunks']) as t(name),
                       unnest(array['select', 'insert', 'update', 'delete', 'truncate', 'references',
                                    'trigger']) as p(privilege)
                """
            )
            granted = {(r["name"], r["privilege"]) for r in privileges if r["authenticated"]}
            assert granted == {
                ("public.matters", "select"),
                ("public.matter_members", "select"),
                ("public.documents", "select"),
                ("public.document_ocr_chunks", "select"),
            }
            assert not any(r["anon"] for r in privileges)
            columns = await conn.fetch(
                """
                select column_name from information_schema.column_privileges
                 where grantee = 'authenticated' and table_name = 'documents' and privilege_type = 'UPDATE'
                """
            )
            assert [r["column_name"] for r in columns] == ["filename"]
            assert not await conn.fetchval(
                "select has_function_privilege('authenticated', 'public.ocr_user_matter_role(uuid, uuid)', 'execute')"
            )
        finally:
            await transaction.rollback()
