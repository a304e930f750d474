"""The blob store port: put bytes, get bytes, always with SHA-256.

Implementations: ``LocalBlobStore`` (a directory) and ``SupabaseBlobStore``
(Supabase Storage). Every method raises ``app.storage.errors`` exceptions only.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from app.storage.checksums import mismatch, verify


@dataclass(frozen=True, slots=True)
class StoredObject:
    path: str
    sha256: str
    size: int


class BlobStore(Protocol):
    async def put(self, path: str, data: bytes, content_type: str) -> StoredObject:
        """Store data at path (overwriting), returning the SHA-256 of the exact bytes stored."""
        ...

    async def put_file(self, path: str, source: Path, content_type: str) -> StoredObject:
        """Store a local file (overwriting) without holding it whole in memory."""
        ...

    async def get(self, path: str) -> bytes:
        """The bytes at path; ObjectNotFoundError if there are none."""
        ...

    async def get_file(self, path: str, dest: Path) -> StoredObject:
        """Write the object at path to the local file dest, block by block (never whole in
        memory); its SHA-256 and size. ObjectNotFoundError if there is none."""
        ...

    async def exists(self, path: str) -> bool: ...

    async def delete(self, path: str) -> None: ...

    def location(self, path: str) -> str:
        """Where a person finds the object: a file path, or the bucket and object name."""
        ...

    async def signed_url(self, path: str, expires_in: int) -> str | None:
        """A URL that serves the object to whoever holds it for expires_in seconds; None for a
        store with no such URLs (a local directory: the caller serves the file itself)."""
        ...

    async def verified_local_file(self, path: str, expected_sha256: str) -> Path | None:
        """The object's own file, where the store keeps it as one on this machine (a local
        directory), once it hashes to expected_sha256 (ChecksumMismatchError otherwise,
        ObjectNotFoundError if there is none): served from where it is, with no copy. None for
        a store that keeps no such file (the caller downloads the object)."""
        ...

    async def close(self) -> None: ...


async def get_verified(store: BlobStore, path: str, expected_sha256: str) -> bytes:
    """Download and verify: ChecksumMismatchError unless the bytes hash to expected_sha256."""
    return verify(await store.get(path), expected_sha256, path=path)


async def get_verified_file(store: BlobStore, path: str, expected_sha256: str, dest: Path) -> StoredObject:
    """get_file and verify: ChecksumMismatchError (and dest removed) unless the object hashes to
    expected_sha256."""
    stored = await store.get_file(path, dest)
    if stored.sha256 != expected_sha256:
        await asyncio.to_thread(dest.unlink, missing_ok=True)
        raise mismatch(path, expected_sha256, stored.sha256)
    return stored
