"""`chunk-ocr dev-user`'s token: signed as the API checks tokens, with the issuer it checks."""

from __future__ import annotations

import uuid

import asyncpg
from pydantic import SecretStr

from app.api.auth import user_from_token
from app.core.config import Settings
from app.local.dev import create_dev_user


async def test_a_dev_user_token_passes_the_api_check_with_an_issuer_set(
    settings: Settings, pool: asyncpg.Pool
) -> None:
    matter = await pool.fetchval("insert into public.matters (name) values ('dev-user test') returning id")
    issuer = "http://127.0.0.1:54321/auth/v1"
    signing = settings.model_copy(
        update={"supabase_jwt_secret": SecretStr("d" * 40), "supabase_jwt_issuer": issuer}
    )
    email = f"dev-{uuid.uuid4().hex[:8]}@example.test"
    user = await create_dev_user(
        signing, email=email, matter_id=matter, matter_name="dev-user test", role="viewer", hours=1
    )
    assert user_from_token(user.token, signing) == user.user_id
    role = await pool.fetchval(
        "select role from public.matter_members where matter_id = $1 and user_id = $2", matter, user.user_id
    )
    assert role == "viewer"
    again = await create_dev_user(
        signing, email=email, matter_id=matter, matter_name="dev-user test", role="member", hours=1
    )
    assert again.user_id == user.user_id  # found by email, not created twice
