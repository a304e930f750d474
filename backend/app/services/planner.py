"""Start OCR of a PDF: validate, register, plan, cut, upload, create chunk rows, enqueue.

Each chunk's pages are cut once here into their own small PDF, so a worker
downloads only its slice. Every start cuts under its own plan id, and the
chunk rows are created together with the document's move to processing in one
atomic statement after every input is uploaded. So concurrent starts of one
document give one plan: the others get OCRAlreadyStartedError and remove only
the inputs they uploaded themselves. If anything fails before the rows exist,
this start's uploads (and, for a new upload, the document row) are removed.

The event loop only awaits: every PDF step (inspecting, repairing a damaged
file, cutting) runs in a worker thread, so an API process planning a large
or damaged file goes on serving other requests. A file with more pages than
MAX_PAGES_PER_DOCUMENT is refused (TooManyPagesError, 422 `too_many_pages`)
before anything is written.
"""

from __future__ import annotations

import asyncio
import secrets
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

from app.core.errors import InvalidInputError, OCRAlreadyStartedError
from app.core.languages import DEFAULT_LANGUAGE
from app.core.logging import get_logger
from app.engines.specs import engine_spec
from app.models.document import Document, DocumentCreate, DocumentStatus
from app.models.ocr_chunk import ChunkRange, DocumentOCRChunk
from app.pdf.inspect import PdfInfo, inspect_pdf
from app.pdf.plan import plan_chunks
from app.pdf.split import split_pdf_to_files
from app.services.ocr_chunk_service import OCRChunkService
from app.services.queue import JobQueue, enqueue_next_attempts
from app.storage.base import BlobStore, get_verified_file
from app.storage.paths import chunk_input_path, source_pdf_path

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class StartedDocument:
    document: Document
    chunks: list[DocumentOCRChunk]
    info: PdfInfo


async def start_document(
    service: OCRChunkService,
    store: BlobStore,
    queue: JobQueue,
    pdf_path: Path,
    *,
    matter_id: UUID,
    engine: str,
    language: str = DEFAULT_LANGUAGE,
    chunk_pages: int | None = None,
    workers: int = 1,
    filename: str | None = None,
    keep_source: bool = False,
    plan: bool = True,
) -> StartedDocument:
    """Register a PDF as a document and (with plan) create and enqueue its chunks.

    keep_source stores the original PDF in the bucket (source.pdf), so that a
    document registered without plan can be planned later by plan_document.
    """
    started = time.perf_counter()
    info = await _inspect(service, pdf_path)  # bad input raises here, before any write
    document_id = uuid.uuid4()
    uploaded: list[str] = []
    document: Document | None = None
    try:
        source = str(pdf_path)
        # The searchable PDF is grafted on the original at finalize, so it is kept whenever that is on.
        if keep_source or service.settings.searchable_pdf:
            # streamed: an upload of MAX_UPLOAD_BYTES is never held whole in the API's memory
            source_object = source_pdf_path(matter_id, document_id)
            stored_source = await store.put_file(source_object, pdf_path, "application/pdf")
            uploaded.append(stored_source.path)
            source = stored_source.path
        ranges = (
            await _cut_and_upload(
                store, pdf_path, matter_id, document_id, info, engine, chunk_pages, workers, uploaded
            )
            if plan
            else []
        )
        document = await service.create_document(
            DocumentCreate(
                id=document_id,
                matter_id=matter_id,
                filename=filename or pdf_path.name,
                source_path=source,
                page_count=info.page_count,
                file_sha256=info.sha256,
                engine=engine,
                language=language,
            )
        )
        chunks = await service.start_document(document.id, ranges) if plan else []
    except BaseException:
        await _undo(service, store, document, uploaded)
        raise
    await enqueue_next_attempts(queue, chunks)
    log.info(
        "document_started" if plan else "document_registered",
        document_id=str(document_id),
        matter_id=str(matter_id),
        pages=info.page_count,
        chunks=len(chunks),
        engine=engine,
        language=language,
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
    return StartedDocument(document, chunks, info)


async def plan_document(
    service: OCRChunkService,
    store: BlobStore,
    queue: JobQueue,
    document: Document,
    *,
    chunk_pages: int | None = None,
    workers: int = 1,
) -> StartedDocument:
    """Plan, cut and enqueue a registered document from its stored source PDF.

    OCRAlreadyStartedError if its OCR has started, checked first (cheap) and
    again atomically when the chunk rows are created (a start that raced us).
    """
    if document.ocr_status is not DocumentStatus.PENDING or await service.get_chunks_by_document(document.id):
        raise OCRAlreadyStartedError(
            f"OCR of document {document.id} has already started", document_id=document.id
        )
    if not document.source_path or document.source_path != source_pdf_path(document.matter_id, document.id):
        raise InvalidInputError(f"document {document.id} has no stored source PDF to plan from")
    uploaded: list[str] = []
    with tempfile.TemporaryDirectory(prefix="chunk-ocr-plan-") as tmp:
        pdf_path = Path(tmp) / "source.pdf"
        # streamed to disk and verified: a 200 MiB source is never held in memory
        await get_verified_file(store, document.source_path, document.file_sha256, pdf_path)
        info = await _inspect(service, pdf_path)
        try:
            ranges = await _cut_and_upload(
                store,
                pdf_path,
                document.matter_id,
                document.id,
                info,
                document.engine,
                chunk_pages,
                workers,
                uploaded,
            )
            chunks = await service.start_document(document.id, ranges)
        except BaseException:
            await _undo(service, store, None, uploaded)  # only what this start uploaded
            raise
    await enqueue_next_attempts(queue, chunks)
    log.info("document_planned", document_id=str(document.id), chunks=len(chunks))
    return StartedDocument(document, chunks, info)


async def _inspect(service: OCRChunkService, pdf_path: Path) -> PdfInfo:
    """inspect_pdf in a worker thread, refusing more pages than MAX_PAGES_PER_DOCUMENT."""
    return await asyncio.to_thread(inspect_pdf, pdf_path, max_pages=service.settings.max_pages_per_document)


async def _cut_and_upload(
    store: BlobStore,
    pdf_path: Path,
    matter_id: UUID,
    document_id: UUID,
    info: PdfInfo,
    engine: str,
    chunk_pages: int | None,
    workers: int,
    uploaded: list[str],
) -> list[ChunkRange]:
    ranges: list[ChunkRange] = []
    plan_id = secrets.token_hex(4)  # this start's own input objects (see chunk_input_path)
    plan = plan_chunks(info.page_count, chunk_pages, workers, engine_spec(engine).pages_per_request)
    with tempfile.TemporaryDirectory(prefix="chunk-ocr-cut-") as scratch:
        # a generator: nothing runs until next(), in a thread; one chunk's file on disk at a time
        pieces = split_pdf_to_files(pdf_path, plan, Path(scratch))
        while (piece := await asyncio.to_thread(next, pieces, None)) is not None:
            page_range, piece_path = piece
            stored = await store.put_file(
                chunk_input_path(matter_id, document_id, plan_id, page_range.chunk_index),
                piece_path,
                "application/pdf",
            )
            uploaded.append(stored.path)
            piece_path.unlink()
            ranges.append(
                ChunkRange(
                    chunk_index=page_range.chunk_index,
                    page_start=page_range.page_start,
                    page_end=page_range.page_end,
                    input_storage_path=stored.path,
                    input_checksum=stored.sha256,
                )
            )
    return ranges


async def _undo(
    service: OCRChunkService, store: BlobStore, document: Document | None, paths: list[str]
) -> None:
    """Best effort: the original error is what the caller must see."""
    try:
        if document is not None:
            await service.delete_document(document.id)
        for path in paths:
            await store.delete(path)
    except Exception as exc:
        log.warning("start_undo_incomplete", error=str(exc))
