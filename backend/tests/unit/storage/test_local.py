"""The local blob store: exact bytes, SHA-256, verification, atomic writes, safe paths."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from app.storage.base import get_verified, get_verified_file
from app.storage.errors import ChecksumMismatchError, ObjectNotFoundError, StoragePermanentError
from app.storage.local import LocalBlobStore


async def test_put_get_verify(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    data = b"%PDF-1.7 chunk bytes"
    stored = await store.put("m/d/input/00000.pdf", data, "application/pdf")
    assert stored.sha256 == hashlib.sha256(data).hexdigest()
    assert stored.size == len(data)
    assert (tmp_path / "m/d/input/00000.pdf").read_bytes() == data
    assert await get_verified(store, stored.path, stored.sha256) == data
    assert await store.exists(stored.path)
    assert [p.name for p in (tmp_path / "m/d/input").iterdir()] == ["00000.pdf"]  # no temp files left


async def test_tampered_object_is_refused(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    stored = await store.put("a/b.json", b'{"text": "right"}', "application/json")
    (tmp_path / "a/b.json").write_bytes(b'{"text": "wrong"}')
    with pytest.raises(ChecksumMismatchError) as raised:
        await get_verified(store, stored.path, stored.sha256)
    assert raised.value.retryable  # the cure is to produce it again
    assert raised.value.code == "checksum_mismatch"


async def test_missing_object(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    with pytest.raises(ObjectNotFoundError):
        await store.get("nothing/here.json")
    assert not await store.exists("nothing/here.json")
    await store.delete("nothing/here.json")  # deleting what is not there is fine


@pytest.mark.parametrize("path", ["", "/etc/passwd", "../outside", "a/../../b"])
async def test_paths_cannot_escape_the_root(tmp_path: Path, path: str) -> None:
    store = LocalBlobStore(tmp_path / "root")
    with pytest.raises(StoragePermanentError):
        await store.put(path, b"x", "text/plain")
    assert not (tmp_path / "outside").exists()


async def test_overwrite_replaces_whole_object(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path)
    await store.put("x.txt", b"a" * 1000, "text/plain")
    second = await store.put("x.txt", b"b", "text/plain")
    assert await get_verified(store, "x.txt", second.sha256) == b"b"


@pytest.fixture
def three_mib_file(tmp_path: Path) -> tuple[Path, bytes]:
    source = tmp_path / "source.pdf"
    data = bytes(range(256)) * (3 * 4096) + b"tail"  # several copy blocks
    source.write_bytes(data)
    return source, data


async def test_put_file_copies_and_hashes_in_blocks(
    tmp_path: Path, three_mib_file: tuple[Path, bytes]
) -> None:
    store = LocalBlobStore(tmp_path / "store")
    source, data = three_mib_file
    stored = await store.put_file("m/d/source.pdf", source, "application/pdf")
    assert (stored.sha256, stored.size) == (hashlib.sha256(data).hexdigest(), len(data))
    assert await get_verified(store, stored.path, stored.sha256) == data
    assert [p.name for p in (tmp_path / "store/m/d").iterdir()] == ["source.pdf"]  # no temp files left
    assert store.location("m/d/source.pdf") == str(tmp_path / "store/m/d/source.pdf")


async def test_get_file_copies_and_verifies_without_reading_it_whole(tmp_path: Path) -> None:
    store = LocalBlobStore(tmp_path / "bucket")
    data = bytes(range(256)) * 10_000  # 2.5 MiB: more than one copy block
    stored = await store.put("m/d/source.pdf", data, "application/pdf")
    dest = tmp_path / "out" / "source.pdf"
    copied = await get_verified_file(store, stored.path, stored.sha256, dest)
    assert (copied.sha256, copied.size) == (stored.sha256, len(data))
    assert dest.read_bytes() == data
    (tmp_path / "bucket/m/d/source.pdf").write_bytes(data[:-1] + b"x")
    with pytest.raises(ChecksumMismatchError):
        await get_verified_file(store, stored.path, stored.sha256, dest)
    assert not dest.exists()  # a file that does not verify is not left for anyone to use
    with pytest.raises(ObjectNotFoundError):
        await store.get_file("nothing/here.pdf", dest)
