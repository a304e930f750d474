"""The blob store the settings choose."""

from __future__ import annotations

from app.core.config import Settings, StorageBackend
from app.storage.base import BlobStore
from app.storage.local import LocalBlobStore


async def build_blob_store(settings: Settings) -> BlobStore:
    if settings.blob_backend is StorageBackend.SUPABASE:
        from app.storage.supabase import SupabaseBlobStore

        assert settings.supabase_url is not None  # Settings refuses supabase storage without them
        assert settings.supabase_service_role_key is not None
        return await SupabaseBlobStore.connect(
            settings.supabase_url,
            settings.supabase_service_role_key.get_secret_value(),
            settings.storage_bucket,
        )
    settings.local_storage_dir.mkdir(parents=True, exist_ok=True)
    return LocalBlobStore(settings.local_storage_dir / settings.storage_bucket)
