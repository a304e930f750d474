"""Uploads: `POST /matters/{matterId}/documents` (and the older `POST /documents`).

Authentication and the caller's right to write into the matter are checked
before the body is read (see app.api.uploads); the file is streamed to a
temporary file and refused at MAX_UPLOAD_BYTES.
"""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from pathlib import Path as FilePath
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Path, Request, status
from starlette.datastructures import QueryParams

from app.api.deps import CurrentUser, DocumentsDep, SettingsDep, require_writer
from app.api.schemas import StartedView
from app.api.uploads import (
    MalformedUploadError,
    ReceivedUpload,
    UploadSlots,
    chunk_pages_option,
    options_once,
    receive_pdf,
)
from app.core.config import Settings
from app.core.filenames import display_filename
from app.core.languages import LANGUAGE_MAX, LANGUAGE_PATTERN
from app.services.documents import Documents

router = APIRouter(tags=["documents"])

_OPTIONS = "file, and optionally engine, language, chunkPages and start (form fields or query parameters)"


def _body(*, with_matter: bool) -> dict[str, object]:
    """The body in the OpenAPI schema (the route reads it itself, streaming)."""
    fields: dict[str, object] = {
        "file": {"type": "string", "format": "binary", "description": "the PDF"},
        "engine": {"type": "string", "description": "OCR engine (default: the API's OCR_ENGINE)"},
        "language": {
            "type": "string",
            "maxLength": LANGUAGE_MAX,
            "pattern": LANGUAGE_PATTERN,
            "description": "tesseract's codes joined by +: rus, eng+deu (default: OCR_LANGUAGE)",
        },
        "chunkPages": {"type": "integer", "minimum": 1, "maximum": 1000},
        "start": {"type": "boolean", "default": True, "description": "false: register only"},
    }
    required = ["file"]
    if with_matter:
        fields = {"matterId": {"type": "string", "format": "uuid"}, **fields}
        required.insert(0, "matterId")
    form = {"schema": {"type": "object", "properties": fields, "required": required}}
    pdf = {"schema": {"type": "string", "format": "binary"}}
    content = (
        {"multipart/form-data": form}
        if with_matter
        else {"multipart/form-data": form, "application/pdf": pdf}
    )
    return {"requestBody": {"required": True, "content": content}}


@router.post(
    "/matters/{matter_id}/documents",
    status_code=status.HTTP_201_CREATED,
    response_model=StartedView,
    openapi_extra=_body(with_matter=False),
)
async def upload_into_matter(
    request: Request,
    matter_id: Annotated[str, Path(description="the matter the document belongs to")],
    user: CurrentUser,
    documents: DocumentsDep,
    settings: SettingsDep,
) -> StartedView:
    """Upload a PDF into a matter and (unless start=false) start its OCR.

    Body: multipart/form-data with the PDF in `file` (optional fields `engine`,
    `language`, `chunkPages`, `start`), or the PDF itself as application/pdf (options and
    `filename` as query parameters). 401, 404 and 403 come before the body is read.
    """
    matter = await require_writer(matter_id, user, documents)
    return await _receive_and_start(request, user, matter, documents, settings)


@router.post(
    "/documents",
    status_code=status.HTTP_201_CREATED,
    response_model=StartedView,
    openapi_extra=_body(with_matter=True),
)
async def upload_document(
    request: Request,
    user: CurrentUser,
    documents: DocumentsDep,
    settings: SettingsDep,
) -> StartedView:
    """The older form of the upload, with the matter in a `matterId` form field (or query
    parameter). Send `matterId` before `file`: it is checked as soon as it arrives, and a file
    that comes first is 422 (it would be received for a caller not yet known to write anywhere)."""
    matter = None
    if "matterId" in request.query_params:
        matter = await require_writer(request.query_params["matterId"], user, documents)
    return await _receive_and_start(request, user, matter, documents, settings)


async def _receive_and_start(
    request: Request,
    user: UUID,
    matter: UUID | None,
    documents: Documents,
    settings: Settings,
) -> StartedView:
    """Receive the body and start the document, holding an upload slot from the first byte of
    the file. Without a matter yet, a `matterId` form field is checked the moment it has arrived,
    and a file that begins before it is refused: until the caller is known to write into a matter,
    it holds no slot and no disk (a caller who may write nowhere held slots as long as it sent)."""
    found = matter
    slot, holding = ExitStack(), False

    async def check(name: str, value: str) -> None:
        nonlocal found
        if name == "matterId" and found is None:
            found = await require_writer(value, user, documents)

    async def file_begins() -> None:
        nonlocal holding
        if found is None:
            raise MalformedUploadError("matterId: send it before `file` (or as a query parameter)")
        if not holding:
            slot.enter_context(_slot(request).taken_by(user))
            holding = True

    with slot, tempfile.TemporaryDirectory(prefix="chunk-ocr-upload-") as tmp:
        if found is not None:  # known before the body: the slot from its first byte
            await file_begins()
        target = FilePath(tmp) / "upload.pdf"
        received = await receive_pdf(
            request,
            target,
            settings.max_upload_bytes,
            idle_seconds=settings.upload_idle_seconds,
            on_field=check,
            on_file=None if matter is not None else file_begins,
        )
        if found is None:
            raise MalformedUploadError("matterId: field required")
        await file_begins()  # an empty file part: no byte began it
        return await _start(received, found, request.query_params, documents, settings)


def _slot(request: Request) -> UploadSlots:
    slots: UploadSlots = request.app.state.upload_slots
    return slots


async def _start(
    received: ReceivedUpload,
    matter: UUID,
    query: QueryParams,
    documents: Documents,
    settings: Settings,
) -> StartedView:
    options = options_once([*query.multi_items(), *received.fields.items()])
    unknown = set(options) - {"engine", "language", "chunkPages", "start", "matterId", "filename"}
    if unknown:
        raise MalformedUploadError(f"unknown field {sorted(unknown)[0]!r}; an upload takes {_OPTIONS}")
    engine = await documents.offered_engine(options.get("engine") or settings.ocr_engine)
    language = await documents.offered_language(engine, options.get("language") or settings.ocr_language)
    started = await documents.submit(
        received.path,
        matter_id=matter,
        engine=engine,
        language=language,
        chunk_pages=chunk_pages_option(options.get("chunkPages")),
        filename=display_filename(received.filename),
        keep_source=True,
        start=_flag(options.get("start", "true")),
    )
    return StartedView.of(started)


def _flag(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise MalformedUploadError("start: must be true or false")
