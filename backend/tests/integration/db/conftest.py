"""Fixtures of the database tests."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest

from tests.conftest import with_database


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
