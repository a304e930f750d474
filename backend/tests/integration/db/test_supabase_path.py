"""The Supabase path: OCRChunkService over supabase-py, PostgREST answered at the HTTP level.

Requests go through the real supabase-py client and httpx to respx, where
tests/postgrest_fake.py answers them from the real migrated database, with
PostgREST's URLs, query syntax and error bodies.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import httpx
import pytest
import respx

from app.core.config import Settings
from app.core.errors import (
    ChunkNotFoundError,
    DocumentNotFoundError,
    DuplicateChunkError,
    InvalidStatusTransitionError,
    LeaseLostError,
    RepositoryUnavailableError,
    SchemaMissingError,
)
from app.db.supabase import SupabaseChunkRepository
from app.models.document import DocumentCreate, DocumentStatus
from app.models.ocr_chunk import ChunkLease, ChunkStatus
from app.services.ocr_chunk_service import OCRChunkService
from tests.factories import checksum, make_document, make_matter, ranges
from tests.postgrest_fake import SERVICE_ROLE_KEY, SUPABASE_URL, FakePostgrest


@pytest.fixture
async def postgrest(pool: asyncpg.Pool) -> AsyncIterator[FakePostgrest]:
    fake = FakePostgrest(pool)
    with respx.mock(base_url=f"{SUPABASE_URL}/rest/v1", assert_all_called=False) as router:
        router.route().mock(side_effect=fake.handle)
        yield fake


@pytest.fixture
async def supabase_service(postgrest: FakePostgrest, settings: Settings) -> AsyncIterator[OCRChunkService]:
    repository = await SupabaseChunkRepository.connect(SUPABASE_URL, SERVICE_ROLE_KEY)
    yield OCRChunkService(repository, settings)
    await repository.close()


async def test_requests_carry_the_service_role_key(
    supabase_service: OCRChunkService, postgrest: FakePostgrest, pool: asyncpg.Pool
) -> None:
    document_id = await make_document(pool, page_count=10)
    await supabase_service.create_chunks_for_document(document_id, ranges(10, 5))
    call = next(c for c in postgrest.calls if c.path == "rpc/ocr_create_chunks")
    assert call.method == "POST"
    assert call.headers["apikey"] == SERVICE_ROLE_KEY
    assert call.headers["authorization"] == f"Bearer {SERVICE_ROLE_KEY}"
    assert call.body["p_document_id"] == str(document_id)
    assert [c["page_start"] for c in call.body["p_chunks"]] == [1, 6]
    get = next(c for c in postgrest.calls if c.path == "rpc/ocr_get_document")
    assert (get.method, get.body) == ("POST", {"p_document_id": str(document_id)})
    # every call the repository makes is a function call: no table endpoint is used
    assert all(c.path.startswith("rpc/") for c in postgrest.calls)


async def test_full_lease_cycle(supabase_service: OCRChunkService, pool: asyncpg.Pool) -> None:
    service = supabase_service
    document_id = await make_document(pool, page_count=20)
    created = await service.create_chunks_for_document(document_id, ranges(20, 10))
    assert [c.status for c in created] == [ChunkStatus.PENDING] * 2

    first = await service.claim_chunk(created[0].id, "worker-1")
    assert first is not None
    assert (first.status, first.attempt_count) == (ChunkStatus.PROCESSING, 1)
    assert await service.claim_chunk(created[0].id, "worker-2") is None  # duplicate delivery
    second = await service.claim_next_chunk("worker-2", document_id)
    assert second is not None
    assert second.id == created[1].id
    assert await service.claim_next_chunk("worker-3") is None

    assert await service.update_heartbeat(first.lease) is True
    zombie = ChunkLease(chunk_id=first.id, worker_id="worker-9", attempt=1)
    assert await service.update_heartbeat(zombie) is False
    with pytest.raises(LeaseLostError):
        await service.complete_chunk(zombie, "z.json", checksum(b"z"))

    done = await service.complete_chunk(first.lease, "r0.json", checksum(b"r0"))
    assert (done.status, done.result_checksum) == (ChunkStatus.COMPLETED, checksum(b"r0"))
    failed = await service.fail_chunk(
        second.lease, error_code="engine_unavailable", error_message="503", retryable=True
    )
    assert failed.status is ChunkStatus.FAILED

    progress = await service.get_chunk_progress(document_id)
    assert (progress.total, progress.completed, progress.failed, progress.failed_retryable) == (2, 1, 1, 1)
    assert (progress.pages_total, progress.pages_completed) == (20, 10)
    assert [c.chunk_index for c in await service.get_failed_chunks(document_id)] == [1]

    retried = await service.retry_failed_chunks(document_id)
    assert [c.id for c in retried] == [second.id]
    assert retried[0].status is ChunkStatus.PENDING
    assert await service.claim_chunk(second.id, "w") is None  # backoff: not due yet


async def test_stale_sweep_and_detection(supabase_service: OCRChunkService, pool: asyncpg.Pool) -> None:
    document_id = await make_document(pool, page_count=2)
    await supabase_service.create_chunks_for_document(document_id, ranges(2, 1))
    alive = await supabase_service.claim_next_chunk("a")
    dead = await supabase_service.claim_next_chunk("b")
    assert alive is not None
    assert dead is not None
    await pool.execute(
        "update document_ocr_chunks set heartbeat_at = now() - interval '91 s' where id = $1", dead.id
    )
    await pool.execute(
        "update document_ocr_chunks set heartbeat_at = now() - interval '89 s' where id = $1", alive.id
    )
    assert [c.id for c in await supabase_service.detect_stale_chunks()] == [dead.id]
    swept = await supabase_service.sweep_stale_chunks()
    assert [(c.id, c.error_code) for c in swept] == [(dead.id, "worker_timeout")]
    assert await supabase_service.mark_chunk_stale(alive.id) is None
    retried = await supabase_service.retry_failed_chunks()
    assert [c.id for c in retried] == [dead.id]
    assert [c.id for c in await supabase_service.get_due_pending_chunks()] == [dead.id]


async def test_documents(supabase_service: OCRChunkService, pool: asyncpg.Pool) -> None:
    matter_id = await make_matter(pool)
    document = await supabase_service.create_document(
        DocumentCreate(matter_id=matter_id, filename="a.pdf", page_count=3, file_sha256=checksum(b"a"))
    )
    assert document.ocr_status is DocumentStatus.PENDING
    (chunk,) = await supabase_service.start_document(document.id, ranges(3, 3))
    assert chunk.page_end == 3
    moved = await supabase_service.get_document(document.id)
    assert moved.ocr_started_at is not None
    assert (await supabase_service.get_document(document.id)).ocr_status is DocumentStatus.PROCESSING
    await supabase_service.delete_document(document.id)
    with pytest.raises(DocumentNotFoundError):
        await supabase_service.get_document(document.id)


async def test_database_errors_arrive_as_domain_errors(
    supabase_service: OCRChunkService, postgrest: FakePostgrest, pool: asyncpg.Pool
) -> None:
    document_id = await make_document(pool, page_count=10)
    await supabase_service.create_chunks_for_document(document_id, ranges(10, 5))
    # 23505 from the UNIQUE (document_id, chunk_index), as PostgREST's 409 body
    with pytest.raises(DuplicateChunkError):
        await supabase_service.repository.create_chunks(document_id, ranges(10, 5)[:1], 3)
    response = next(c for c in reversed(postgrest.calls) if c.path == "rpc/ocr_create_chunks")
    assert response.body["p_max_attempts"] == 3
    # OC001 from the transition trigger, as PostgREST's 400 body
    chunk = (await supabase_service.get_chunks_by_document(document_id))[0]
    with pytest.raises(InvalidStatusTransitionError):
        await supabase_service.repository.update_status(chunk.id, ChunkStatus.PENDING, ChunkStatus.COMPLETED)
    assert (await supabase_service.get_chunk(chunk.id)).status is ChunkStatus.PENDING
    with pytest.raises(InvalidStatusTransitionError):
        await supabase_service.update_status(chunk.id, ChunkStatus.COMPLETED)
    with pytest.raises(ChunkNotFoundError):
        await supabase_service.get_chunk("6f1d7a70-2c4e-4a0b-9d3e-0c5b1f2a3b4c")
    with pytest.raises(DocumentNotFoundError):
        await supabase_service.repository.create_chunks(
            __import__("uuid").UUID("6f1d7a70-2c4e-4a0b-9d3e-0c5b1f2a3b4c"), ranges(1, 1), 3
        )


@pytest.mark.parametrize(
    ("response", "error", "retryable"),
    [
        (
            httpx.Response(
                503,
                json={
                    "code": "PGRST001",
                    "message": "Database client error. Retrying the connection.",
                    "details": None,
                    "hint": None,
                },
            ),
            RepositoryUnavailableError,
            True,
        ),
        (httpx.Response(502, text="<html>Bad Gateway</html>"), RepositoryUnavailableError, True),
        (
            httpx.Response(
                404,
                json={
                    "code": "PGRST202",
                    "message": "Could not find the function",
                    "details": None,
                    "hint": None,
                },
            ),
            SchemaMissingError,  # the migrations were not pushed: say to push them
            False,
        ),
    ],
    ids=["pgrst001", "proxy-502", "pgrst202"],
)
async def test_outages_and_schema_errors(
    supabase_service: OCRChunkService,
    postgrest: FakePostgrest,
    response: httpx.Response,
    error: type,
    retryable: bool,
) -> None:
    postgrest.fail_next.append(response)
    with pytest.raises(error) as raised:
        await supabase_service.claim_next_chunk("w")
    assert raised.value.retryable is retryable


async def test_connection_failure_is_retryable(settings: Settings) -> None:
    with respx.mock(base_url=f"{SUPABASE_URL}/rest/v1") as router:
        router.route().mock(side_effect=httpx.ConnectError("connection refused"))
        repository = await SupabaseChunkRepository.connect(SUPABASE_URL, SERVICE_ROLE_KEY)
        try:
            with pytest.raises(RepositoryUnavailableError):
                await OCRChunkService(repository, settings).get_chunk_progress(
                    "6f1d7a70-2c4e-4a0b-9d3e-0c5b1f2a3b4c"
                )
        finally:
            await repository.close()


async def test_every_function_the_repository_names_exists_with_those_arguments(pool: asyncpg.Pool) -> None:
    """Read the function calls out of the repository's source and check them against the database."""
    import ast
    import inspect

    import app.db.repository as module

    calls: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.args[0].value
            if isinstance(name, str) and name.startswith("ocr_") and len(node.args) > 1:
                params = node.args[1]
                assert isinstance(params, ast.Dict), name
                calls[name] = {k.value for k in params.keys if isinstance(k, ast.Constant)}
    assert len(calls) >= 27  # each one ChunkRepository names literally (not the two _create passes on)
    for name, arguments in calls.items():
        found = await pool.fetchval(
            "select array_agg(n) from pg_proc p, unnest(p.proargnames[1:p.pronargs]) n"
            " where p.pronamespace = 'public'::regnamespace and p.proname = $1",
            name,
        )
        assert found is not None, f"no SQL function {name}"
        assert arguments <= set(found), f"{name}: {sorted(arguments - set(found))} not in {found}"


async def test_progress_for_a_member_in_one_call(
    supabase_service: OCRChunkService, postgrest: FakePostgrest, pool: asyncpg.Pool
) -> None:
    from tests.factories import make_user

    matter = await make_matter(pool)
    member, stranger = await make_user(pool, matter), await make_user(pool)
    document_id = await make_document(pool, matter, page_count=10)
    await supabase_service.create_chunks_for_document(document_id, ranges(10, 5))
    calls = len(postgrest.calls)
    document, progress = await supabase_service.get_progress_for_user(document_id, member)
    assert len(postgrest.calls) == calls + 1  # one round trip for the poller
    assert (document.id, progress.total, progress.pages_total) == (document_id, 2, 10)
    with pytest.raises(DocumentNotFoundError):
        await supabase_service.get_progress_for_user(document_id, stranger)
