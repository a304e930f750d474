"""The asyncpg connector: an ocr_* function call is one statement on a pool.

Each call is `select * from public.f(p_a => $1, ...)` (or `select public.f(...)`
for one value), in its own implicit transaction with no session state, so it
works the same through a transaction pooler, where the statement cache must be
off (``Settings.statement_cache_size`` turns it off for Supabase's pooler
port). A list or dict argument is sent as JSON text (for a jsonb parameter);
a json answer comes back as text, which the repository parses (PostgREST
parses it itself).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Self

import asyncpg

from app.core.errors import OCRError, RepositoryUnavailableError
from app.db.errors import error_for_sqlstate
from app.db.repository import ChunkRepository


def _arguments(args: Mapping[str, object]) -> list[object]:
    return [json.dumps(v) if isinstance(v, (list, dict)) else v for v in args.values()]


class AsyncpgConnector:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool
        self._calls: dict[tuple[str, tuple[str, ...]], str] = {}

    @classmethod
    async def connect(
        cls,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        statement_cache_size: int = 100,
        call_timeout: float = 30,
    ) -> Self:
        """call_timeout: seconds a connection or a call may take before it is an outage
        (RepositoryUnavailableError); asyncpg cancels the call on the server."""
        try:
            pool = await asyncpg.create_pool(
                dsn,
                min_size=min_size,
                max_size=max_size,
                statement_cache_size=statement_cache_size,
                timeout=call_timeout,
                command_timeout=call_timeout,
                server_settings={"application_name": "chunk-ocr"},
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            raise RepositoryUnavailableError(f"cannot connect to the database: {exc}") from exc
        return cls(pool)

    def _call(self, function: str, names: tuple[str, ...]) -> str:
        """`public.f(p_a => $1, ...)`, built once per function and argument names."""
        key = (function, names)
        if key not in self._calls:
            arguments = ", ".join(f"{name} => ${i}" for i, name in enumerate(names, start=1))
            self._calls[key] = f"public.{function}({arguments})"
        return self._calls[key]

    async def rows(
        self,
        function: str,
        args: Mapping[str, object],
        *,
        on_unique: type[OCRError] | None = None,
        on_foreign_key: type[OCRError] | None = None,
    ) -> list[Mapping[str, Any]]:
        call = self._call(function, tuple(args))
        async with self._translated(on_unique=on_unique, on_foreign_key=on_foreign_key):
            records = await self.pool.fetch(f"select * from {call}", *_arguments(args))
        return [dict(record) for record in records]

    async def value(self, function: str, args: Mapping[str, object]) -> object:
        call = self._call(function, tuple(args))
        async with self._translated():
            return await self.pool.fetchval(f"select {call}", *_arguments(args))

    async def ping(self) -> None:
        async with self._translated():
            await self.pool.fetchval("select 1")

    async def close(self) -> None:
        await self.pool.close()

    @asynccontextmanager
    async def _translated(
        self,
        *,
        on_unique: type[OCRError] | None = None,
        on_foreign_key: type[OCRError] | None = None,
    ) -> AsyncIterator[None]:
        try:
            yield
        except asyncpg.PostgresError as exc:
            raise error_for_sqlstate(
                exc.sqlstate, str(exc), on_unique=on_unique, on_foreign_key=on_foreign_key
            ) from exc
        except (asyncpg.InterfaceError, OSError, TimeoutError) as exc:
            raise RepositoryUnavailableError(f"database connection failed: {exc}") from exc
        except asyncpg.InternalClientError as exc:  # its text is asyncpg's internals: kept as the cause
            # What the pool raises instead of the lost connection's own error when a server that
            # went away mid-query leaves the connection in a state its reset on release cannot
            # leave ("cannot switch to state ..."). The pool has closed that connection: the
            # next call opens another, once the server answers.
            raise RepositoryUnavailableError("database connection lost during a call") from exc


class PostgresChunkRepository(ChunkRepository):
    """The repository on asyncpg (DATABASE_URL)."""

    connector: AsyncpgConnector

    @classmethod
    async def connect(
        cls,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = 10,
        statement_cache_size: int = 100,
        call_timeout: float = 30,
    ) -> Self:
        return cls(
            await AsyncpgConnector.connect(
                dsn,
                min_size=min_size,
                max_size=max_size,
                statement_cache_size=statement_cache_size,
                call_timeout=call_timeout,
            )
        )

    @property
    def pool(self) -> asyncpg.Pool:
        return self.connector.pool
