"""SupabaseBlobStore through supabase-py against Storage's HTTP API (respx)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import respx

from app.storage.base import get_verified, get_verified_file
from app.storage.errors import ChecksumMismatchError, ObjectNotFoundError, StorageError, StoragePermanentError
from app.storage.local import LocalBlobStore
from app.storage.supabase import SupabaseBlobStore
from tests.postgrest_fake import SERVICE_ROLE_KEY, SUPABASE_URL
from tests.storage_fake import STORAGE_URL, FakeStorage


@pytest.fixture
async def storage() -> AsyncIterator[FakeStorage]:
    fake = FakeStorage()
    with respx.mock(base_url=STORAGE_URL, assert_all_called=False) as router:
        router.route().mock(side_effect=fake.handle)
        yield fake


@pytest.fixture
async def store(storage: FakeStorage) -> AsyncIterator[SupabaseBlobStore]:
    store = await SupabaseBlobStore.connect(SUPABASE_URL, SERVICE_ROLE_KEY, "ocr-chunks")
    yield store
    await store.close()


async def test_upload_sends_type_upsert_and_checksum(store: SupabaseBlobStore, storage: FakeStorage) -> None:
    data = b'{"pages": []}'
    stored = await store.put("m/d/chunks/00000-abc.json", data, "application/json")
    assert stored.sha256 == hashlib.sha256(data).hexdigest()
    request = storage.requests[-1]
    assert request.method == "POST"
    assert str(request.url) == f"{STORAGE_URL}/object/ocr-chunks/m/d/chunks/00000-abc.json"
    assert request.headers["x-upsert"] == "true"
    assert request.headers["authorization"] == f"Bearer {SERVICE_ROLE_KEY}"
    assert request.headers["content-type"].startswith("multipart/form-data; boundary=")
    upload = storage.objects["m/d/chunks/00000-abc.json"]
    assert (upload.data, upload.content_type) == (data, "application/json")
    assert upload.metadata == {"sha256": stored.sha256}


async def test_download_is_verified(store: SupabaseBlobStore, storage: FakeStorage) -> None:
    stored = await store.put("a/input/00000.pdf", b"%PDF-1.7 bytes", "application/pdf")
    assert await get_verified(store, stored.path, stored.sha256) == b"%PDF-1.7 bytes"
    assert str(storage.requests[-1].url) == f"{STORAGE_URL}/object/ocr-chunks/a/input/00000.pdf"
    storage.objects[stored.path].data = b"%PDF-1.7 flipped"
    with pytest.raises(ChecksumMismatchError):
        await get_verified(store, stored.path, stored.sha256)


async def test_missing_object_and_exists(store: SupabaseBlobStore) -> None:
    with pytest.raises(ObjectNotFoundError):
        await store.get("no/such.json")
    assert await store.exists("no/such.json") is False
    await store.put("yes.json", b"{}", "application/json")
    assert await store.exists("yes.json") is True
    await store.delete("yes.json")
    assert await store.exists("yes.json") is False


async def test_signed_url_is_storages_for_the_object(store: SupabaseBlobStore, storage: FakeStorage) -> None:
    await store.put("m/d/result.pdf", b"%PDF-1.7 searchable", "application/pdf")
    url = await store.signed_url("m/d/result.pdf", 300)
    assert url == f"{STORAGE_URL}/object/sign/ocr-chunks/m/d/result.pdf?token=fake-300"
    request = storage.requests[-1]
    assert (request.method, str(request.url)) == (
        "POST",
        f"{STORAGE_URL}/object/sign/ocr-chunks/m/d/result.pdf",
    )
    assert request.headers["authorization"] == f"Bearer {SERVICE_ROLE_KEY}"
    with pytest.raises(ObjectNotFoundError):
        await store.signed_url("m/d/missing.pdf", 300)


async def test_a_local_store_has_no_signed_urls(tmp_path: Path) -> None:
    local = LocalBlobStore(tmp_path)
    await local.put("m/d/result.pdf", b"%PDF-1.7", "application/pdf")
    assert await local.signed_url("m/d/result.pdf", 300) is None


ERRORS = pytest.mark.parametrize(
    ("response", "error", "retryable"),
    [
        (httpx.Response(503, text="upstream connect error"), StorageError, True),
        (
            httpx.Response(500, json={"statusCode": "500", "error": "internal", "message": "boom"}),
            StorageError,
            True,
        ),
        (
            httpx.Response(
                400,
                json={"statusCode": "409", "error": "Duplicate", "message": "The resource already exists"},
            ),
            StoragePermanentError,
            False,
        ),
        (
            httpx.Response(
                400, json={"statusCode": "413", "error": "Payload too large", "message": "too big"}
            ),
            StoragePermanentError,
            False,
        ),
        (
            httpx.Response(
                403, json={"statusCode": "403", "error": "Unauthorized", "message": "invalid signature"}
            ),
            StoragePermanentError,
            False,
        ),
    ],
    ids=["503-proxy", "500", "duplicate", "too-large", "unauthorized"],
)


@ERRORS
async def test_errors_are_classified(
    store: SupabaseBlobStore, storage: FakeStorage, response: httpx.Response, error: type, retryable: bool
) -> None:
    storage.fail_next.append(response)
    with pytest.raises(error) as raised:
        await store.put("x.json", b"{}", "application/json")
    assert raised.value.retryable is retryable


@ERRORS
async def test_streamed_download_errors_are_classified_the_same(
    store: SupabaseBlobStore,
    storage: FakeStorage,
    response: httpx.Response,
    error: type,
    retryable: bool,
    tmp_path: Path,
) -> None:
    await store.put("x.pdf", b"%PDF-1.7", "application/pdf")
    storage.fail_next.append(response)
    with pytest.raises(error) as raised:
        await store.get_file("x.pdf", tmp_path / "x.pdf")
    assert raised.value.retryable is retryable


async def test_streamed_download_writes_the_object_and_its_checksum(
    store: SupabaseBlobStore, storage: FakeStorage, tmp_path: Path
) -> None:
    data = b"%PDF-1.7 " + bytes(range(256)) * 8192  # 2 MiB: more than one block
    stored = await store.put("m/d/source.pdf", data, "application/pdf")
    dest = tmp_path / "source.pdf"
    copied = await get_verified_file(store, stored.path, stored.sha256, dest)
    assert (copied.sha256, copied.size) == (stored.sha256, len(data))
    assert await asyncio.to_thread(dest.read_bytes) == data
    request = storage.requests[-1]
    assert (request.method, str(request.url)) == ("GET", f"{STORAGE_URL}/object/ocr-chunks/m/d/source.pdf")
    assert request.headers["authorization"] == f"Bearer {SERVICE_ROLE_KEY}"
    with pytest.raises(ObjectNotFoundError):
        await store.get_file("no/such.pdf", dest)


async def test_unreachable_storage_is_retryable() -> None:
    with respx.mock(base_url=STORAGE_URL) as router:
        router.route().mock(side_effect=httpx.ConnectTimeout("timed out"))
        store = await SupabaseBlobStore.connect(SUPABASE_URL, SERVICE_ROLE_KEY, "ocr-chunks")
        try:
            with pytest.raises(StorageError) as raised:
                await store.get("a.json")
            assert raised.value.retryable
        finally:
            await store.close()


async def test_put_file_sends_the_file_with_its_checksum(
    store: SupabaseBlobStore, storage: FakeStorage, tmp_path: Path
) -> None:
    source = tmp_path / "source.pdf"
    data = b"%PDF-1.7 " + bytes(range(256)) * 8192
    await asyncio.to_thread(source.write_bytes, data)
    stored = await store.put_file("m/d/source.pdf", source, "application/pdf")
    assert (stored.sha256, stored.size) == (hashlib.sha256(data).hexdigest(), len(data))
    upload = storage.objects["m/d/source.pdf"]
    assert (upload.data, upload.content_type, upload.metadata) == (
        data,
        "application/pdf",
        {"sha256": stored.sha256},
    )
    assert store.location("m/d/source.pdf") == "Supabase Storage bucket ocr-chunks, object m/d/source.pdf"
