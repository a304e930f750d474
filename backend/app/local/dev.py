"""Local development of the HTTP API: a signing secret, a user in a matter, a token.

`chunk-ocr serve` and `chunk-ocr dev-user` share one HS256 secret: the
SUPABASE_JWT_SECRET when it is set, otherwise one generated once under the
data directory. Both refuse to make one up when ENVIRONMENT=production.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import jwt
from pydantic import SecretStr

from app.core.config import Environment, Settings
from app.core.errors import ConfigurationError
from app.db.admin import add_member_by_email

DEV_SECRET_FILE = "dev-jwt-secret"
ROLES = ("owner", "member", "viewer")


def refuse_in_production(settings: Settings, command: str) -> None:
    if settings.environment is Environment.PRODUCTION:
        raise ConfigurationError(f"`chunk-ocr {command}` is for local development; ENVIRONMENT=production")


def with_dev_secret(settings: Settings) -> Settings:
    """The settings with an HS256 secret: SUPABASE_JWT_SECRET, or this machine's development one."""
    if settings.supabase_jwt_secret is not None or settings.environment is Environment.PRODUCTION:
        return settings
    return settings.model_copy(update={"supabase_jwt_secret": SecretStr(_dev_secret(settings.data_dir))})


def _dev_secret(data_dir: Path) -> str:
    path = data_dir / DEV_SECRET_FILE
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    data_dir.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    try:  # O_EXCL: two commands started together agree on the first one written
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as out:
        out.write(secret)
    return secret


@dataclass(frozen=True, slots=True)
class DevUser:
    user_id: UUID
    email: str
    matter_id: UUID
    matter_name: str
    role: str
    token: str
    expires_in_seconds: int


async def create_dev_user(
    settings: Settings, *, email: str, matter_id: UUID, matter_name: str, role: str, hours: float
) -> DevUser:
    """A user (found by email, or created) who is `role` in the matter, and a token for them."""
    if settings.supabase_jwks_url:
        raise ConfigurationError(
            "SUPABASE_JWKS_URL is set: the API accepts your project's tokens; sign in with Supabase Auth"
        )
    if settings.database_url is None:
        raise ConfigurationError(
            "`chunk-ocr dev-user` writes auth.users directly and needs DATABASE_URL; "
            "on a Supabase project, create users with Supabase Auth"
        )
    if settings.supabase_jwt_secret is None:  # with_dev_secret gives one outside production
        raise ConfigurationError("SUPABASE_JWT_SECRET is not set: there is no key to sign a token with")
    user_id = await add_member_by_email(settings.database_url, email=email, matter_id=matter_id, role=role)
    lifetime = int(hours * 3600)
    now = int(time.time())
    claims = {
        "sub": str(user_id),
        "email": email,
        "aud": settings.supabase_jwt_audience,
        "role": "authenticated",
        "iat": now,
        "exp": now + lifetime,
    }
    if settings.supabase_jwt_issuer:
        claims["iss"] = settings.supabase_jwt_issuer
    token = jwt.encode(claims, settings.supabase_jwt_secret.get_secret_value(), algorithm="HS256")
    return DevUser(user_id, email, matter_id, matter_name, role, token, lifetime)
