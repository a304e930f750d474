"""Blob store on Supabase Storage (storage3 through supabase-py's AsyncClient).

Uploads carry the content type, `x-upsert: true` (objects are overwritten in
place; chunk results are content-addressed, so an overwrite stores the same
bytes) and the SHA-256 in the object's metadata, so an object can be checked
against its row from the Storage dashboard too. Storage errors are translated
here, by the status and error code Storage returns, never by message text.
One HTTP/1.1 client per process, closed by close().
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Self

import httpx
from storage3.exceptions import StorageApiError
from supabase import AsyncClient, AsyncClientOptions, acreate_client

from app.storage.base import StoredObject
from app.storage.checksums import sha256_hex
from app.storage.errors import ObjectNotFoundError, StorageError, StoragePermanentError

# Storage answers some failures with HTTP 400 and the real status in the body's statusCode.
_NOT_FOUND_CODES = frozenset({"not_found", "NoSuchKey", "NoSuchBucket"})
_RETRYABLE_STATUS = frozenset({408, 425, 429})


def _status(error: StorageApiError) -> int:
    try:
        return int(str(error.status))
    except ValueError:
        return 0


class SupabaseBlobStore:
    def __init__(self, client: AsyncClient, bucket: str, http: httpx.AsyncClient | None = None) -> None:
        self._client = client
        self.bucket = bucket
        self._http = http

    @classmethod
    async def connect(
        cls, url: str, service_role_key: str, bucket: str, *, request_timeout: float = 120
    ) -> Self:
        http = httpx.AsyncClient(timeout=httpx.Timeout(request_timeout), http2=False)
        options = AsyncClientOptions(auto_refresh_token=False, persist_session=False, httpx_client=http)
        return cls(await acreate_client(url, service_role_key, options), bucket, http)

    def location(self, path: str) -> str:
        return f"Supabase Storage bucket {self.bucket}, object {path}"

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()

    @asynccontextmanager
    async def _translated(self, path: str) -> AsyncIterator[None]:
        try:
            yield
        except StorageApiError as exc:
            status = _status(exc)
            if status == 404 or exc.code in _NOT_FOUND_CODES:
                raise ObjectNotFoundError(f"no object at {path}", path=path) from exc
            if status >= 500 or status in _RETRYABLE_STATUS:
                raise StorageError(f"Supabase Storage failed on {path}: {exc.message}", path=path) from exc
            raise StoragePermanentError(
                f"Supabase Storage refused {path}: {exc.code}: {exc.message}", path=path, status=status
            ) from exc
        except httpx.TransportError as exc:
            raise StorageError(f"Supabase Storage unreachable ({path}): {exc}", path=path) from exc

    async def put(self, path: str, data: bytes, content_type: str) -> StoredObject:
        checksum = sha256_hex(data)
        async with self._translated(path):
            await self._client.storage.from_(self.bucket).upload(
                path,
                data,
                {"content-type": content_type, "upsert": "true", "metadata": {"sha256": checksum}},
            )
        return StoredObject(path=path, sha256=checksum, size=len(data))

    async def put_file(self, path: str, source: Path, content_type: str) -> StoredObject:
        checksum, size = await asyncio.to_thread(_file_sha256, source)
        with source.open("rb") as handle:  # httpx sends a file object in blocks
            async with self._translated(path):
                await self._client.storage.from_(self.bucket).upload(
                    path,
                    handle,
                    {"content-type": content_type, "upsert": "true", "metadata": {"sha256": checksum}},
                )
        return StoredObject(path=path, sha256=checksum, size=size)

    async def get(self, path: str) -> bytes:
        async with self._translated(path):
            return await self._client.storage.from_(self.bucket).download(path)

    async def exists(self, path: str) -> bool:
        async with self._translated(path):
            return await self._client.storage.from_(self.bucket).exists(path)

    async def delete(self, path: str) -> None:
        async with self._translated(path):
            await self._client.storage.from_(self.bucket).remove([path])


def _file_sha256(source: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with source.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size
