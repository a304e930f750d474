"""The blob store the settings choose."""

from __future__ import annotations

from app.core.config import Settings, StorageBackend
from app.core.errors import ConfigurationError
from app.storage.base import BlobStore
from app.storage.local import LocalBlobStore


async def build_blob_store(settings: Settings) -> BlobStore:
    if settings.blob_backend is StorageBackend.SUPABASE:
        from app.storage.supabase import SupabaseBlobStore

        return await SupabaseBlobStore.connect(*settings.supabase_credentials(), settings.storage_bucket)
    root = settings.local_storage_dir / settings.storage_bucket
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission, a read-only file system
        raise ConfigurationError(
            f"LOCAL_STORAGE_DIR {settings.local_storage_dir} cannot hold the bucket: {exc.strerror}"
        ) from None
    return LocalBlobStore(root)
