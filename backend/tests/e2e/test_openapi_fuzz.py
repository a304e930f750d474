"""Schemathesis over the OpenAPI schema against the running app: no request gets a 5xx, and\nevery 4xx body is the one error shape."""

from __future__ import annotations

import asyncio
import json
from uuid import UUID

import asyncpg
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from tests.integration.api.conftest import token


@pytest.fixture
def member_token(database_url: str) -> str:
    """A user who belongs to a matter (rows written directly; the fuzzer only needs a valid token)."""

    async def create() -> UUID:
        conn = await asyncpg.connect(database_url)
        try:
            matter = await conn.fetchval("insert into matters (name) values ('fuzz') returning id")
            user: UUID = await conn.fetchval(
                "insert into auth.users (email) values (gen_random_uuid()::text) returning id"
            )
            await conn.execute(
                "insert into matter_members (matter_id, user_id) values ($1, $2)", matter, user
            )
            return user
        finally:
            await conn.close()

    return token(asyncio.run(create()))


def _is_error_body(content: bytes) -> bool:
    """One error contract for every 4xx: {"error": {"code": "...", "message": "..."}}, no more."""
    try:
        body = json.loads(content)
    except ValueError:
        return False
    if not isinstance(body, dict) or set(body) != {"error"} or not isinstance(body["error"], dict):
        return False
    error = body["error"]
    return set(error) == {"code", "message"} and all(isinstance(v, str) and v for v in error.values())


@pytest.mark.timeout(600)
def test_no_server_errors(server: str, member_token: str) -> None:
    schema = schemathesis.openapi.from_url(f"{server}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 6
    failures: list[str] = []
    calls = 0
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def check(case: schemathesis.Case) -> None:
            nonlocal calls
            calls += 1
            response = case.call(headers={"Authorization": f"Bearer {member_token}"}, timeout=30)
            server_error = response.status_code >= 500
            off_contract = 400 <= response.status_code < 500 and not _is_error_body(response.content)
            if server_error or off_contract:
                failures.append(
                    f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:200]}"
                )

        check()
    assert calls >= 10 * len(operations)
    assert failures == []
