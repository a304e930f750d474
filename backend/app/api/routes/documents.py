"""Document and OCR routes: parse the request, call the documents service, present the answer."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Form, Header, Response, status

from app.api.deps import AccessibleDocument, ActableDocument, CurrentUser, DocumentsDep
from app.api.schemas import ChunkView, DocumentView, ProgressView, ResultView, RetryView, StartedView

router = APIRouter(prefix="/documents", tags=["documents"])


@router.post("/{document_id}/ocr", status_code=status.HTTP_202_ACCEPTED, response_model=StartedView)
async def start_ocr(
    document: ActableDocument,
    documents: DocumentsDep,
    chunk_pages: Annotated[int | None, Form(alias="chunkPages", ge=1, le=1000)] = None,
) -> StartedView:
    """Start OCR of a document uploaded with start=false (once: a second start is 409)."""
    started = await documents.start(document, chunk_pages=chunk_pages)
    return StartedView(document=DocumentView.of(started.document), chunks=len(started.chunks))


@router.get("/{document_id}/ocr/progress", response_model=ProgressView)
async def progress(
    document_id: str,
    user: CurrentUser,
    documents: DocumentsDep,
    response: Response,
    if_none_match: Annotated[str | None, Header()] = None,
) -> ProgressView | Response:
    """Progress for polling. Send the last ETag as If-None-Match: 304 while nothing changed."""
    document, chunk_progress = await documents.progress(document_id, user)  # one round trip
    view = ProgressView.of(document, chunk_progress, datetime.now(UTC))
    etag = view.etag()
    headers = {"ETag": etag, "Cache-Control": "private, no-cache"}
    if if_none_match is not None and etag in {t.strip() for t in if_none_match.split(",")}:
        return Response(status_code=status.HTTP_304_NOT_MODIFIED, headers=headers)
    response.headers.update(headers)
    return view


@router.get("/{document_id}/ocr/chunks", response_model=list[ChunkView])
async def chunks(document: AccessibleDocument, documents: DocumentsDep) -> list[ChunkView]:
    return [ChunkView.of(c) for c in await documents.chunks(document)]


@router.post("/{document_id}/ocr/retry", response_model=RetryView)
async def retry(document: ActableDocument, documents: DocumentsDep) -> RetryView:
    """Send every failed chunk of the document back to the queue, now (a person decided)."""
    retried = await documents.retry(document.id)
    return RetryView(document_id=retried.document_id, retried=len(retried.chunks))


@router.get("/{document_id}/ocr/result", response_model=ResultView)
async def result(document: AccessibleDocument, documents: DocumentsDep) -> ResultView:
    """The merged result, once the document is completed (its checksum verified on the way).

    A merged result that went missing or no longer verifies is rebuilt from the
    verified chunk results; if a chunk must be OCR'd again first, 503
    result_rebuilding until a worker has done it.
    """
    return ResultView.of(await documents.result(document))
