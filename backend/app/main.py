"""The FastAPI app: `uvicorn app.main:app` (or `make serve`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from app.api.errors import install_error_handlers
from app.api.framing import AmbiguousLengthRefused
from app.api.headers import CommonHeaders
from app.api.routes import documents, health, metrics, pages, uploads
from app.api.uploads import UploadSlots
from app.core.config import Settings, get_settings
from app.core.logging import configure_logging
from app.services.composition import open_queued_core


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app; services (database, storage, Redis) open at start-up and close at shutdown."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        config = settings or get_settings()
        configure_logging(config.log_level)
        core = await open_queued_core(config, wait_for_redis=False)  # serves while Redis is away
        app.state.settings, app.state.core, app.state.documents = config, core, core.documents
        app.state.upload_slots = UploadSlots(config.max_concurrent_uploads)
        try:
            yield
        finally:
            await core.close()

    app = FastAPI(
        title="chunk-ocr",
        summary="Chunked, crash-safe OCR of large PDFs for Supabase backends",
        version="0.1.0",
        lifespan=lifespan,
        # No redirect to the path with or without its trailing slash: Starlette builds that URL
        # from the request's Host header, so a forged Host came back as the Location. 404 instead.
        redirect_slashes=False,
    )
    install_error_handlers(app)
    app.add_middleware(AmbiguousLengthRefused)
    app.add_middleware(CommonHeaders)  # the last added runs first: the refusal above gets them too
    app.include_router(uploads.router)
    app.include_router(documents.router)
    app.include_router(health.router)
    app.include_router(metrics.router)
    app.include_router(pages.router)
    return app


def app() -> FastAPI:
    """Factory for `uvicorn --factory app.main:app`."""
    return create_app()
