"""The PostgREST connector: an ocr_* function call is one RPC through supabase-py.

The same functions the asyncpg connector calls, with the same argument names,
with the service role key, so RLS does not apply and the SQL decides everything.

Errors are translated here, once, by code, never by message text. A PostgREST
error body's ``code`` (the SQLSTATE, or PostgREST's own ``PGRST...``) goes
through ``error_for_sqlstate`` as asyncpg's ``sqlstate`` does, so both
repositories raise the same error for the same SQL failure. A 5xx (or 408/429)
answer without a SQLSTATE means PostgREST lost its database (PGRST000-003) or a
gateway in front of it failed (JSON without a code, an HTML page): postgrest-py
keeps no HTTP status on ``APIError``, so a response hook recognises these
before it parses the body. Those and transport errors are retryable.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any, Self
from uuid import UUID

import httpx
from postgrest.exceptions import APIError
from supabase import AsyncClient, AsyncClientOptions, AsyncSupabaseException, acreate_client

from app.core.errors import ConfigurationError, OCRError, RepositoryError, RepositoryUnavailableError
from app.db._postgrest import UnavailableResponse, install_hook, reject_unavailable
from app.db.errors import error_for_sqlstate
from app.db.repository import ChunkRepository

DOCUMENTS = "documents"


class PostgrestConnector:
    """ocr_* functions by PostgREST RPC (POST /rest/v1/rpc/f with the named arguments as JSON)."""

    def __init__(self, client: AsyncClient) -> None:
        """Use ``client`` (its PostgREST session gets the unavailable-response hook); close() closes it."""
        self._client = client
        install_hook(client.postgrest.session)

    @classmethod
    async def connect(cls, url: str, service_role_key: str, *, request_timeout: float = 30) -> Self:
        """A client with one HTTP/1.1 connection pool for the process, closed by close()."""
        http = httpx.AsyncClient(
            timeout=httpx.Timeout(request_timeout), event_hooks={"response": [reject_unavailable]}
        )
        options = AsyncClientOptions(
            auto_refresh_token=False,  # a service role key has no user session to refresh
            persist_session=False,
            # postgrest-py would sleep and resend GETs after a 503 or a network error; whether and
            # when to try again is the caller's decision (RepositoryUnavailableError.retryable).
            postgrest_client_retry=False,
            # Our own client also spares postgrest-py's deprecated per-client timeout argument.
            httpx_client=http,
        )
        try:
            client = await acreate_client(url, service_role_key, options)
        except AsyncSupabaseException as exc:
            await http.aclose()
            raise ConfigurationError(
                f"invalid SUPABASE_URL or SUPABASE_SERVICE_ROLE_KEY: {exc.message}"
            ) from exc
        return cls(client)

    async def close(self) -> None:
        await self._client.postgrest.aclose()

    async def ping(self) -> None:
        async with self._translated():
            await self._client.table(DOCUMENTS).select("id").limit(1).execute()

    @asynccontextmanager
    async def _translated(
        self,
        *,
        on_unique: type[OCRError] | None = None,
        on_foreign_key: type[OCRError] | None = None,
    ) -> AsyncIterator[None]:
        try:
            yield
        except APIError as exc:
            raise error_for_sqlstate(
                exc.code, exc.message or "PostgREST error", on_unique=on_unique, on_foreign_key=on_foreign_key
            ) from exc
        except UnavailableResponse as exc:
            raise RepositoryUnavailableError(
                f"Supabase API unavailable: {exc}", status=exc.status, error_code=exc.code
            ) from exc
        except httpx.TransportError as exc:  # connect, read, write, pool and timeout errors
            raise RepositoryUnavailableError(f"Supabase API unreachable: {exc!r}") from exc

    async def rows(
        self,
        function: str,
        args: Mapping[str, object],
        *,
        on_unique: type[OCRError] | None = None,
        on_foreign_key: type[OCRError] | None = None,
    ) -> list[Mapping[str, Any]]:
        data = await self._call(function, args, on_unique=on_unique, on_foreign_key=on_foreign_key)
        if data is None:
            return []
        if isinstance(data, dict):  # a function returning one row, not a set
            return [data]
        if not isinstance(data, list) or not all(isinstance(row, dict) for row in data):
            raise RepositoryError(f"{function} returned {type(data).__name__}, expected rows")
        return data

    async def value(self, function: str, args: Mapping[str, object]) -> object:
        return await self._call(function, args)

    async def _call(
        self, function: str, args: Mapping[str, object], **translate: type[OCRError] | None
    ) -> object:
        params = {name: _json_value(value) for name, value in args.items()}
        async with self._translated(**translate):
            response = await self._client.rpc(function, params).execute()
        return response.data


def _json_value(value: object) -> object:
    """An argument as PostgREST takes it: UUIDs and times as strings, the rest as they are."""
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


class SupabaseChunkRepository(ChunkRepository):
    """The repository on Supabase's PostgREST API (SUPABASE_URL and the service role key): RLS
    does not apply, and the SQL decides everything."""

    connector: PostgrestConnector

    @classmethod
    async def connect(cls, url: str, service_role_key: str, *, request_timeout: float = 30) -> Self:
        return cls(await PostgrestConnector.connect(url, service_role_key, request_timeout=request_timeout))
