"""Start OCR of a PDF: validate, register, plan, cut, upload, create chunk rows, enqueue.

Each chunk's pages are cut once here into their own small PDF, so a worker
downloads only its slice. The chunk rows are created in one statement after
every input is uploaded; if anything fails before that, the document row and
the uploaded inputs are removed, so nothing half-created stays behind.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

from app.core.logging import get_logger
from app.models.document import Document, DocumentCreate, DocumentStatus
from app.models.ocr_chunk import ChunkRange, DocumentOCRChunk
from app.pdf.inspect import PdfInfo, inspect_pdf
from app.pdf.plan import plan_chunks
from app.pdf.split import split_pdf
from app.services.ocr_chunk_service import OCRChunkService
from app.services.queue import JobQueue
from app.storage.base import BlobStore
from app.storage.paths import chunk_input_path

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
    chunk_pages: int | None = None,
    workers: int = 1,
    filename: str | None = None,
) -> StartedDocument:
    started = time.perf_counter()
    info = await asyncio.to_thread(inspect_pdf, pdf_path)  # bad input raises here, before any write
    document_id = uuid.uuid4()
    planned = plan_chunks(info.page_count, chunk_pages, workers, engine)
    uploaded: list[str] = []
    document: Document | None = None
    try:
        ranges: list[ChunkRange] = []
        pieces = split_pdf(pdf_path, planned)  # cut one chunk at a time: memory stays one chunk deep
        while (piece := await asyncio.to_thread(next, pieces, None)) is not None:
            page_range, data = piece
            path = chunk_input_path(matter_id, document_id, page_range.chunk_index)
            stored = await store.put(path, data, "application/pdf")
            uploaded.append(stored.path)
            ranges.append(
                ChunkRange(
                    chunk_index=page_range.chunk_index,
                    page_start=page_range.page_start,
                    page_end=page_range.page_end,
                    input_storage_path=stored.path,
                    input_checksum=stored.sha256,
                )
            )
        document = await service.create_document(
            DocumentCreate(
                id=document_id,
                matter_id=matter_id,
                filename=filename or pdf_path.name,
                source_path=str(pdf_path),
                page_count=info.page_count,
                file_sha256=info.sha256,
                engine=engine,
            )
        )
        chunks = await service.create_chunks_for_document(document_id, ranges)
        document = await service.set_document_status(document_id, DocumentStatus.PROCESSING)
    except BaseException:
        await _undo(service, store, document, uploaded)
        raise
    for chunk in chunks:
        await queue.enqueue_chunk(chunk.id, 1)
    log.info(
        "document_started",
        document_id=str(document_id),
        matter_id=str(matter_id),
        pages=info.page_count,
        chunks=len(chunks),
        engine=engine,
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
    return StartedDocument(document, chunks, info)


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
