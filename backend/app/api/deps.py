"""Dependencies as Annotated aliases: the routes declare what they need, these provide it."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from fastapi import Depends, Header, Path, Request

from app.api.auth import user_from_token
from app.api.errors import AuthError
from app.core.config import Settings
from app.models.document import Document
from app.services.ocr_chunk_service import OCRChunkService
from app.services.queue import JobQueue
from app.storage.base import BlobStore


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _service(request: Request) -> OCRChunkService:
    service: OCRChunkService = request.app.state.service
    return service


def _store(request: Request) -> BlobStore:
    store: BlobStore = request.app.state.store
    return store


def _queue(request: Request) -> JobQueue:
    queue: JobQueue = request.app.state.queue
    return queue


SettingsDep = Annotated[Settings, Depends(_settings)]
ServiceDep = Annotated[OCRChunkService, Depends(_service)]
StoreDep = Annotated[BlobStore, Depends(_store)]
QueueDep = Annotated[JobQueue, Depends(_queue)]


def _current_user(settings: SettingsDep, authorization: Annotated[str | None, Header()] = None) -> UUID:
    if settings.auth_disabled:
        assert settings.auth_dev_user_id is not None  # Settings refuses one without the other
        return settings.auth_dev_user_id
    if not authorization:
        raise AuthError("missing bearer token")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("the Authorization header must be `Bearer <token>`")
    return user_from_token(token.strip(), settings)


CurrentUser = Annotated[UUID, Depends(_current_user)]


async def _accessible_document(
    document_id: Annotated[str, Path(description="document id")], service: ServiceDep, user: CurrentUser
) -> Document:
    """The path's document, if the caller belongs to its matter (404 otherwise: ids do not leak)."""
    return await service.get_document_for_user(document_id, user)


AccessibleDocument = Annotated[Document, Depends(_accessible_document)]


async def _actable_document(
    document_id: Annotated[str, Path(description="document id")], service: ServiceDep, user: CurrentUser
) -> Document:
    """The path's document, if the caller may act on it (start, retry): an owner or member of
    its matter. A viewer gets 403 ``forbidden``; a non-member 404, as for reading."""
    return await service.get_document_for_writer(document_id, user)


ActableDocument = Annotated[Document, Depends(_actable_document)]


async def require_writer(matter_id: str | UUID, user: UUID, service: OCRChunkService) -> UUID:
    """The matter id if ``user`` may act in it (upload into it): an owner or member.

    For routes that name a matter rather than a document (the upload route):
    MatterNotFoundError (404 ``matter_not_found``) for a non-member, ForbiddenError
    (403 ``forbidden``) for a viewer.
    """
    return await service.check_matter_write_access(matter_id, user)
