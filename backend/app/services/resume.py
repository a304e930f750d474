"""A document a stopped run left under way, taken up again by a run of the same file.

`chunk-ocr run` stopped by Ctrl-C (or a closed laptop, or a worker that died) leaves its
document processing: its read chunks stored, the rest queued or held by the run's worker
(whose cancelled jobs failed them retryably, due again at once). Running the file again goes
on with that document, so the pages already read are not read again: the newest document of
the same matter with the file's SHA-256, engine and language whose OCR is under way. Its
pending chunks are queued again (a queue that lost its jobs; a job still queued has the same
id and is not queued twice), and the worker's sweep sends the cancelled ones back.

A document whose original was not kept cannot give a searchable PDF: a run that asks for one
starts the file again instead.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from uuid import UUID

from app.core.digests import file_sha256
from app.core.logging import get_logger
from app.models.ocr_chunk import ChunkStatus
from app.pdf.inspect import inspect_pdf
from app.services.ocr_chunk_service import OCRChunkService
from app.services.planner import StartedDocument, reserve_for_run
from app.services.queue import JobQueue, enqueue_next_attempts
from app.storage.paths import source_pdf_path

log = get_logger(__name__)


async def resume_document(
    service: OCRChunkService,
    queue: JobQueue,
    pdf_path: Path,
    *,
    matter_id: UUID,
    engine: str,
    language: str,
    searchable: bool,
) -> StartedDocument | None:
    """The file's unfinished document with its chunks, its pending chunks queued again; None when
    there is none to go on with (searchable: the run wants a searchable PDF, which needs the
    original kept)."""
    started = time.perf_counter()
    try:
        sha256 = await asyncio.to_thread(file_sha256, pdf_path)
    except OSError:  # unreadable: starting it says why, as for any file
        return None
    document = await service.get_unfinished_document(matter_id, sha256, engine, language)
    if document is None:
        return None
    if searchable and document.source_path != source_pdf_path(document.matter_id, document.id):
        log.info("document_not_resumed", document_id=str(document.id), reason="original_not_kept")
        return None
    info = await asyncio.to_thread(inspect_pdf, pdf_path, max_pages=service.settings.max_pages_per_document)
    await reserve_for_run(service, queue, document.id)  # its chunks are this run's from now on
    chunks = await service.get_chunks_by_document(document.id)
    pending = [chunk for chunk in chunks if chunk.status is ChunkStatus.PENDING]
    await enqueue_next_attempts(queue, pending)
    log.info(
        "document_resumed",
        document_id=str(document.id),
        matter_id=str(matter_id),
        chunks=len(chunks),
        completed=sum(chunk.status is ChunkStatus.COMPLETED for chunk in chunks),
        queued=len(pending),
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
    return StartedDocument(document, chunks, info)
