"""SupabaseChunkRepository against PostgREST mocked at the HTTP level.

supabase-py sends real requests through httpx; respx answers them at the URLs
a Supabase project serves (``{SUPABASE_URL}/rest/v1/rpc/<function>``: every
repository call is an ocr_* function) with rows rendered as PostgREST renders
them and with PostgREST's (and its gateway's) real error bodies. Each test
checks the request the repository sent - function, JSON arguments, headers -
and what the answer became: a model, None, or a domain error. The same SQL contract against a real database is covered by
tests/integration/db/test_supabase_path.py.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import httpx
import pytest
import respx
from supabase import AsyncClientOptions, acreate_client

from app.core.config import load_settings
from app.core.errors import (
    ChunkNotFoundError,
    ConfigurationError,
    DocumentNotFoundError,
    DuplicateChunkError,
    DuplicateDocumentError,
    InvalidStatusTransitionError,
    LeaseLostError,
    MatterNotFoundError,
    OCRError,
    RepositoryError,
    RepositoryUnavailableError,
)
from app.db.supabase import PostgrestConnector, SupabaseChunkRepository
from app.models.document import DocumentCreate, DocumentStatus
from app.models.ocr_chunk import ChunkLease, ChunkRange, ChunkStatus, DocumentOCRChunkCreate
from app.services.ocr_chunk_service import OCRChunkService

SUPABASE_URL = "https://abcdefghijklmnopqrst.supabase.co"
REST = f"{SUPABASE_URL}/rest/v1"
SERVICE_ROLE_KEY = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJpc3MiOiJzdXBhYmFzZSIsInJlZiI6ImFiY2RlZmdoaWprbG1ub3BxcnN0Iiwicm9sZSI6InNlcnZpY2Vfcm9sZSJ9"
    ".M9jrxyvPLkUxWgOYSf5dNdJ8v_eWrqwU7WgAb4vQ2cs"
)

MATTER_ID = UUID("0b6f3c0e-5d1a-4e59-9a39-2f0c1d7e8a41")
DOCUMENT_ID = UUID("7f3c2a10-9b4e-4c1d-8e2f-6a5b4c3d2e1f")
CHUNK_ID = UUID("c1a2b3c4-d5e6-47f8-9a0b-1c2d3e4f5a6b")
CHUNK_ID_2 = UUID("d2b3c4d5-e6f7-4809-8a1b-2c3d4e5f6a7b")
MISSING_ID = UUID("6f1d7a70-2c4e-4a0b-9d3e-0c5b1f2a3b4c")
FILE_SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
INPUT_SHA = "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
RESULT_SHA = "fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9"
RESULT_PATH = f"{MATTER_ID}/{DOCUMENT_ID}/chunks/00000-{RESULT_SHA[:16]}.json"

CREATED = "2026-11-22T09:14:03.512345+00:00"
STARTED = "2026-11-22T09:14:07.004211+00:00"
BEAT = "2026-11-22T09:14:52.118734+00:00"
FINISHED = "2026-11-22T09:15:40.906002+00:00"

JSON_TYPE = {"Content-Type": "application/json; charset=utf-8"}


# -- PostgREST renderings ----------------------------------------------------------


def chunk_row(**overrides: Any) -> dict[str, Any]:
    """A document_ocr_chunks row as PostgREST renders it: every column, in table order."""
    index = overrides.get("chunk_index", 0)
    row: dict[str, Any] = {
        "id": str(CHUNK_ID),
        "matter_id": str(MATTER_ID),
        "document_id": str(DOCUMENT_ID),
        "chunk_index": index,
        "page_start": 1 + 10 * index,
        "page_end": 10 + 10 * index,
        "status": "pending",
        "attempt_count": 0,
        "max_attempts": 3,
        "engine": "auto",
        "language": "eng",
        "error_code": None,
        "error_message": None,
        "error_retryable": None,
        "next_attempt_at": CREATED,
        "worker_id": None,
        "input_storage_path": f"{MATTER_ID}/{DOCUMENT_ID}/input/{index:05d}.pdf",
        "input_checksum": INPUT_SHA,
        "result_storage_path": None,
        "result_checksum": None,
        "processing_started_at": None,
        "heartbeat_at": None,
        "processing_completed_at": None,
        "created_at": CREATED,
        "updated_at": CREATED,
    }
    row.update(overrides)
    return row


def processing_row(worker_id: str = "worker-1", attempt: int = 1, **overrides: Any) -> dict[str, Any]:
    leased = {
        "status": "processing",
        "attempt_count": attempt,
        "worker_id": worker_id,
        "processing_started_at": STARTED,
        "heartbeat_at": STARTED,
        "updated_at": STARTED,
    }
    return chunk_row(**{**leased, **overrides})


def failed_row(**overrides: Any) -> dict[str, Any]:
    failure = {
        "status": "failed",
        "error_code": "engine_unavailable",
        "error_message": "tesseract exited with signal 9",
        "error_retryable": True,
    }
    return processing_row(**{**failure, **overrides})


def document_row(**overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": str(DOCUMENT_ID),
        "matter_id": str(MATTER_ID),
        "filename": "deposition-2026-03.pdf",
        "source_path": None,
        "page_count": 20,
        "file_sha256": FILE_SHA,
        "ocr_status": "pending",
        "engine": "auto",
        "result_storage_path": None,
        "result_checksum": None,
        "error_message": None,
        "ocr_started_at": None,
        "ocr_completed_at": None,
        "created_at": CREATED,
        "updated_at": CREATED,
        "finalize_worker_id": None,
        "finalize_attempt": 0,
        "finalize_heartbeat_at": None,
        "pages_failed": 0,
        "language": "eng",
    }
    row.update(overrides)
    return row


def rows(data: Any, status: int = 200, content_range: str = "0-0/*") -> httpx.Response:
    return httpx.Response(status, json=data, headers={**JSON_TYPE, "Content-Range": content_range})


def rpc_result(data: Any) -> httpx.Response:
    # json.dumps, not json=: PostgREST sends the body `null` for a scalar function returning NULL
    return httpx.Response(200, content=json.dumps(data).encode(), headers=JSON_TYPE)


def pgrst_error(
    status: int, code: str, message: str, details: str | None = None, hint: str | None = None
) -> httpx.Response:
    return httpx.Response(
        status,
        json={"code": code, "details": details, "hint": hint, "message": message},
        headers=JSON_TYPE,
    )


UNIQUE_CHUNK = pgrst_error(
    409,
    "23505",
    'duplicate key value violates unique constraint "document_ocr_chunks_document_chunk_key"',
    f"Key (document_id, chunk_index)=({DOCUMENT_ID}, 0) already exists.",
)
INVALID_TRANSITION = pgrst_error(
    400,
    "OC001",
    f"invalid status transition pending -> completed for chunk {CHUNK_ID}",
    f'{{"from" : "pending", "to" : "completed", "chunk_id" : "{CHUNK_ID}"}}',
)
CHUNK_DOCUMENT_FK = pgrst_error(
    409,
    "23503",
    'insert or update on table "document_ocr_chunks" violates foreign key constraint '
    '"document_ocr_chunks_document_fk"',
    f'Key (document_id, matter_id)=({DOCUMENT_ID}, {MISSING_ID}) is not present in table "documents".',
)


# -- what was sent -------------------------------------------------------------------


def sent(route: respx.Route, calls: int = 1) -> httpx.Request:
    assert route.call_count == calls
    request: httpx.Request = route.calls.last.request
    return request


def assert_service_role(request: httpx.Request, prefer: str | None = None) -> None:
    assert request.headers["apikey"] == SERVICE_ROLE_KEY
    assert request.headers["authorization"] == f"Bearer {SERVICE_ROLE_KEY}"
    assert request.headers.get("prefer") == prefer


def assert_rpc(route: respx.Route, function: str, arguments: dict[str, Any], calls: int = 1) -> None:
    """A POST to /rest/v1/rpc/<function> whose JSON body names exactly the SQL arguments."""
    request = sent(route, calls)
    assert (request.method, str(request.url)) == ("POST", f"{REST}/rpc/{function}")
    assert request.headers["content-type"] == "application/json"
    assert_service_role(request)
    assert json.loads(request.content) == arguments


def rpc(router: respx.MockRouter, function: str, response: httpx.Response) -> respx.Route:
    return router.post(f"{REST}/rpc/{function}").mock(return_value=response)


# -- fixtures -------------------------------------------------------------------------


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    # assert_all_mocked: a request to a URL no test expects fails the test instead of leaving the machine.
    with respx.mock(assert_all_mocked=True, assert_all_called=True) as mock:
        yield mock


@pytest.fixture
async def repository(router: respx.MockRouter) -> AsyncIterator[SupabaseChunkRepository]:
    repo = await SupabaseChunkRepository.connect(SUPABASE_URL, SERVICE_ROLE_KEY)
    yield repo
    await repo.close()


@pytest.fixture
def service(repository: SupabaseChunkRepository) -> OCRChunkService:
    settings = load_settings(
        chunk_repository="supabase",
        supabase_url=SUPABASE_URL,
        supabase_service_role_key=SERVICE_ROLE_KEY,
        ocr_max_attempts=3,
        ocr_retry_base_seconds=30,
        ocr_retry_cap_seconds=600,
        stale_chunk_threshold_seconds=90,
        heartbeat_interval_seconds=5,
    )
    return OCRChunkService(repository, settings)


def lease(worker_id: str = "worker-1", attempt: int = 1) -> ChunkLease:
    return ChunkLease(chunk_id=CHUNK_ID, worker_id=worker_id, attempt=attempt)


# -- documents ------------------------------------------------------------------------


async def test_create_document_inserts_the_row_and_returns_it(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    route = rpc(router, "ocr_create_document", rpc_result([document_row()]))
    document = await service.create_document(
        {
            "matter_id": MATTER_ID,
            "filename": "deposition-2026-03.pdf",
            "page_count": 20,
            "file_sha256": FILE_SHA,
        }
    )
    # null arguments take the function's defaults (a new id, no source path), as in the asyncpg call
    assert_rpc(
        route,
        "ocr_create_document",
        {
            "p_id": None,
            "p_matter_id": str(MATTER_ID),
            "p_filename": "deposition-2026-03.pdf",
            "p_source_path": None,
            "p_page_count": 20,
            "p_file_sha256": FILE_SHA,
            "p_engine": "auto",
            "p_language": "eng",
        },
    )
    assert (document.id, document.ocr_status) == (DOCUMENT_ID, DocumentStatus.PENDING)
    assert document.created_at == datetime(2026, 11, 22, 9, 14, 3, 512345, tzinfo=UTC)


@pytest.mark.parametrize(
    ("response", "error"),
    [
        (
            pgrst_error(
                409,
                "23505",
                'duplicate key value violates unique constraint "documents_pkey"',
                f"Key (id)=({DOCUMENT_ID}) already exists.",
            ),
            DuplicateDocumentError,
        ),
        (
            pgrst_error(
                409,
                "23503",
                'insert or update on table "documents" violates foreign key constraint "documents_matter_id_fkey"',
                f'Key (matter_id)=({MATTER_ID}) is not present in table "matters".',
            ),
            MatterNotFoundError,
        ),
    ],
    ids=["23505-duplicate-id", "23503-no-matter"],
)
async def test_create_document_constraint_errors(
    router: respx.MockRouter,
    repository: SupabaseChunkRepository,
    response: httpx.Response,
    error: type[OCRError],
) -> None:
    rpc(router, "ocr_create_document", response)
    document = DocumentCreate(
        id=DOCUMENT_ID, matter_id=MATTER_ID, filename="a.pdf", page_count=1, file_sha256=FILE_SHA
    )
    with pytest.raises(error) as raised:
        await repository.create_document(document)
    assert type(raised.value) is error
    assert raised.value.retryable is False
    assert raised.value.context["sqlstate"] == response.json()["code"]
    # PostgreSQL's words (table, constraint, key) stay in the context for logs, out of the message
    assert raised.value.context["detail"] == response.json()["message"]
    assert "documents" not in str(raised.value)


async def test_get_document_reads_by_id_and_missing_is_not_found(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    route = router.post(f"{REST}/rpc/ocr_get_document").mock(
        side_effect=[rpc_result([document_row()]), rpc_result([])]
    )
    document = await service.get_document(str(DOCUMENT_ID))
    assert document.filename == "deposition-2026-03.pdf"
    assert_rpc(route, "ocr_get_document", {"p_document_id": str(DOCUMENT_ID)})
    with pytest.raises(DocumentNotFoundError):
        await service.get_document(DOCUMENT_ID)
    assert route.call_count == 2


async def test_refresh_document_status_reads_the_returned_text(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    route = rpc(router, "ocr_refresh_document_status", rpc_result("failed"))
    assert await service.refresh_document_status(DOCUMENT_ID) is DocumentStatus.FAILED
    assert_rpc(route, "ocr_refresh_document_status", {"p_document_id": str(DOCUMENT_ID)})
    route.mock(return_value=rpc_result(None))  # a text function on a missing document returns null
    assert await service.refresh_document_status(MISSING_ID) is None


async def test_delete_document_calls_the_sql_function(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    route = rpc(router, "ocr_delete_document", rpc_result(1))
    await service.delete_document(DOCUMENT_ID)
    assert_rpc(route, "ocr_delete_document", {"p_document_id": str(DOCUMENT_ID)})


async def test_documents_ready_to_merge(router: respx.MockRouter, service: OCRChunkService) -> None:
    ready = document_row(ocr_status="processing", ocr_started_at=STARTED)
    route = rpc(router, "ocr_documents_ready_to_merge", rpc_result([ready]))
    documents = await service.get_documents_ready_to_merge(limit=25)
    assert_rpc(
        route, "ocr_documents_ready_to_merge", {"p_limit": 25, "p_lease_seconds": 90.0, "p_run_id": None}
    )
    assert [(d.id, d.ocr_status) for d in documents] == [(DOCUMENT_ID, DocumentStatus.PROCESSING)]


# -- creating chunks ------------------------------------------------------------------


async def test_create_chunks_for_document_sends_one_rpc_with_every_range(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    rpc(router, "ocr_get_document", rpc_result([document_row()]))
    created = [chunk_row(), chunk_row(id=str(CHUNK_ID_2), chunk_index=1)]
    route = rpc(router, "ocr_create_chunks", rpc_result(created))
    ranges = [
        ChunkRange(
            chunk_index=i,
            page_start=1 + 10 * i,
            page_end=10 + 10 * i,
            input_storage_path=f"{MATTER_ID}/{DOCUMENT_ID}/input/{i:05d}.pdf",
            input_checksum=INPUT_SHA,
        )
        for i in range(2)
    ]
    chunks = await service.create_chunks_for_document(DOCUMENT_ID, ranges)
    assert_rpc(
        route,
        "ocr_create_chunks",
        {
            "p_document_id": str(DOCUMENT_ID),
            "p_chunks": [
                {
                    "chunk_index": i,
                    "page_start": 1 + 10 * i,
                    "page_end": 10 + 10 * i,
                    "input_storage_path": f"{MATTER_ID}/{DOCUMENT_ID}/input/{i:05d}.pdf",
                    "input_checksum": INPUT_SHA,
                }
                for i in range(2)
            ],
            "p_max_attempts": 3,
        },
    )
    assert [(c.id, c.chunk_index, c.status) for c in chunks] == [
        (CHUNK_ID, 0, ChunkStatus.PENDING),
        (CHUNK_ID_2, 1, ChunkStatus.PENDING),
    ]
    assert chunks[1].page_count == 10


async def test_create_chunk_passes_the_matter_and_a_foreign_key_violation_is_document_not_found(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    rpc(router, "ocr_get_document", rpc_result([document_row()]))
    route = rpc(router, "ocr_create_chunks", CHUNK_DOCUMENT_FK)
    chunk = DocumentOCRChunkCreate(
        document_id=DOCUMENT_ID, matter_id=MISSING_ID, chunk_index=0, page_start=1, page_end=5
    )
    with pytest.raises(DocumentNotFoundError) as raised:
        await service.create_chunk(chunk)
    assert raised.value.context["sqlstate"] == "23503"
    assert json.loads(sent(route).content)["p_chunks"] == [
        {
            "chunk_index": 0,
            "page_start": 1,
            "page_end": 5,
            "input_storage_path": None,
            "input_checksum": None,
            "matter_id": str(MISSING_ID),
        }
    ]

    route.mock(return_value=rpc_result([chunk_row(page_end=5, input_storage_path=None, input_checksum=None)]))
    created = await service.create_chunk(chunk.model_copy(update={"matter_id": MATTER_ID}))
    assert (created.id, created.page_end, created.matter_id) == (CHUNK_ID, 5, MATTER_ID)


async def test_duplicate_chunk_index_is_a_duplicate_chunk_error(
    router: respx.MockRouter, repository: SupabaseChunkRepository
) -> None:
    route = rpc(router, "ocr_create_chunks", UNIQUE_CHUNK)
    with pytest.raises(DuplicateChunkError) as raised:
        await repository.create_chunks(DOCUMENT_ID, [ChunkRange(chunk_index=0, page_start=1, page_end=10)], 5)
    assert raised.value.retryable is False
    assert raised.value.context["sqlstate"] == "23505"
    assert json.loads(sent(route).content)["p_max_attempts"] == 5


async def test_create_chunks_for_a_vanished_document_is_document_not_found(
    router: respx.MockRouter, repository: SupabaseChunkRepository
) -> None:
    # ocr_create_chunks joins the document: when it is gone the function inserts nothing
    rpc(router, "ocr_create_chunks", rpc_result([]))
    with pytest.raises(DocumentNotFoundError):
        await repository.create_chunks(MISSING_ID, [ChunkRange(chunk_index=0, page_start=1, page_end=10)], 3)


# -- reading chunks ------------------------------------------------------------------


async def test_get_chunk_reads_by_id_and_missing_is_chunk_not_found(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    route = router.post(f"{REST}/rpc/ocr_get_chunk").mock(
        side_effect=[rpc_result([processing_row()]), rpc_result([])]
    )
    chunk = await service.get_chunk(CHUNK_ID)
    assert_rpc(route, "ocr_get_chunk", {"p_chunk_id": str(CHUNK_ID)})
    assert (chunk.status, chunk.worker_id, chunk.attempt_count) == (ChunkStatus.PROCESSING, "worker-1", 1)
    assert chunk.processing_started_at == datetime(2026, 11, 22, 9, 14, 7, 4211, tzinfo=UTC)
    with pytest.raises(ChunkNotFoundError):
        await service.get_chunk(MISSING_ID)
    assert_rpc(route, "ocr_get_chunk", {"p_chunk_id": str(MISSING_ID)}, calls=2)


async def test_list_chunks_passes_its_filters(router: respx.MockRouter, service: OCRChunkService) -> None:
    route = router.post(f"{REST}/rpc/ocr_list_chunks").mock(
        side_effect=[
            rpc_result([failed_row()]),
            rpc_result([chunk_row(), chunk_row(id=str(CHUNK_ID_2), chunk_index=1)]),
        ]
    )
    failed = await service.get_failed_chunks(DOCUMENT_ID)
    assert [(c.id, c.error_code, c.error_retryable) for c in failed] == [
        (CHUNK_ID, "engine_unavailable", True)
    ]
    assert_rpc(
        route, "ocr_list_chunks", {"p_document_id": str(DOCUMENT_ID), "p_status": "failed", "p_limit": None}
    )
    every = await service.repository.list_chunks(limit=2)
    assert [c.chunk_index for c in every] == [0, 1]
    assert_rpc(route, "ocr_list_chunks", {"p_document_id": None, "p_status": None, "p_limit": 2}, calls=2)


# -- administrative moves -------------------------------------------------------------


async def test_update_status_is_a_compare_and_set(router: respx.MockRouter, service: OCRChunkService) -> None:
    rpc(router, "ocr_get_chunk", rpc_result([failed_row()]))
    route = rpc(
        router,
        "ocr_update_chunk_status",
        rpc_result([failed_row(status="pending", next_attempt_at=FINISHED, updated_at=FINISHED)]),
    )
    moved = await service.update_status(CHUNK_ID, "pending")
    # null error arguments keep the row's columns (coalesce in the function)
    assert_rpc(
        route,
        "ocr_update_chunk_status",
        {
            "p_chunk_id": str(CHUNK_ID),
            "p_expected": "failed",
            "p_new": "pending",
            "p_error_code": None,
            "p_error_message": None,
        },
    )
    assert moved.status is ChunkStatus.PENDING


async def test_update_status_to_failed_sends_the_error_and_refreshes_the_document(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    rpc(router, "ocr_get_chunk", rpc_result([processing_row()]))
    update = rpc(
        router,
        "ocr_update_chunk_status",
        rpc_result(
            [failed_row(error_code="operator_cancelled", error_message="by hand", error_retryable=None)]
        ),
    )
    refresh = rpc(router, "ocr_refresh_document_status", rpc_result("failed"))
    moved = await service.update_status(
        CHUNK_ID, "failed", error_code="operator_cancelled", error_message="by hand"
    )
    assert_rpc(
        update,
        "ocr_update_chunk_status",
        {
            "p_chunk_id": str(CHUNK_ID),
            "p_expected": "processing",
            "p_new": "failed",
            "p_error_code": "operator_cancelled",
            "p_error_message": "by hand",
        },
    )
    assert_rpc(refresh, "ocr_refresh_document_status", {"p_document_id": str(DOCUMENT_ID)})
    assert moved.error_code == "operator_cancelled"


async def test_trigger_refusal_is_an_invalid_status_transition(
    router: respx.MockRouter, repository: SupabaseChunkRepository
) -> None:
    route = rpc(router, "ocr_update_chunk_status", INVALID_TRANSITION)
    with pytest.raises(InvalidStatusTransitionError) as raised:
        await repository.update_status(CHUNK_ID, ChunkStatus.PENDING, ChunkStatus.COMPLETED)
    assert raised.value.context["sqlstate"] == "OC001"
    assert raised.value.retryable is False
    assert json.loads(sent(route).content)["p_expected"] == "pending"


async def test_update_status_that_lost_the_race_reports_the_current_status(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    reads = router.post(f"{REST}/rpc/ocr_get_chunk").mock(
        side_effect=[rpc_result([failed_row()]), rpc_result([failed_row(status="pending")])]
    )
    # no row: another caller moved the chunk between the read and the write
    rpc(router, "ocr_update_chunk_status", rpc_result([]))
    with pytest.raises(InvalidStatusTransitionError) as raised:
        await service.update_status(CHUNK_ID, ChunkStatus.PENDING)
    assert raised.value.context["current"] is ChunkStatus.PENDING
    assert reads.call_count == 2


async def test_update_result_sets_processing_or_completed_rows_only(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    completed = processing_row(
        status="completed",
        result_storage_path=RESULT_PATH,
        result_checksum=RESULT_SHA,
        processing_completed_at=FINISHED,
    )
    route = router.post(f"{REST}/rpc/ocr_set_chunk_result").mock(
        side_effect=[rpc_result([completed]), rpc_result([])]
    )
    updated = await service.update_result(CHUNK_ID, RESULT_PATH, RESULT_SHA)
    assert_rpc(
        route,
        "ocr_set_chunk_result",
        {"p_chunk_id": str(CHUNK_ID), "p_result_storage_path": RESULT_PATH, "p_result_checksum": RESULT_SHA},
    )
    assert updated.result_checksum == RESULT_SHA

    rpc(router, "ocr_get_chunk", rpc_result([chunk_row()]))
    with pytest.raises(InvalidStatusTransitionError) as raised:
        await service.update_result(CHUNK_ID, RESULT_PATH, RESULT_SHA)
    assert raised.value.context["current"] is ChunkStatus.PENDING


# -- lease protocol -------------------------------------------------------------------


async def test_claim_chunk_leases_the_row_and_a_duplicate_delivery_gets_none(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    route = rpc(router, "ocr_claim_chunk", rpc_result([processing_row()]))
    claimed = await service.claim_chunk(str(CHUNK_ID), "worker-1")
    assert_rpc(route, "ocr_claim_chunk", {"p_chunk_id": str(CHUNK_ID), "p_worker_id": "worker-1"})
    assert claimed is not None
    assert claimed.lease == lease()
    assert claimed.heartbeat_at == datetime(2026, 11, 22, 9, 14, 7, 4211, tzinfo=UTC)

    route.mock(return_value=rpc_result([]))  # not pending, not due, or locked by another claimer
    assert await service.claim_chunk(CHUNK_ID, "worker-2") is None
    assert_rpc(route, "ocr_claim_chunk", {"p_chunk_id": str(CHUNK_ID), "p_worker_id": "worker-2"}, calls=2)


async def test_claim_next_chunk_with_and_without_a_document(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    route = rpc(router, "ocr_claim_next_chunk", rpc_result([processing_row("worker-7")]))
    claimed = await service.claim_next_chunk("worker-7", DOCUMENT_ID)
    assert_rpc(route, "ocr_claim_next_chunk", {"p_worker_id": "worker-7", "p_document_id": str(DOCUMENT_ID)})
    assert claimed is not None
    assert claimed.worker_id == "worker-7"
    route.mock(return_value=rpc_result([]))
    assert await service.claim_next_chunk("worker-7") is None
    assert_rpc(route, "ocr_claim_next_chunk", {"p_worker_id": "worker-7", "p_document_id": None}, calls=2)


async def test_held_chunk_asks_for_the_holders_processing_row(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    route = rpc(router, "ocr_held_chunk", rpc_result([processing_row("worker-7/0a1b2c3d")]))
    held = await service.held_chunk("worker-7/0a1b2c3d")
    assert_rpc(route, "ocr_held_chunk", {"p_worker_id": "worker-7/0a1b2c3d"})
    assert held is not None
    assert held.worker_id == "worker-7/0a1b2c3d"
    route.mock(return_value=rpc_result([]))  # the claim never committed
    assert await service.held_chunk("worker-7/0a1b2c3d") is None


async def test_update_heartbeat_reports_whether_the_lease_holds(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    route = rpc(router, "ocr_heartbeat_chunk", rpc_result(True))
    assert await service.update_heartbeat(lease(attempt=2)) is True
    assert_rpc(
        route, "ocr_heartbeat_chunk", {"p_chunk_id": str(CHUNK_ID), "p_worker_id": "worker-1", "p_attempt": 2}
    )
    route.mock(return_value=rpc_result(False))  # a zombie: another attempt owns the chunk now
    assert await service.update_heartbeat(lease(attempt=1)) is False


@pytest.mark.parametrize("body", [b"null", b'"t"', b"[]"], ids=["null", "text", "array"])
async def test_a_heartbeat_answer_that_is_not_a_boolean_is_a_repository_error(
    router: respx.MockRouter, service: OCRChunkService, body: bytes
) -> None:
    # never read as "lease lost" (the worker would drop a healthy chunk) nor as "held"
    rpc(router, "ocr_heartbeat_chunk", httpx.Response(200, content=body, headers=JSON_TYPE))
    with pytest.raises(RepositoryError) as raised:
        await service.update_heartbeat(lease())
    assert type(raised.value) is RepositoryError


async def test_complete_chunk_returns_the_completed_row(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    completed = processing_row(
        status="completed",
        result_storage_path=RESULT_PATH,
        result_checksum=RESULT_SHA,
        heartbeat_at=FINISHED,
        processing_completed_at=FINISHED,
        updated_at=FINISHED,
    )
    route = rpc(router, "ocr_complete_chunk", rpc_result([completed]))
    done = await service.complete_chunk(lease(), RESULT_PATH, RESULT_SHA)
    assert_rpc(
        route,
        "ocr_complete_chunk",
        {
            "p_chunk_id": str(CHUNK_ID),
            "p_worker_id": "worker-1",
            "p_attempt": 1,
            "p_result_storage_path": RESULT_PATH,
            "p_result_checksum": RESULT_SHA,
        },
    )
    assert (done.status, done.result_storage_path) == (ChunkStatus.COMPLETED, RESULT_PATH)
    assert done.processing_completed_at == datetime(2026, 11, 22, 9, 15, 40, 906002, tzinfo=UTC)


async def test_complete_chunk_with_a_lost_lease_raises_and_writes_nothing_else(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    # the sweep failed the chunk and attempt 2 owns it; the zombie's complete matches no row
    route = rpc(router, "ocr_complete_chunk", rpc_result([]))
    with pytest.raises(LeaseLostError) as raised:
        await service.complete_chunk(lease("worker-zombie", 1), RESULT_PATH, RESULT_SHA)
    assert raised.value.context == {"chunk_id": CHUNK_ID, "attempt": 1, "worker_id": "worker-zombie"}
    assert route.call_count == 1  # one RPC, nothing written around it (the router refuses any other call)


async def test_fail_chunk_sends_the_error_and_a_lost_lease_raises(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    route = rpc(router, "ocr_fail_chunk", rpc_result([failed_row()]))
    failed = await service.fail_chunk(
        lease(),
        error_code="engine_unavailable",
        error_message="tesseract exited with signal 9",
        retryable=True,
    )
    assert_rpc(
        route,
        "ocr_fail_chunk",
        {
            "p_chunk_id": str(CHUNK_ID),
            "p_worker_id": "worker-1",
            "p_attempt": 1,
            "p_error_code": "engine_unavailable",
            "p_error_message": "tesseract exited with signal 9",
            "p_retryable": True,
        },
    )
    assert (failed.status, failed.error_retryable) == (ChunkStatus.FAILED, True)
    route.mock(return_value=rpc_result([]))
    with pytest.raises(LeaseLostError):
        await service.fail_chunk(
            lease(), error_code="corrupt_page", error_message="bad xref", retryable=False
        )
    assert json.loads(sent(route, 2).content)["p_retryable"] is False


# -- recovery -------------------------------------------------------------------------


async def test_detect_stale_chunks_passes_the_threshold(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    route = rpc(router, "ocr_detect_stale_chunks", rpc_result([processing_row(heartbeat_at=STARTED)]))
    stale = await service.detect_stale_chunks()
    assert_rpc(route, "ocr_detect_stale_chunks", {"p_threshold_seconds": 90.0})
    assert [c.id for c in stale] == [CHUNK_ID]


async def test_sweep_stale_chunks_and_mark_one_chunk_stale(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    timed_out = processing_row(
        status="failed",
        error_code="worker_timeout",
        error_message="no heartbeat for more than 90 s from worker worker-1 (attempt 1)",
        error_retryable=True,
    )
    route = rpc(router, "ocr_sweep_stale_chunks", rpc_result([timed_out]))
    swept = await service.sweep_stale_chunks()
    assert_rpc(route, "ocr_sweep_stale_chunks", {"p_threshold_seconds": 90.0, "p_chunk_id": None})
    assert [(c.id, c.status, c.error_code) for c in swept] == [
        (CHUNK_ID, ChunkStatus.FAILED, "worker_timeout")
    ]

    route.mock(return_value=rpc_result([]))  # a heartbeat landed first: not stale any more
    assert await service.mark_chunk_stale(CHUNK_ID) is None
    assert_rpc(
        route, "ocr_sweep_stale_chunks", {"p_threshold_seconds": 90.0, "p_chunk_id": str(CHUNK_ID)}, calls=2
    )


async def test_retry_failed_chunks_automatic_and_forced(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    due_later = "2026-11-22T09:16:21.377120+00:00"
    retried_row = failed_row(status="pending", next_attempt_at=due_later, updated_at=FINISHED)
    route = rpc(router, "ocr_retry_failed_chunks", rpc_result([retried_row]))
    retried = await service.retry_failed_chunks(DOCUMENT_ID)
    assert_rpc(
        route,
        "ocr_retry_failed_chunks",
        {"p_document_id": str(DOCUMENT_ID), "p_base_seconds": 30.0, "p_cap_seconds": 600.0, "p_force": False},
    )
    assert [(c.status, c.next_attempt_at) for c in retried] == [
        (ChunkStatus.PENDING, datetime(2026, 11, 22, 9, 16, 21, 377120, tzinfo=UTC))
    ]
    route.mock(return_value=rpc_result([]))
    assert await service.retry_failed_chunks(force=True) == []
    assert_rpc(
        route,
        "ocr_retry_failed_chunks",
        {"p_document_id": None, "p_base_seconds": 30.0, "p_cap_seconds": 600.0, "p_force": True},
        calls=2,
    )


async def test_due_pending_chunks(router: respx.MockRouter, service: OCRChunkService) -> None:
    route = rpc(
        router,
        "ocr_due_pending_chunks",
        rpc_result([chunk_row(), chunk_row(id=str(CHUNK_ID_2), chunk_index=1)]),
    )
    due = await service.get_due_pending_chunks(50, overdue_seconds=30, run_id="run:laptop:1:abc")
    assert_rpc(
        route,
        "ocr_due_pending_chunks",
        {"p_limit": 50, "p_overdue_seconds": 30, "p_run_id": "run:laptop:1:abc"},
    )
    assert [c.id for c in due] == [CHUNK_ID, CHUNK_ID_2]


async def test_run_reservations(router: respx.MockRouter, service: OCRChunkService) -> None:
    reserve = rpc(router, "ocr_reserve_document", rpc_result(None))
    renew = rpc(router, "ocr_renew_reservations", rpc_result(2))
    release = rpc(router, "ocr_release_reservations", rpc_result(2))
    await service.reserve_document(DOCUMENT_ID, "run:laptop:1:abc")
    assert_rpc(
        reserve,
        "ocr_reserve_document",
        {"p_document_id": str(DOCUMENT_ID), "p_run_id": "run:laptop:1:abc", "p_seconds": 90.0},
    )
    assert await service.renew_reservations("run:laptop:1:abc") == 2
    assert_rpc(renew, "ocr_renew_reservations", {"p_run_id": "run:laptop:1:abc", "p_seconds": 90.0})
    assert await service.release_reservations("run:laptop:1:abc") == 2
    assert_rpc(release, "ocr_release_reservations", {"p_run_id": "run:laptop:1:abc"})


async def test_get_chunk_progress_reads_the_single_row(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    progress_row = {
        "document_id": str(DOCUMENT_ID),
        "total": 4,
        "pending": 1,
        "processing": 1,
        "completed": 1,
        "failed": 1,
        "failed_retryable": 1,
        "pages_total": 40,
        "pages_completed": 10,
        "first_started_at": STARTED,
        "last_completed_at": FINISHED,
    }
    route = rpc(router, "ocr_chunk_progress", rpc_result([progress_row]))
    progress = await service.get_chunk_progress(DOCUMENT_ID)
    assert_rpc(route, "ocr_chunk_progress", {"p_document_id": str(DOCUMENT_ID)})
    assert (progress.total, progress.completed, progress.failed_retryable) == (4, 1, 1)
    assert progress.percent == 25.0
    assert progress.is_complete is False
    assert progress.last_completed_at == datetime(2026, 11, 22, 9, 15, 40, 906002, tzinfo=UTC)


# -- outages and unexpected answers ---------------------------------------------------

KONG_502 = httpx.Response(
    502, json={"message": "An invalid response was received from the upstream server"}, headers=JSON_TYPE
)
CLOUDFLARE_520 = httpx.Response(
    520,
    text="<!DOCTYPE html><html><head><title>abcdefghijklmnopqrst.supabase.co | 520: Web server is returning an "
    "unknown error</title></head><body>Error code 520</body></html>",
    headers={"Content-Type": "text/html; charset=UTF-8"},
)


@pytest.mark.parametrize(
    "response",
    [
        pgrst_error(
            503,
            "PGRST001",
            "Database client error. Retrying the connection.",
            'connection to server at "db.abcdefghijklmnopqrst.supabase.co" (10.0.3.17), port 5432 failed: '
            "FATAL:  remaining connection slots are reserved for non-replication superuser connections",
        ),
        pgrst_error(504, "PGRST003", "Timed out acquiring connection from connection pool."),
        KONG_502,
        CLOUDFLARE_520,
        httpx.Response(429, json={"message": "API rate limit exceeded"}, headers=JSON_TYPE),
        # a SQLSTATE in a 5xx body is classified like asyncpg's: statement timeout may pass on retry
        pgrst_error(500, "57014", "canceling statement due to statement timeout"),
        pgrst_error(503, "53300", "sorry, too many clients already"),
    ],
    ids=[
        "pgrst001-503",
        "pgrst003-504",
        "kong-502",
        "cloudflare-520",
        "gateway-429",
        "57014-500",
        "53300-503",
    ],
)
async def test_outages_are_retryable(
    router: respx.MockRouter, service: OCRChunkService, response: httpx.Response
) -> None:
    rpc(router, "ocr_claim_next_chunk", response)
    with pytest.raises(RepositoryUnavailableError) as raised:
        await service.claim_next_chunk("worker-1")
    assert raised.value.retryable is True


@pytest.mark.parametrize(
    "response",
    [
        pgrst_error(
            404,
            "PGRST202",
            "Could not find the function public.ocr_claim_next_chunk(p_document_id, p_worker_id) in the schema cache",
            "Searched for the function public.ocr_claim_next_chunk with parameters p_document_id, p_worker_id or "
            "with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.",
        ),
        pgrst_error(
            401,
            "PGRST301",
            "No suitable key or wrong key type",
            "None of the keys was able to decode the JWT",
        ),
        httpx.Response(
            401,
            json={
                "message": "Invalid API key",
                "hint": "Double check your Supabase `anon` or `service_role` API key.",
            },
            headers=JSON_TYPE,
        ),
        # as asyncpg sees it: an internal error is not "try again later"
        pgrst_error(500, "XX000", "could not open relation with OID 16504"),
    ],
    ids=["pgrst202-schema-drift", "pgrst301-bad-jwt", "gateway-401-bad-key", "xx000-500"],
)
async def test_schema_and_key_errors_are_not_retryable(
    router: respx.MockRouter, service: OCRChunkService, response: httpx.Response
) -> None:
    rpc(router, "ocr_claim_next_chunk", response)
    with pytest.raises(RepositoryError) as raised:
        await service.claim_next_chunk("worker-1")
    assert not isinstance(raised.value, RepositoryUnavailableError)  # a schema drift, a key: not an outage
    assert raised.value.retryable is False


@pytest.mark.parametrize(
    "failure",
    [
        httpx.ConnectError("[Errno 111] Connection refused"),
        httpx.ReadTimeout("The read operation timed out"),
        httpx.RemoteProtocolError("Server disconnected without sending a response."),
    ],
    ids=["connect", "read-timeout", "disconnect"],
)
async def test_transport_failures_are_retryable_and_not_retried_inside(
    router: respx.MockRouter, service: OCRChunkService, failure: httpx.TransportError
) -> None:
    route = router.post(f"{REST}/rpc/ocr_get_chunk").mock(side_effect=failure)
    with pytest.raises(RepositoryUnavailableError) as raised:
        await service.get_chunk(CHUNK_ID)
    assert raised.value.retryable is True
    # postgrest-py would otherwise sleep and send it again; the caller decides about retrying
    assert route.call_count == 1


async def test_a_503_on_a_read_is_not_retried_inside(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    route = rpc(
        router,
        "ocr_get_document",
        pgrst_error(503, "PGRST002", "Could not query the database for the schema cache. Retrying."),
    )
    with pytest.raises(RepositoryUnavailableError):
        await service.get_document(DOCUMENT_ID)
    assert route.call_count == 1


@pytest.mark.parametrize(
    "body",
    [{"id": str(CHUNK_ID)}, [{"id": "not-a-uuid"}], "<html>captive portal</html>"],
    ids=["object", "bad-row", "html"],
)
async def test_an_answer_that_is_not_rows_is_a_repository_error(
    router: respx.MockRouter, service: OCRChunkService, body: Any
) -> None:
    content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    rpc(router, "ocr_claim_chunk", httpx.Response(200, content=content, headers=JSON_TYPE))
    with pytest.raises(RepositoryError) as raised:
        await service.claim_chunk(CHUNK_ID, "worker-1")  # never read as "nothing to claim"
    assert type(raised.value) is RepositoryError


async def test_refresh_document_status_rejects_an_unknown_status(
    router: respx.MockRouter, repository: SupabaseChunkRepository
) -> None:
    rpc(router, "ocr_refresh_document_status", rpc_result("archived"))
    with pytest.raises(RepositoryError):
        await repository.refresh_document_status(DOCUMENT_ID)


# -- lifecycle ------------------------------------------------------------------------


async def test_ping_reads_one_id_and_fails_when_unreachable(
    router: respx.MockRouter, repository: SupabaseChunkRepository
) -> None:
    route = router.get(f"{REST}/documents").mock(
        side_effect=[rows([{"id": str(DOCUMENT_ID)}]), httpx.ConnectError("[Errno 111] Connection refused")]
    )
    await repository.ping()
    request = sent(route)
    assert_service_role(request)
    assert request.url.params.multi_items() == [("select", "id"), ("limit", "1")]
    with pytest.raises(RepositoryUnavailableError):
        await repository.ping()


async def test_an_injected_client_gets_the_same_translation_and_is_closed(router: respx.MockRouter) -> None:
    http = httpx.AsyncClient()
    client = await acreate_client(
        SUPABASE_URL,
        SERVICE_ROLE_KEY,
        AsyncClientOptions(auto_refresh_token=False, persist_session=False, httpx_client=http),
    )
    repository = SupabaseChunkRepository(PostgrestConnector(client))
    PostgrestConnector(client)  # a second connector on the same client adds no second hook
    assert len(http.event_hooks["response"]) == 1
    route = rpc(router, "ocr_claim_next_chunk", KONG_502)
    with pytest.raises(RepositoryUnavailableError):
        await repository.claim_next("worker-1")
    assert_rpc(route, "ocr_claim_next_chunk", {"p_worker_id": "worker-1", "p_document_id": None})
    await repository.close()
    assert http.is_closed


async def test_close_closes_the_connection_pool(repository: SupabaseChunkRepository) -> None:
    session = repository.connector._client.postgrest.session
    assert not session.is_closed
    await repository.close()
    assert session.is_closed


async def test_connect_refuses_a_url_that_is_not_http() -> None:
    with pytest.raises(ConfigurationError, match="SUPABASE_URL"):
        await SupabaseChunkRepository.connect("abcdefghijklmnopqrst.supabase.co", SERVICE_ROLE_KEY)


# -- matters --------------------------------------------------------------------------


async def test_get_or_create_matter_reads_the_returned_uuid(
    router: respx.MockRouter, service: OCRChunkService
) -> None:
    route = rpc(router, "ocr_get_or_create_matter", rpc_result(str(MATTER_ID)))
    assert await service.get_or_create_matter("chunk-ocr") == MATTER_ID
    assert_rpc(route, "ocr_get_or_create_matter", {"p_name": "chunk-ocr"})


@pytest.mark.parametrize("value", [None, "not-a-uuid", [str(MATTER_ID)]], ids=["null", "text", "array"])
async def test_get_or_create_matter_rejects_an_answer_that_is_not_a_uuid(
    router: respx.MockRouter, repository: SupabaseChunkRepository, value: Any
) -> None:
    rpc(router, "ocr_get_or_create_matter", rpc_result(value))
    with pytest.raises(RepositoryError) as raised:
        await repository.get_or_create_matter("chunk-ocr")
    assert type(raised.value) is RepositoryError


async def test_is_matter_member_asks_the_sql_function(
    router: respx.MockRouter, repository: SupabaseChunkRepository
) -> None:
    user_id = UUID("3e9d5c1b-8a7f-4d2e-b6c5-0a1f2e3d4c5b")
    route = rpc(router, "ocr_user_is_matter_member", rpc_result(True))
    assert await repository.is_matter_member(MATTER_ID, user_id) is True
    assert_rpc(route, "ocr_user_is_matter_member", {"p_matter_id": str(MATTER_ID), "p_user_id": str(user_id)})
    route.mock(return_value=rpc_result(False))
    assert await repository.is_matter_member(MATTER_ID, user_id) is False
    route.mock(return_value=rpc_result(None))  # never read as "not a member" nor as "member"
    with pytest.raises(RepositoryError):
        await repository.is_matter_member(MATTER_ID, user_id)
