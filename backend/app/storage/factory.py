"""The blob store the settings choose."""

from __future__ import annotations

import importlib

from app.core.config import Settings, StorageBackend
from app.core.errors import ConfigurationError
from app.storage.base import BlobStore
from app.storage.local import LocalBlobStore


async def build_blob_store(settings: Settings) -> BlobStore:
    if settings.storage_backend is StorageBackend.SUPABASE:
        try:
            module = importlib.import_module("app.storage.supabase")
        except ImportError:
            raise ConfigurationError("STORAGE_BACKEND=supabase is not part of this build") from None
        assert settings.supabase_url is not None
        assert settings.supabase_service_role_key is not None
        store: BlobStore = await module.SupabaseBlobStore.connect(
            settings.supabase_url,
            settings.supabase_service_role_key.get_secret_value(),
            settings.storage_bucket,
        )
        return store
    settings.local_storage_dir.mkdir(parents=True, exist_ok=True)
    return LocalBlobStore(settings.local_storage_dir / settings.storage_bucket)
