"""Document and OCR routes: thin over OCRChunkService and the planner."""

from __future__ import annotations

import asyncio
import tempfile
from datetime import UTC, datetime
from pathlib import Path as FilePath
from typing import Annotated

from fastapi import APIRouter, File, Form, Header, Request, Response, UploadFile, status

from app.api.deps import AccessibleDocument, CurrentUser, QueueDep, ServiceDep, SettingsDep, StoreDep
from app.api.errors import PayloadTooLargeError
from app.api.schemas import ProgressView, ResultView, RetryView, StartedView
from app.core.errors import ConflictError, InvalidInputError
from app.engines.registry import available_engines
from app.models.document import Document, DocumentStatus
from app.models.ocr_chunk import DocumentOCRChunk
from app.models.results import MergedResult
from app.services.planner import plan_document, start_document
from app.storage.base import get_verified

router = APIRouter(prefix="/documents", tags=["documents"])
_READ_BLOCK = 1 << 20


@router.post("", status_code=status.HTTP_201_CREATED, response_model=StartedView)
async def upload_document(
    request: Request,
    user: CurrentUser,
    service: ServiceDep,
    store: StoreDep,
    queue: QueueDep,
    settings: SettingsDep,
    file: Annotated[UploadFile, File(description="the PDF")],
    matter_id: Annotated[str, Form(alias="matterId")],
    engine: Annotated[str | None, Form()] = None,
    chunk_pages: Annotated[int | None, Form(alias="chunkPages", ge=1, le=1000)] = None,
    start: Annotated[bool, Form()] = True,
) -> StartedView:
    """Upload a PDF into a matter and (unless start=false) start its OCR."""
    matter = await service.check_matter_access(matter_id, user)
    engine = _engine(engine or settings.ocr_engine)
    with tempfile.TemporaryDirectory(prefix="chunk-ocr-upload-") as tmp:
        path = FilePath(tmp) / "upload.pdf"
        await _save(file, path, settings.max_upload_bytes, request.headers.get("content-length"))
        started = await start_document(
            service,
            store,
            queue,
            path,
            matter_id=matter,
            engine=engine,
            chunk_pages=chunk_pages,
            filename=_filename(file.filename),
            keep_source=True,
            plan=start,
        )
    document = await service.get_document(started.document.id)
    return StartedView(document=document, chunks=len(started.chunks))


@router.post("/{document_id}/ocr", status_code=status.HTTP_202_ACCEPTED, response_model=StartedView)
async def start_ocr(
    document: AccessibleDocument,
    service: ServiceDep,
    store: StoreDep,
    queue: QueueDep,
    chunk_pages: Annotated[int | None, Form(alias="chunkPages", ge=1, le=1000)] = None,
) -> StartedView:
    """Start OCR of a document uploaded with start=false."""
    chunks = await plan_document(service, store, queue, document, chunk_pages=chunk_pages)
    return StartedView(document=await service.get_document(document.id), chunks=len(chunks))


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


@router.get("/{document_id}/ocr/chunks", response_model=list[DocumentOCRChunk])
async def chunks(document: AccessibleDocument, service: ServiceDep) -> list[DocumentOCRChunk]:
    return await service.get_chunks_by_document(document.id)


@router.post("/{document_id}/ocr/retry", response_model=RetryView)
async def retry(document: AccessibleDocument, service: ServiceDep, queue: QueueDep) -> RetryView:
    """Send every failed chunk of the document back to the queue, now (a person decided)."""
    retried = await service.retry_failed_chunks(document.id, force=True)
    for chunk in retried:
        await queue.enqueue_chunk(chunk.id, chunk.attempt_count + 1)
    return RetryView(document_id=document.id, retried=len(retried))


@router.get("/{document_id}/ocr/result", response_model=ResultView)
async def result(document: AccessibleDocument, store: StoreDep) -> ResultView:
    """The merged result, once the document is completed (its checksum verified on the way)."""
    if document.ocr_status is not DocumentStatus.COMPLETED:
        raise ResultNotReadyError(f"document {document.id} is {document.ocr_status.value}, not completed")
    assert document.result_storage_path is not None
    assert document.result_checksum is not None
    merged = MergedResult.model_validate_json(
        await get_verified(store, document.result_storage_path, document.result_checksum)
    )
    return ResultView.of(merged)


class ResultNotReadyError(ConflictError):
    code = "result_not_ready"


def _engine(name: str) -> str:
    if name not in available_engines():
        raise InvalidInputError(
            f"unknown OCR engine {name!r}; choose one of {', '.join(available_engines())}"
        )
    return name


def _filename(name: str | None) -> str:
    cleaned = FilePath(name or "upload.pdf").name[:255]
    return cleaned or "upload.pdf"


async def _save(upload: UploadFile, path: FilePath, limit: int, declared: str | None) -> None:
    """Copy the upload to path, refusing it as soon as it is over the limit."""
    if declared is not None and declared.isdigit() and int(declared) > limit + 1024 * 1024:
        raise PayloadTooLargeError(f"the upload is larger than the {limit} byte limit")
    size = 0
    with path.open("wb") as out:
        while block := await upload.read(_READ_BLOCK):
            size += len(block)
            if size > limit:
                raise PayloadTooLargeError(f"the upload is larger than the {limit} byte limit")
            await asyncio.to_thread(out.write, block)


__all__ = ["Document", "router"]
