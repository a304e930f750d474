"""Document and OCR routes: parse the request, call the documents service, present the answer."""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Header, Request, Response, status
from fastapi.responses import FileResponse, RedirectResponse

from app.api.deps import AccessibleDocument, ActableDocument, CurrentUser, DocumentsDep, SettingsDep
from app.api.schemas import ChunkView, ProgressView, ResultView, RetryView, StartedView
from app.api.scratch_file import ScratchFileResponse
from app.api.uploads import chunk_pages_option, receive_options

router = APIRouter(prefix="/documents", tags=["documents"])


_START_BODY = {
    "requestBody": {
        "required": False,
        "content": {
            media: {
                "schema": {
                    "type": "object",
                    "properties": {"chunkPages": {"type": "integer", "minimum": 1, "maximum": 1000}},
                }
            }
            for media in ("application/x-www-form-urlencoded", "multipart/form-data")
        },
    }
}


@router.post(
    "/{document_id}/ocr",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=StartedView,
    openapi_extra=_START_BODY,
)
async def start_ocr(
    request: Request, document: ActableDocument, documents: DocumentsDep, settings: SettingsDep
) -> StartedView:
    """Start OCR of a document uploaded with start=false (once: a second start is 409).

    Optional `chunkPages`, a form field or query parameter. The route declares no body, so the
    token and the caller's rights are checked before a byte of it is read (a form parameter had
    FastAPI read and spool the whole body, of any size, before answering 401)."""
    options = await receive_options(request, {"chunkPages"}, idle_seconds=settings.upload_idle_seconds)
    started = await documents.start(document, chunk_pages=chunk_pages_option(options.get("chunkPages")))
    return StartedView.of(started)


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
    if if_none_match is not None and _none_match(if_none_match, etag):
        return Response(status_code=status.HTTP_304_NOT_MODIFIED, headers=headers)
    response.headers.update(headers)
    return view


def _none_match(header: str, etag: str) -> bool:
    """Whether If-None-Match names the current ETag, by weak comparison (RFC 9110 13.1.2: `W/`
    aside), or is `*` (any current representation): a client that sent back the tag its cache
    keeps as weak, or `*`, had a 200 every time."""
    tags = {tag.strip().removeprefix("W/") for tag in header.split(",")}
    return "*" in tags or etag.removeprefix("W/") in tags


@router.get("/{document_id}/ocr/chunks", response_model=list[ChunkView])
async def chunks(document: AccessibleDocument, documents: DocumentsDep) -> list[ChunkView]:
    return [ChunkView.of(c) for c in await documents.chunks(document)]


@router.post("/{document_id}/ocr/retry", response_model=RetryView)
async def retry(document: ActableDocument, documents: DocumentsDep) -> RetryView:
    """Send every failed chunk of the document back to the queue, now (a person decided)."""
    retried = await documents.retry(document.id)
    return RetryView(document_id=retried.document_id, retried=len(retried.chunks))


@router.get("/{document_id}/ocr/result", response_model=ResultView)
async def result(document: AccessibleDocument, documents: DocumentsDep, response: Response) -> ResultView:
    """The merged result, once the document is completed (its checksum verified on the way).

    A merged result that went missing or no longer verifies is rebuilt from the
    verified chunk results; if a chunk must be OCR'd again first, 503
    result_rebuilding until a worker has done it.
    """
    response.headers["Cache-Control"] = "private, no-store"  # a document's text: no shared or kept copy
    return ResultView.of(await documents.result(document))


# Long enough for a slow client to start a large download; short enough not to be a standing link.
SIGNED_URL_SECONDS = 300


@router.get(
    "/{document_id}/ocr/result.pdf",
    response_class=FileResponse,
    responses={
        200: {"content": {"application/pdf": {}}, "description": "The searchable PDF"},
        307: {"description": "A signed Supabase Storage URL for the searchable PDF"},
    },
)
async def result_pdf(document: AccessibleDocument, documents: DocumentsDep) -> Response:
    """The searchable PDF: the original pages with an invisible text layer over each OCR'd word.

    Where Supabase Storage holds it, a redirect to a signed URL valid for five minutes, with the
    file's SHA-256 in `X-Checksum-SHA256` (finalize verified it when it stored it); otherwise the
    file itself, verified against that checksum before it is sent. 404 `no_searchable_pdf` when no
    page needed OCR (the original's own text layer is the text); 503 `result_rebuilding` while a
    file that went missing or stopped verifying is grafted again.
    """
    stored = await documents.searchable_pdf(document)
    # a document's pages and text, as the JSON result: no shared or kept copy (nor of the link to it)
    headers = {"X-Checksum-SHA256": stored.sha256, "Cache-Control": "private, no-store"}
    url = await documents.signed_url(stored, SIGNED_URL_SECONDS)
    if url is not None:
        return RedirectResponse(url, status_code=status.HTTP_307_TEMPORARY_REDIRECT, headers=headers)
    # The file's own checksum is its validator: the copy's size and time (Starlette's default)
    # changed at every request, so a download resumed with If-Range was sent whole again.
    headers["ETag"] = f'"{stored.sha256}"'
    filename = f"{Path(document.filename).stem}.ocr.pdf"
    local = await documents.searchable_pdf_local_file(document, stored)
    if local is not None:  # the store's own file, verified: no copy per request
        return ScratchFileResponse(
            local, scratch=None, media_type="application/pdf", filename=filename, headers=headers
        )
    scratch = Path(tempfile.mkdtemp(prefix="chunk-ocr-result-"))
    try:
        await documents.searchable_pdf_file(document, stored, scratch / "result.pdf")
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return ScratchFileResponse(
        scratch / "result.pdf",
        scratch=scratch,
        media_type="application/pdf",
        filename=filename,
        headers=headers,
    )
