"""get_ocr_chunk_service(): one service per process (per event loop), backend chosen by settings."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from app.core.config import RepositoryBackend, Settings
from app.core.errors import ConfigurationError
from app.db.postgres import PostgresChunkRepository
from app.db.supabase import SupabaseChunkRepository
from app.services.ocr_chunk_service import close_ocr_chunk_service, get_ocr_chunk_service


async def test_one_service_per_process(settings: Settings) -> None:
    first = await get_ocr_chunk_service(settings)
    try:
        assert await get_ocr_chunk_service() is first
        assert isinstance(first.repository, PostgresChunkRepository)
        await first.repository.ping()
    finally:
        await close_ocr_chunk_service()
    second = await get_ocr_chunk_service(settings)
    assert second is not first
    await close_ocr_chunk_service()


async def test_supabase_keys_select_the_supabase_repository(settings: Settings) -> None:
    supabase = settings.model_copy(
        update={
            "supabase_url": "https://project-ref.supabase.co",
            "supabase_service_role_key": SecretStr("k.e.y"),
        }
    )
    assert supabase.repository_backend is RepositoryBackend.SUPABASE
    service = await get_ocr_chunk_service(supabase)
    try:
        assert isinstance(service.repository, SupabaseChunkRepository)
    finally:
        await close_ocr_chunk_service()


async def test_no_database_is_a_configuration_error(settings: Settings) -> None:
    with pytest.raises(ConfigurationError, match="DATABASE_URL"):
        await get_ocr_chunk_service(settings.model_copy(update={"database_url": None}))
