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
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Self
from urllib.parse import quote

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
    def __init__(self, client: AsyncClient, bucket: str, http: httpx.AsyncClient) -> None:
        """`http` is the client's own HTTP client (connect builds both): get_file streams through it."""
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
        await self._http.aclose()

    @asynccontextmanager
    async def _translated(self, path: str) -> AsyncIterator[None]:
        try:
            yield
        except StorageApiError as exc:
            raise _error(path, _status(exc), exc.code, exc.message) from exc
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

    async def get_file(self, path: str, dest: Path) -> StoredObject:
        """Streamed from Storage's object endpoint straight to dest, hashed on the way."""
        url = f"{self._client.storage_url}object/{self.bucket}/{quote(path)}"
        digest, size = hashlib.sha256(), 0
        try:
            async with self._http.stream("GET", url, headers=self._client.options.headers) as response:
                if response.status_code != 200:
                    raise _response_error(path, response.status_code, await response.aread())
                with dest.open("wb") as out:
                    async for block in response.aiter_bytes(_BLOCK):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
        except httpx.TransportError as exc:
            await asyncio.to_thread(dest.unlink, missing_ok=True)
            raise StorageError(f"Supabase Storage unreachable ({path}): {exc}", path=path) from exc
        except OSError as exc:
            raise StorageError(f"cannot write {dest.name}: {exc.strerror}", path=path) from exc
        return StoredObject(path=path, sha256=digest.hexdigest(), size=size)

    async def verified_local_file(self, path: str, expected_sha256: str) -> Path | None:
        return None  # Storage's objects are not files here: they are downloaded, or signed URLs

    async def signed_url(self, path: str, expires_in: int) -> str | None:
        """Storage's signed download URL (no key needed to use it) for expires_in seconds."""
        async with self._translated(path):
            signed = await self._client.storage.from_(self.bucket).create_signed_url(path, expires_in)
        url = signed.get("signedURL") or signed.get("signedUrl")
        if not url:
            raise StorageError(f"Supabase Storage signed no URL for {path}", path=path)
        return str(url)

    async def exists(self, path: str) -> bool:
        async with self._translated(path):
            return await self._client.storage.from_(self.bucket).exists(path)

    async def delete(self, path: str) -> None:
        async with self._translated(path):
            await self._client.storage.from_(self.bucket).remove([path])


_BLOCK = 1 << 20


def _error(path: str, status: int, code: str | None, message: str) -> StorageError:
    """Storage's answer as our error, by its status and error code (never its message text)."""
    if status == 404 or code in _NOT_FOUND_CODES:
        return ObjectNotFoundError(f"no object at {path}", path=path)
    if status >= 500 or status in _RETRYABLE_STATUS:
        return StorageError(f"Supabase Storage failed on {path}: {message}", path=path)
    return StoragePermanentError(
        f"Supabase Storage refused {path}: {code}: {message}", path=path, status=status
    )


def _response_error(path: str, http_status: int, body: bytes) -> StorageError:
    """A raw error answer: Storage puts the real status in the body's statusCode (often under 400)."""
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return _error(path, http_status, None, f"HTTP {http_status}")
    try:
        status = int(str(parsed.get("statusCode", http_status)))
    except ValueError:
        status = http_status
    code = parsed.get("error") or parsed.get("code")
    return _error(
        path, status, str(code) if code else None, str(parsed.get("message", f"HTTP {http_status}"))
    )


def _file_sha256(source: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with source.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size
