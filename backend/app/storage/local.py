"""Blob store on a local directory (the default for laptops and tests)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from stat import S_ISREG
from typing import BinaryIO

from app.core.digests import file_sha256
from app.storage.base import StoredObject
from app.storage.checksums import mismatch, sha256_hex
from app.storage.errors import ObjectNotFoundError, StorageError, StoragePermanentError

# The files verified_local_file found to hash as expected, at most this many remembered.
_VERIFIED_KEPT = 1024


class LocalBlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        # file -> (what its stat said when it hashed, the checksum it had): a file with another
        # stat since (rewritten: objects are replaced by rename, a new inode; or written in
        # place, a new ctime, which no one can set back) is hashed again.
        self._verified: dict[Path, tuple[tuple[int, ...], str]] = {}

    def _resolve(self, path: str) -> Path:
        relative = PurePosixPath(path)
        if not path or relative.is_absolute() or ".." in relative.parts:
            raise StoragePermanentError(f"invalid object path {path!r}", path=path)
        return self.root.joinpath(*relative.parts)

    async def put(self, path: str, data: bytes, content_type: str) -> StoredObject:
        target = self._resolve(path)
        await asyncio.to_thread(_write_atomically, target, data)
        return StoredObject(path=path, sha256=sha256_hex(data), size=len(data))

    async def put_file(self, path: str, source: Path, content_type: str) -> StoredObject:
        target = self._resolve(path)
        size, checksum = await asyncio.to_thread(_copy_atomically, source, target)
        return StoredObject(path=path, sha256=checksum, size=size)

    async def get(self, path: str) -> bytes:
        target = self._resolve(path)
        try:
            return await asyncio.to_thread(target.read_bytes)
        except FileNotFoundError:
            raise ObjectNotFoundError(f"no object at {path}", path=path) from None
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc.strerror}", path=path) from exc

    async def get_file(self, path: str, dest: Path) -> StoredObject:
        source = self._resolve(path)
        if not source.is_file():
            raise ObjectNotFoundError(f"no object at {path}", path=path)
        size, checksum = await asyncio.to_thread(_copy_atomically, source, dest)  # StorageError
        return StoredObject(path=path, sha256=checksum, size=size)

    async def verified_local_file(self, path: str, expected_sha256: str) -> Path:
        """The object's file, hashed once for as long as its stat stays what it was then: a
        download is served from it, not from a copy per request (N slow downloads held N copies
        of the file in the temporary directory, and each cost a copy and a hash)."""
        source = self._resolve(path)
        stamp = await asyncio.to_thread(_stamp, source, path)
        if self._verified.get(source) != (stamp, expected_sha256):
            checksum = await asyncio.to_thread(_file_sha256, source, path)
            if checksum != expected_sha256:
                raise mismatch(path, expected_sha256, checksum)
            if await asyncio.to_thread(_stamp, source, path) == stamp:  # not changed while hashed
                self._verified.pop(source, None)
                self._verified[source] = (stamp, expected_sha256)
                while len(self._verified) > _VERIFIED_KEPT:
                    self._verified.pop(next(iter(self._verified)))
        return source

    async def exists(self, path: str) -> bool:
        return self._resolve(path).is_file()

    async def delete(self, path: str) -> None:
        self._resolve(path).unlink(missing_ok=True)

    def location(self, path: str) -> str:
        return str(self._resolve(path))

    async def signed_url(self, path: str, expires_in: int) -> str | None:
        return None

    async def close(self) -> None:
        return None


_COPY_BLOCK = 1 << 20


def _stamp(source: Path, path: str) -> tuple[int, ...]:
    """What a file's stat says of its identity and last change; ObjectNotFoundError for none."""
    try:
        stat = source.stat()
    except (FileNotFoundError, NotADirectoryError):
        raise ObjectNotFoundError(f"no object at {path}", path=path) from None
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}", path=path) from exc
    if not S_ISREG(stat.st_mode):
        raise ObjectNotFoundError(f"no object at {path}", path=path)
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def _file_sha256(source: Path, path: str) -> str:
    """file_sha256, its errors the store's."""
    try:
        return file_sha256(source)
    except FileNotFoundError:
        raise ObjectNotFoundError(f"no object at {path}", path=path) from None
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {exc.strerror}", path=path) from exc


def _copy_atomically(source: Path, target: Path) -> tuple[int, str]:
    """Copy source to the target block by block, hashing what is written."""
    digest, size = hashlib.sha256(), 0

    def copy(out: BinaryIO) -> None:
        nonlocal size
        with source.open("rb") as src:
            while block := src.read(_COPY_BLOCK):
                digest.update(block)
                size += len(block)
                out.write(block)

    _replace_atomically(target, copy)
    return size, digest.hexdigest()


def _write_atomically(target: Path, data: bytes) -> None:
    _replace_atomically(target, lambda out: out.write(data))


def _replace_atomically(target: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write to a temporary file beside the target and rename: readers never see half an object."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        try:
            with os.fdopen(fd, "wb") as handle:
                write(handle)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise StorageError(f"cannot write {target.name}: {exc.strerror}") from exc
