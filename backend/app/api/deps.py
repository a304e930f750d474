"""Dependencies as Annotated aliases: the routes declare what they need, these provide it."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from fastapi import Depends, Header, Path, Request

from app.api.auth import user_from_token
from app.api.errors import AuthError
from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.models.document import Document
from app.services.composition import QueuedCore
from app.services.documents import Documents


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _core(request: Request) -> QueuedCore:
    core: QueuedCore = request.app.state.core
    return core


def _documents(request: Request) -> Documents:
    documents: Documents = request.app.state.documents
    return documents


SettingsDep = Annotated[Settings, Depends(_settings)]
CoreDep = Annotated[QueuedCore, Depends(_core)]
DocumentsDep = Annotated[Documents, Depends(_documents)]


def _current_user(settings: SettingsDep, authorization: Annotated[str | None, Header()] = None) -> UUID:
    if settings.auth_disabled:
        if settings.auth_dev_user_id is None:  # Settings refuses this; a hand-built one might not
            raise ConfigurationError("AUTH_DISABLED needs AUTH_DEV_USER_ID")
        return settings.auth_dev_user_id
    if not authorization:
        raise AuthError("missing bearer token")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("the Authorization header must be `Bearer <token>`")
    return user_from_token(token.strip(), settings)


CurrentUser = Annotated[UUID, Depends(_current_user)]


async def _accessible_document(
    document_id: Annotated[str, Path(description="document id")], documents: DocumentsDep, user: CurrentUser
) -> Document:
    """The path's document, if the caller belongs to its matter (404 otherwise: ids do not leak)."""
    return await documents.readable(document_id, user)


AccessibleDocument = Annotated[Document, Depends(_accessible_document)]


async def _actable_document(
    document_id: Annotated[str, Path(description="document id")], documents: DocumentsDep, user: CurrentUser
) -> Document:
    """The path's document, if the caller may act on it (start, retry): an owner or member of
    its matter. A viewer gets 403 ``forbidden``; a non-member 404, as for reading."""
    return await documents.actable(document_id, user)


ActableDocument = Annotated[Document, Depends(_actable_document)]


async def require_writer(matter_id: str | UUID, user: UUID, documents: Documents) -> UUID:
    """The matter id if ``user`` may act in it (upload into it): an owner or member.

    For routes that name a matter rather than a document (the upload route):
    MatterNotFoundError (404 ``matter_not_found``) for a non-member, ForbiddenError
    (403 ``forbidden``) for a viewer.
    """
    return await documents.writable_matter(matter_id, user)
