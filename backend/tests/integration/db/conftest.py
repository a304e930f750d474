"""Fixtures of the database tests."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
import respx

from app.core.config import Settings
from app.db.supabase import SupabaseChunkRepository
from app.services.ocr_chunk_service import OCRChunkService
from tests.conftest import with_database
from tests.postgrest_fake import SERVICE_ROLE_KEY, SUPABASE_URL, FakePostgrest


@pytest.fixture
async def empty_database(postgres_server_dsn: str) -> AsyncIterator[str]:
    """A database of its own with nothing in it (no migration applied), dropped afterwards."""
    name = f"chunk_ocr_empty_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(postgres_server_dsn)
    await conn.execute(f'create database "{name}"')
    try:
        yield with_database(postgres_server_dsn, name)
    finally:
        await conn.execute(f'drop database if exists "{name}" with (force)')
        await conn.close()


@pytest.fixture
async def supabase_service(pool: asyncpg.Pool, settings: Settings) -> AsyncIterator[OCRChunkService]:
    """The service over PostgREST RPC (supabase-py), answered by a fake PostgREST in front of the
    test database: the same SQL functions as `service` reaches over asyncpg."""
    fake = FakePostgrest(pool)
    with respx.mock(base_url=f"{SUPABASE_URL}/rest/v1", assert_all_called=False) as router:
        router.route().mock(side_effect=fake.handle)
        repository = await SupabaseChunkRepository.connect(SUPABASE_URL, SERVICE_ROLE_KEY)
        yield OCRChunkService(repository, settings)
        await repository.close()
