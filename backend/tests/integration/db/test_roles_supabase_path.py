"""Both repositories read roles from the same SQL: asyncpg directly, supabase-py through PostgREST.

The PostgREST stand-in (tests/postgrest_fake.py) runs the named function on the
real migrated database, so this checks the RPC's name and argument names
against the migration, not against a canned answer.
"""

from __future__ import annotations

import asyncpg
import pytest

from app.core.errors import DocumentNotFoundError, ForbiddenError, MatterNotFoundError
from app.db.postgres import PostgresChunkRepository
from app.models.roles import MatterRole
from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import make_document, make_matter, make_user


@pytest.mark.parametrize("backend", ["postgres", "supabase"])
async def test_roles_and_decisions(
    pool: asyncpg.Pool, service: OCRChunkService, supabase_service: OCRChunkService, backend: str
) -> None:
    chosen = service if backend == "postgres" else supabase_service
    if backend == "postgres":
        assert isinstance(chosen.repository, PostgresChunkRepository)
    matter, other = await make_matter(pool, "A"), await make_matter(pool, "B")
    users = {role: await make_user(pool, matter, role=role) for role in ("owner", "member", "viewer")}
    default = await make_user(pool, matter)  # no role given: the column's default
    outsider = await make_user(pool, other, role="owner")
    document = await make_document(pool, matter, 3)

    for role, user in users.items():
        assert await chosen.repository.member_role(matter, user) is MatterRole(role)
    assert await chosen.repository.member_role(matter, default) is MatterRole.MEMBER
    assert await chosen.repository.member_role(matter, outsider) is None

    for user in (users["owner"], users["member"], default):
        assert await chosen.check_matter_write_access(matter, user) == matter
        assert (await chosen.get_document_for_writer(document, user)).id == document
    with pytest.raises(ForbiddenError):
        await chosen.check_matter_write_access(matter, users["viewer"])
    with pytest.raises(ForbiddenError):
        await chosen.get_document_for_writer(document, users["viewer"])
    assert (await chosen.get_document_for_user(document, users["viewer"])).id == document  # reading is fine
    with pytest.raises(MatterNotFoundError):
        await chosen.check_matter_write_access(matter, outsider)
    with pytest.raises(DocumentNotFoundError):
        await chosen.get_document_for_writer(document, outsider)
