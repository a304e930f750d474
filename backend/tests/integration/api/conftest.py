"""The FastAPI app on the real database, Redis and a local blob store, called through httpx."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from uuid import UUID

import httpx
import jwt
import pytest
from fastapi import FastAPI

from app.core.config import Settings
from app.main import create_app

JWT_SECRET = "test-jwt-secret-with-at-least-32-characters"


def token(
    sub: UUID | str, *, secret: str = JWT_SECRET, audience: str = "authenticated", expires_in: int = 3600
) -> str:
    now = int(time.time())
    claims = {"sub": str(sub), "aud": audience, "role": "authenticated", "iat": now, "exp": now + expires_in}
    return jwt.encode(claims, secret, algorithm="HS256")


def bearer(sub: UUID | str, **options: object) -> dict[str, str]:
    return {"Authorization": f"Bearer {token(sub, **options)}"}  # type: ignore[arg-type]


@pytest.fixture
def api_settings(pipeline_settings: Settings) -> Settings:
    from pydantic import SecretStr

    return pipeline_settings.model_copy(
        update={"supabase_jwt_secret": SecretStr(JWT_SECRET), "max_upload_bytes": 2 * 1024 * 1024}
    )


@pytest.fixture
async def app(api_settings: Settings, pool: object, arq_redis: object) -> AsyncIterator[FastAPI]:
    """The app on emptied tables and an emptied Redis: what workers advertised for an earlier test
    (engines, languages) must not decide what this one is offered."""
    application = create_app(api_settings)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api.test") as client:
        yield client


AuthHeaders = Callable[[UUID], dict[str, str]]
