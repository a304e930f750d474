"""Operator commands that need a direct PostgreSQL connection rather than the repository.

`chunk-ocr` checks that a database it is pointed at has the schema before using
it, and `chunk-ocr dev-user` puts a local user into a matter. Neither is part of
the service's data path (the repository's functions), and neither runs on
Supabase's HTTP API, so they live here, beside the migrator.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from uuid import UUID

import asyncpg

from app.core.errors import ConfigurationError, RepositoryUnavailableError


@asynccontextmanager
async def _connection(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    try:
        conn = await asyncpg.connect(dsn, statement_cache_size=0)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        raise RepositoryUnavailableError(f"cannot connect to the database: {exc}") from exc
    try:
        yield conn
    finally:
        await conn.close()


async def require_schema(dsn: str) -> None:
    """ConfigurationError unless the database has been migrated (`chunk-ocr db migrate`)."""
    async with _connection(dsn) as conn:
        found = await conn.fetchval("select to_regclass('public.document_ocr_chunks')")
    if found is None:
        raise ConfigurationError("the database has no chunk-ocr schema; run `chunk-ocr db migrate` first")


async def add_member_by_email(dsn: str, *, email: str, matter_id: UUID, role: str) -> UUID:
    """The auth.users id of `email` (the user is created if new), now `role` in the matter."""
    async with _connection(dsn) as conn, conn.transaction():
        user_id: UUID | None = await conn.fetchval(
            "select id from auth.users where email = $1 order by created_at limit 1", email
        )
        if user_id is None:
            user_id = await conn.fetchval("insert into auth.users (email) values ($1) returning id", email)
        await conn.execute(
            """
            insert into public.matter_members (matter_id, user_id, role) values ($1, $2, $3)
            on conflict (matter_id, user_id) do update set role = excluded.role
            """,
            matter_id,
            user_id,
            role,
        )
    if user_id is None:  # the insert returns the id; asyncpg types it as optional
        raise RepositoryUnavailableError("the database did not return the new user's id")
    return user_id
