"""Document and OCR routes: thin over OCRChunkService and the planner."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Form, Header, Response, status

from app.api.deps import AccessibleDocument, ActableDocument, CurrentUser, QueueDep, ServiceDep, StoreDep
from app.api.schemas import ChunkView, DocumentView, ProgressView, ResultView, RetryView, StartedView
from app.core.errors import InvalidInputError, QueueUnavailableError
from app.engines.registry import available_engines
from app.models.document import Document
from app.services.merge import document_result
from app.services.planner import plan_document
from app.services.queue import JobQueue
from app.services.recovery import retry_failed

router = APIRouter(prefix="/documents", tags=["documents"])
_READ_BLOCK = 1 << 20


@router.post("/{document_id}/ocr", status_code=status.HTTP_202_ACCEPTED, response_model=StartedView)
async def start_ocr(
    document: ActableDocument,
    service: ServiceDep,
    store: StoreDep,
    queue: QueueDep,
    chunk_pages: Annotated[int | None, Form(alias="chunkPages", ge=1, le=1000)] = None,
) -> StartedView:
    """Start OCR of a document uploaded with start=false (once: a second start is 409)."""
    await offered_engine(queue, document.engine)
    chunks = await plan_document(service, store, queue, document, chunk_pages=chunk_pages)
    return StartedView(document=DocumentView.of(await service.get_document(document.id)), chunks=len(chunks))


@router.get("/{document_id}/ocr/progress", response_model=ProgressView)
async def progress(
    document_id: str,
    user: CurrentUser,
    service: ServiceDep,
    response: Response,
    if_none_match: Annotated[str | None, Header()] = None,
) -> ProgressView | Response:
    """Progress for polling. Send the last ETag as If-None-Match: 304 while nothing changed."""
    document, chunk_progress = await service.get_progress_for_user(document_id, user)  # one round trip
    view = ProgressView.of(document, chunk_progress, datetime.now(UTC))
    etag = view.etag()
    headers = {"ETag": etag, "Cache-Control": "private, no-cache"}
    if if_none_match is not None and etag in {t.strip() for t in if_none_match.split(",")}:
        return Response(status_code=status.HTTP_304_NOT_MODIFIED, headers=headers)
    response.headers.update(headers)
    return view


@router.get("/{document_id}/ocr/chunks", response_model=list[ChunkView])
async def chunks(document: AccessibleDocument, service: ServiceDep) -> list[ChunkView]:
    return [ChunkView.of(c) for c in await service.get_chunks_by_document(document.id)]


@router.post("/{document_id}/ocr/retry", response_model=RetryView)
async def retry(document: ActableDocument, service: ServiceDep, queue: QueueDep) -> RetryView:
    """Send every failed chunk of the document back to the queue, now (a person decided)."""
    retried = await retry_failed(service, queue, document.id, force=True)
    return RetryView(document_id=document.id, retried=len(retried))


@router.get("/{document_id}/ocr/result", response_model=ResultView)
async def result(
    document: AccessibleDocument, service: ServiceDep, store: StoreDep, queue: QueueDep
) -> ResultView:
    """The merged result, once the document is completed (its checksum verified on the way).

    A merged result that went missing or no longer verifies is rebuilt from the
    verified chunk results; if a chunk must be OCR'd again first, 503
    result_rebuilding until a worker has done it.
    """
    return ResultView.of(await document_result(service, store, queue, document))


class EngineNotOfferedError(InvalidInputError):
    """No worker can run the engine asked for (unknown, or no worker has what it needs)."""

    code = "engine_unavailable"


async def offered_engine(queue: JobQueue, name: str) -> str:
    """The engine, if it exists and (as far as the workers have said) some worker can run it."""
    if name not in available_engines():
        raise EngineNotOfferedError(
            f"unknown OCR engine {name!r}; choose one of {', '.join(available_engines())}"
        )
    try:
        offered = await queue.engine_offered(name)
    except QueueUnavailableError:
        offered = None  # cannot know; the chunks wait in the database until a worker takes them
    if offered is False:
        raise EngineNotOfferedError(
            f"no worker can run the OCR engine {name!r} (credentials or binary missing)"
        )
    return name


__all__ = ["Document", "router"]
