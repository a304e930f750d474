"""The Supabase repository's atomic start and finalize lease: the RPCs sent, the answers read.

Same stand-in as test_supabase_repository.py: respx answers at Supabase's URLs
with PostgREST's bodies, and the assertions are on what supabase-py sent.
"""

from __future__ import annotations

import pytest
import respx

from app.core.errors import LeaseLostError, OCRAlreadyStartedError
from app.models.document import DocumentStatus, FinalizeLease
from app.models.ocr_chunk import ChunkRange, ChunkStatus
from app.services.ocr_chunk_service import OCRChunkService
from tests.unit.db.test_supabase_repository import (  # noqa: F401 (fixtures: router, repository, service)
    BEAT,
    CHUNK_ID,
    DOCUMENT_ID,
    FINISHED,
    INPUT_SHA,
    MATTER_ID,
    REST,
    RESULT_SHA,
    assert_rpc,
    chunk_row,
    document_row,
    pgrst_error,
    repository,
    router,
    rows,
    rpc,
    rpc_result,
    service,
)

MERGED_PATH = f"{MATTER_ID}/{DOCUMENT_ID}/result.json"
PLAN_INPUT = f"{MATTER_ID}/{DOCUMENT_ID}/input/3f9a0c1e/00000.pdf"


def finalize_lease(attempt: int = 1) -> FinalizeLease:
    return FinalizeLease(document_id=DOCUMENT_ID, worker_id="worker-1", attempt=attempt)


async def test_start_document_sends_one_rpc_and_a_second_start_is_refused(
    router: respx.MockRouter,  # noqa: F811
    service: OCRChunkService,  # noqa: F811
) -> None:
    rpc(router, "ocr_get_document", rpc_result([document_row()]))
    route = rpc(
        router,
        "ocr_start_document",
        rpc_result([chunk_row(input_storage_path=PLAN_INPUT)]),
    )
    ranges = [
        ChunkRange(
            chunk_index=0, page_start=1, page_end=10, input_storage_path=PLAN_INPUT, input_checksum=INPUT_SHA
        )
    ]
    (chunk,) = await service.start_document(DOCUMENT_ID, ranges)
    assert_rpc(
        route,
        "ocr_start_document",
        {
            "p_document_id": str(DOCUMENT_ID),
            "p_chunks": [
                {
                    "chunk_index": 0,
                    "page_start": 1,
                    "page_end": 10,
                    "input_storage_path": PLAN_INPUT,
                    "input_checksum": INPUT_SHA,
                }
            ],
            "p_max_attempts": 3,
        },
    )
    assert (chunk.id, chunk.status, chunk.engine) == (CHUNK_ID, ChunkStatus.PENDING, "auto")

    route.mock(return_value=pgrst_error(400, "OC002", f"OCR of document {DOCUMENT_ID} has already started"))
    with pytest.raises(OCRAlreadyStartedError) as refused:
        await service.start_document(DOCUMENT_ID, ranges)
    assert (refused.value.code, refused.value.retryable) == ("ocr_already_started", False)


async def test_claim_finalize_returns_the_lease_or_none(
    router: respx.MockRouter,  # noqa: F811
    service: OCRChunkService,  # noqa: F811
) -> None:
    held = document_row(
        ocr_status="processing", finalize_worker_id="worker-1", finalize_attempt=2, finalize_heartbeat_at=BEAT
    )
    route = rpc(router, "ocr_claim_finalize", rpc_result([held]))
    claimed = await service.claim_finalize(DOCUMENT_ID, "worker-1")
    assert_rpc(
        route,
        "ocr_claim_finalize",
        {"p_document_id": str(DOCUMENT_ID), "p_worker_id": "worker-1", "p_lease_seconds": 90.0},
    )
    assert claimed is not None
    assert claimed.finalize_lease == finalize_lease(attempt=2)
    # the lease is internal: not part of the document as the API shows it
    assert "finalizeWorkerId" not in claimed.model_dump(by_alias=True)

    route.mock(return_value=rpc_result([]))  # a live merge holds it, or chunks remain
    assert await service.claim_finalize(DOCUMENT_ID, "worker-2") is None


async def test_heartbeat_complete_and_release_present_the_lease(
    router: respx.MockRouter,  # noqa: F811
    service: OCRChunkService,  # noqa: F811
) -> None:
    beat = rpc(router, "ocr_heartbeat_finalize", rpc_result(True))
    assert await service.heartbeat_finalize(finalize_lease()) is True
    assert_rpc(
        beat,
        "ocr_heartbeat_finalize",
        {"p_document_id": str(DOCUMENT_ID), "p_worker_id": "worker-1", "p_attempt": 1},
    )

    done = document_row(
        ocr_status="completed",
        result_storage_path=MERGED_PATH,
        result_checksum=RESULT_SHA,
        ocr_completed_at=FINISHED,
        pages_failed=2,
    )
    complete = rpc(router, "ocr_complete_finalize", rpc_result([done]))
    document = await service.complete_finalize(finalize_lease(), MERGED_PATH, RESULT_SHA, pages_failed=2)
    assert_rpc(
        complete,
        "ocr_complete_finalize",
        {
            "p_document_id": str(DOCUMENT_ID),
            "p_worker_id": "worker-1",
            "p_attempt": 1,
            "p_result_storage_path": MERGED_PATH,
            "p_result_checksum": RESULT_SHA,
            "p_pages_failed": 2,
        },
    )
    assert (document.ocr_status, document.result_checksum) == (DocumentStatus.COMPLETED, RESULT_SHA)
    assert (document.pages_failed, document.progress_status.value) == (2, "completed_with_errors")
    complete.mock(return_value=rpc_result([]))
    with pytest.raises(LeaseLostError):
        await service.complete_finalize(finalize_lease(), MERGED_PATH, RESULT_SHA)

    release = rpc(router, "ocr_release_finalize", rpc_result(False))
    assert await service.release_finalize(finalize_lease(), failed_message="pages 3-4 missing") is False
    assert_rpc(
        release,
        "ocr_release_finalize",
        {
            "p_document_id": str(DOCUMENT_ID),
            "p_worker_id": "worker-1",
            "p_attempt": 1,
            "p_failed_message": "pages 3-4 missing",
            "p_deferred_message": None,
        },
    )
