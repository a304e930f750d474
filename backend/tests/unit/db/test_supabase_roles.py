"""The Supabase repository's role lookup, and the service's decisions on it.

Same stand-in as test_supabase_repository.py: respx answers at Supabase's URLs
with PostgREST's bodies, and the assertions are on what supabase-py sent and
what the answer became. The same SQL against a real database is covered by
tests/integration/db/test_roles_sql.py and test_roles_supabase_path.py.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
import respx

from app.core.errors import (
    DocumentNotFoundError,
    ForbiddenError,
    MatterNotFoundError,
    RepositoryError,
    RepositoryUnavailableError,
)
from app.db.supabase import SupabaseChunkRepository
from app.models.roles import MatterRole
from app.services.ocr_chunk_service import OCRChunkService
from tests.unit.db.test_supabase_repository import (  # noqa: F401 (fixtures: router, repository, service)
    DOCUMENT_ID,
    MATTER_ID,
    REST,
    assert_rpc,
    document_row,
    pgrst_error,
    repository,
    router,
    rows,
    rpc,
    rpc_result,
    service,
)

USER_ID = UUID("3e9d5c1b-8a7f-4d2e-b6c5-0a1f2e3d4c5b")
ARGUMENTS = {"p_matter_id": str(MATTER_ID), "p_user_id": str(USER_ID)}


@pytest.mark.parametrize(
    ("answer", "role"),
    [("owner", MatterRole.OWNER), ("member", MatterRole.MEMBER), ("viewer", MatterRole.VIEWER), (None, None)],
    ids=["owner", "member", "viewer", "not-a-member"],
)
async def test_member_role_asks_the_sql_function(
    router: respx.MockRouter,  # noqa: F811
    repository: SupabaseChunkRepository,  # noqa: F811
    answer: str | None,
    role: MatterRole | None,
) -> None:
    route = rpc(
        router, "ocr_user_matter_role", rpc_result(answer)
    )  # a scalar text function: "viewer" or null
    assert await repository.member_role(MATTER_ID, USER_ID) is role
    assert_rpc(route, "ocr_user_matter_role", ARGUMENTS)


@pytest.mark.parametrize("answer", ["admin", True, ["viewer"], {"role": "viewer"}], ids=str)
async def test_member_role_refuses_an_answer_that_is_not_a_role(
    router: respx.MockRouter,  # noqa: F811
    repository: SupabaseChunkRepository,  # noqa: F811
    answer: Any,
) -> None:
    rpc(router, "ocr_user_matter_role", rpc_result(answer))
    with pytest.raises(RepositoryError) as raised:  # never read as a role, nor as "not a member"
        await repository.member_role(MATTER_ID, USER_ID)
    assert type(raised.value) is RepositoryError


async def test_member_role_errors_are_translated(
    router: respx.MockRouter,  # noqa: F811
    repository: SupabaseChunkRepository,  # noqa: F811
) -> None:
    route = rpc(
        router,
        "ocr_user_matter_role",
        pgrst_error(
            404,
            "PGRST202",
            "Could not find the function public.ocr_user_matter_role(p_matter_id, p_user_id) in the schema cache",
            hint="Perhaps you meant to call the function public.ocr_user_is_matter_member",
        ),
    )
    with pytest.raises(RepositoryError):  # the roles migration was not pushed: a schema drift, not "no"
        await repository.member_role(MATTER_ID, USER_ID)
    route.mock(return_value=pgrst_error(503, "PGRST001", "Database client error. Retrying the connection."))
    with pytest.raises(RepositoryUnavailableError):
        await repository.member_role(MATTER_ID, USER_ID)


@pytest.mark.parametrize(
    ("answer", "error"),
    [("owner", None), ("member", None), ("viewer", ForbiddenError), (None, MatterNotFoundError)],
    ids=["owner", "member", "viewer", "not-a-member"],
)
async def test_check_matter_write_access(
    router: respx.MockRouter,  # noqa: F811
    service: OCRChunkService,  # noqa: F811
    answer: str | None,
    error: type[Exception] | None,
) -> None:
    route = rpc(router, "ocr_user_matter_role", rpc_result(answer))
    if error is None:
        assert await service.check_matter_write_access(str(MATTER_ID), USER_ID) == MATTER_ID
    else:
        with pytest.raises(error) as raised:
            await service.check_matter_write_access(str(MATTER_ID), USER_ID)
        assert type(raised.value) is error
    assert_rpc(route, "ocr_user_matter_role", ARGUMENTS)


@pytest.mark.parametrize(
    ("answer", "error"),
    [("owner", None), ("member", None), ("viewer", ForbiddenError), (None, DocumentNotFoundError)],
    ids=["owner", "member", "viewer", "not-a-member"],
)
async def test_get_document_for_writer(
    router: respx.MockRouter,  # noqa: F811
    service: OCRChunkService,  # noqa: F811
    answer: str | None,
    error: type[Exception] | None,
) -> None:
    rpc(router, "ocr_get_document", rpc_result([document_row()]))
    route = rpc(router, "ocr_user_matter_role", rpc_result(answer))
    if error is None:
        assert (await service.get_document_for_writer(DOCUMENT_ID, USER_ID)).id == DOCUMENT_ID
    else:
        with pytest.raises(error) as raised:
            await service.get_document_for_writer(DOCUMENT_ID, USER_ID)
        assert type(raised.value) is error
        assert (
            raised.value.code
            == {ForbiddenError: "forbidden", DocumentNotFoundError: "document_not_found"}[error]
        )
    assert_rpc(route, "ocr_user_matter_role", ARGUMENTS)  # the role of the document's own matter


async def test_a_missing_document_is_404_before_any_role_is_asked(
    router: respx.MockRouter,  # noqa: F811
    service: OCRChunkService,  # noqa: F811
) -> None:
    rpc(router, "ocr_get_document", rpc_result([]))
    with pytest.raises(DocumentNotFoundError):
        await service.get_document_for_writer(DOCUMENT_ID, USER_ID)
