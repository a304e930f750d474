"""The operator's direct-connection commands: the schema check and the local user's membership."""

from __future__ import annotations

import uuid

import asyncpg
import pytest

from app.core.config import Settings
from app.core.errors import ConfigurationError, RepositoryUnavailableError, SchemaMissingError
from app.db.admin import add_member_by_email, require_schema
from app.db.postgres import PostgresChunkRepository
from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import make_matter


async def test_require_schema(database_url: str, empty_database: str) -> None:
    await require_schema(database_url)  # migrated: nothing to say
    with pytest.raises(ConfigurationError, match="chunk-ocr db migrate"):
        await require_schema(empty_database)


async def test_require_schema_of_a_server_that_does_not_answer() -> None:
    with pytest.raises(RepositoryUnavailableError) as caught:
        await require_schema("postgresql://postgres@127.0.0.1:1/postgres")
    assert caught.value.retryable


async def test_add_member_by_email_creates_once_and_sets_the_role(
    database_url: str, pool: asyncpg.Pool
) -> None:
    matter = await make_matter(pool)
    email = f"dev-{uuid.uuid4().hex[:8]}@example.com"
    first = await add_member_by_email(database_url, email=email, matter_id=matter, role="viewer")
    again = await add_member_by_email(database_url, email=email, matter_id=matter, role="owner")
    assert first == again
    assert await pool.fetchval("select count(*) from auth.users where email = $1", email) == 1
    rows = await pool.fetch("select user_id, role from public.matter_members where matter_id = $1", matter)
    assert [(r["user_id"], r["role"]) for r in rows] == [(first, "owner")]


async def test_a_worker_s_repository_on_a_database_never_migrated_says_to_migrate(
    empty_database: str, settings: Settings
) -> None:
    """A worker on such a database logged "the database refused the operation" every sweep."""
    repository = await PostgresChunkRepository.connect(empty_database)
    try:
        with pytest.raises(SchemaMissingError, match="chunk-ocr db migrate") as caught:
            await OCRChunkService(repository, settings).sweep_stale_chunks()
        assert caught.value.code == "schema_missing"
    finally:
        await repository.close()
