"""A throwaway migrated database for a benchmark run."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from app.db.migrations import migrate


def server_dsn() -> str:
    if url := os.environ.get("DATABASE_URL"):
        return url
    from app.embedded import start_postgres

    return start_postgres(Path(tempfile.gettempdir()) / "chunk-ocr-bench").dsn


@asynccontextmanager
async def scratch_database() -> AsyncIterator[str]:
    server = server_dsn()
    name = f"chunk_ocr_bench_{uuid.uuid4().hex[:10]}"
    conn = await asyncpg.connect(server)
    await conn.execute(f'create database "{name}"')
    dsn = urlunsplit(urlsplit(server)._replace(path=f"/{name}"))
    try:
        await migrate(dsn, plain_postgres=True)
        yield dsn
    finally:
        await conn.execute(f'drop database if exists "{name}" with (force)')
        await conn.close()
