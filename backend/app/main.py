"""The FastAPI app: `uvicorn app.main:app` (or `make serve`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from arq import create_pool
from fastapi import FastAPI

from app.api.errors import install_error_handlers
from app.api.routes import documents, health, pages, uploads
from app.api.uploads import UploadSlots
from app.core.config import Settings, get_settings
from app.core.logging import configure_logging
from app.services.ocr_chunk_service import OCRChunkService, build_repository
from app.services.queue import ArqJobQueue, redis_settings
from app.storage.factory import build_blob_store


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app; services (database, storage, Redis) open at start-up and close at shutdown."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        config = settings or get_settings()
        configure_logging(config.log_level)
        service = OCRChunkService(await build_repository(config), config)
        store = await build_blob_store(config)
        redis = await create_pool(redis_settings(config.redis_url))
        app.state.settings, app.state.service, app.state.store = config, service, store
        app.state.redis, app.state.queue = redis, ArqJobQueue(redis)
        app.state.upload_slots = UploadSlots(config.max_concurrent_uploads)
        try:
            yield
        finally:
            await redis.aclose()
            await store.close()
            await service.close()

    app = FastAPI(
        title="chunk-ocr",
        summary="Chunked, crash-safe OCR of large PDFs for Supabase backends",
        version="0.1.0",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    app.include_router(uploads.router)
    app.include_router(documents.router)
    app.include_router(health.router)
    app.include_router(pages.router)
    return app


def app() -> FastAPI:
    """Factory for `uvicorn --factory app.main:app`."""
    return create_app()
