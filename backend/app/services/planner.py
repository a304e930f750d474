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

Pages read at planning: for engine auto or text-layer, the pages whose own text layer is their
text are read here first (app.services.text_reader, in OCR processes), before the cut. Runs of
such pages are chunks of their own (app.pdf.plan.plan_with_read_pages), whose results are
stored like a worker's and whose rows are created completed, in the same atomic statement as
the others. Only the other chunks are queued; when there are none, the document is merged here
(under the finalize lease, as a worker would) and comes back completed. A merge that cannot be
done now is left to a worker (its finalize job, and the sweep), like any other.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from uuid import UUID

from app.core.errors import InvalidInputError, OCRAlreadyStartedError, OCRError
from app.core.languages import DEFAULT_LANGUAGE
from app.core.logging import get_logger
from app.engines.specs import engine_spec
from app.models.document import Document, DocumentCreate, DocumentStatus
from app.models.ocr_chunk import ChunkStatus, DocumentOCRChunk, PlannedChunk
from app.models.results import ChunkResult
from app.pdf.inspect import PdfInfo, inspect_pdf
from app.pdf.plan import PageRange, plan_with_read_pages
from app.pdf.split import split_pdf_to_files
from app.services.merge import rebuild_merged
from app.services.ocr_chunk_service import OCRChunkService
from app.services.page_texts import page_texts
from app.services.queue import JobQueue, enqueue_next_attempts
from app.services.text_reader import ReadPages, TextReader
from app.storage.base import BlobStore, get_verified_file
from app.storage.paths import chunk_input_path, chunk_result_path, source_pdf_path

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
    reader: TextReader | None = None,
) -> StartedDocument:
    """Register a PDF as a document and (with plan) create and enqueue its chunks.

    keep_source stores the original PDF in the bucket (source.pdf), so that a
    document registered without plan can be planned later by plan_document. reader: where the
    pages read at planning are read (None: workers read every page).
    """
    started = time.perf_counter()
    # A damaged file's repair (inspect_pdf) and a copy without hidden layers are kept here for the cut.
    with tempfile.TemporaryDirectory(prefix="chunk-ocr-plan-") as workdir:
        scratch = Path(workdir)
        info = await _inspect(service, pdf_path, scratch)  # bad input raises here, before any write
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
            ranges = []
            if plan:
                readable, info = await _visible(info, scratch)
                read = await _read(reader, engine, readable, info)
                target = _Target(matter_id, document_id, engine, language)
                ranges = await _cut_and_upload(
                    store, readable, target, info, read, chunk_pages, workers, uploaded, reader
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
            await reserve_for_run(service, queue, document.id)  # before it has a chunk to claim
            chunks = await service.start_document(document.id, ranges) if plan else []
        except BaseException:
            await _undo(service, store, document, uploaded)
            raise
        if plan:
            await _queue_or_merge(service, store, queue, document, chunks)
        log.info(
            "document_started" if plan else "document_registered",
            document_id=str(document_id),
            matter_id=str(matter_id),
            pages=info.page_count,
            chunks=len(chunks),
            read_at_planning=sum(c.status is ChunkStatus.COMPLETED for c in chunks),
            engine=engine,
            language=language,
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        return StartedDocument(document, chunks, info)


async def reserve_for_run(service: OCRChunkService, queue: JobQueue, document_id: UUID) -> None:
    """A document started or taken up by a `chunk-ocr run` (a queue with a run_id) is kept to
    that run's worker while the run goes on; other documents are the fleet's."""
    if queue.run_id is not None:
        await service.reserve_document(document_id, queue.run_id)


async def plan_document(
    service: OCRChunkService,
    store: BlobStore,
    queue: JobQueue,
    document: Document,
    *,
    chunk_pages: int | None = None,
    workers: int = 1,
    reader: TextReader | None = None,
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
        info = await _inspect(service, pdf_path, Path(tmp))
        try:
            readable, info = await _visible(info, Path(tmp))
            read = await _read(reader, document.engine, readable, info)
            target = _Target(document.matter_id, document.id, document.engine, document.language)
            ranges = await _cut_and_upload(
                store, readable, target, info, read, chunk_pages, workers, uploaded, reader
            )
            chunks = await service.start_document(document.id, ranges)
        except BaseException:
            await _undo(service, store, None, uploaded)  # only what this start uploaded
            raise
    await _queue_or_merge(service, store, queue, document, chunks)
    log.info("document_planned", document_id=str(document.id), chunks=len(chunks))
    return StartedDocument(document, chunks, info)


async def _inspect(service: OCRChunkService, pdf_path: Path, scratch: Path) -> PdfInfo:
    """inspect_pdf in a worker thread, refusing more pages than MAX_PAGES_PER_DOCUMENT; a damaged
    file's repaired copy is kept in scratch, for the cut (it is not rebuilt a second time)."""
    return await asyncio.to_thread(
        inspect_pdf, pdf_path, max_pages=service.settings.max_pages_per_document, keep_repair_in=scratch
    )


async def _visible(info: PdfInfo, scratch: Path) -> tuple[Path, PdfInfo]:
    """The file to read and cut the pages from: the file inspected (or its repaired copy), or for
    a file whose default configuration hides layers a copy in scratch without them
    (app.pdf.visible_copy), with a warning saying so. A damaged file is read as its repair reads it."""
    pdf_path = info.pages_file
    if not info.may_hide_layers or info.damage or info.lost_pages:
        return pdf_path, info
    from app.pdf.visible_copy import visible_copy  # pikepdf: for a file with layers only

    copy = scratch / "visible.pdf"
    removed = await asyncio.to_thread(visible_copy, pdf_path, copy)
    if removed is None:
        return pdf_path, info
    said = replace(info, warnings=(*info.warnings, removed.warning()))
    return (copy if removed.copied else pdf_path), said


@dataclass(frozen=True, slots=True)
class _Target:
    """The document the pieces are cut for, and what its chunk results are named by."""

    matter_id: UUID
    document_id: UUID
    engine: str
    language: str


async def _read(reader: TextReader | None, engine: str, pdf_path: Path, info: PdfInfo) -> ReadPages:
    """The pages read at planning: none without a reader, for an engine that reads no text layer
    as is, for a file without a font (a scanner's: no page has a text layer, so no process is
    started for it), or for a damaged file (the workers read its repaired cut, with its lost
    pages marked)."""
    if reader is None or not info.may_have_text or info.damage or info.lost_pages:
        if reader is not None:
            reader.pages_to_ocr()
        return ReadPages({}, "")
    return await reader.read(engine, pdf_path, info.page_count)


# Past this many objects a file is cut in an OCR process (TextReader.cut), not in the planning
# process: PDFium copies every object a page reaches, and a page can reach them all (2,000,000
# one-byte objects took the cut 1 GB). Real files of thousands of pages hold tens of thousands.
CUT_APART_OBJECTS = 100_000


async def _cut_and_upload(
    store: BlobStore,
    pdf_path: Path,
    target: _Target,
    info: PdfInfo,
    read: ReadPages,
    chunk_pages: int | None,
    workers: int,
    uploaded: list[str],
    reader: TextReader | None = None,
) -> list[PlannedChunk]:
    ranges: list[PlannedChunk] = []
    plan_id = secrets.token_hex(4)  # this start's own input objects (see chunk_input_path)
    read_flags = [number in read.pages for number in range(1, info.page_count + 1)]
    planned = plan_with_read_pages(
        read_flags, chunk_pages, workers, engine_spec(target.engine).pages_per_request
    )
    is_read = {page_range.chunk_index: flag for page_range, flag in planned}
    ranges_to_cut = [page_range for page_range, _ in planned]
    with tempfile.TemporaryDirectory(prefix="chunk-ocr-cut-") as scratch:
        pieces: Iterator[tuple[PageRange, Path]]
        if reader is not None and info.objects > CUT_APART_OBJECTS:
            pieces = iter(await reader.cut(pdf_path, ranges_to_cut, Path(scratch)))
        else:  # a generator: nothing runs until next(), in a thread; one chunk's file on disk at a time
            pieces = split_pdf_to_files(pdf_path, ranges_to_cut, Path(scratch))
        while (piece := await asyncio.to_thread(next, pieces, None)) is not None:
            page_range, piece_path = piece
            stored = await store.put_file(
                chunk_input_path(target.matter_id, target.document_id, plan_id, page_range.chunk_index),
                piece_path,
                "application/pdf",
            )
            uploaded.append(stored.path)
            piece_path.unlink()
            chunk = PlannedChunk(
                chunk_index=page_range.chunk_index,
                page_start=page_range.page_start,
                page_end=page_range.page_end,
                input_storage_path=stored.path,
                input_checksum=stored.sha256,
            )
            if is_read[page_range.chunk_index]:
                chunk = await _store_read_result(store, target, chunk, page_range, read, uploaded)
            ranges.append(chunk)
    return ranges


async def _store_read_result(
    store: BlobStore,
    target: _Target,
    chunk: PlannedChunk,
    page_range: PageRange,
    read: ReadPages,
    uploaded: list[str],
) -> PlannedChunk:
    """Store a read chunk's result where a worker would have (its path names the input's
    checksum, so a worker asked to redo it finds it), and name it on the chunk."""
    result = ChunkResult(
        document_id=target.document_id,
        chunk_index=chunk.chunk_index,
        page_start=chunk.page_start,
        page_end=chunk.page_end,
        engine=target.engine,
        engine_version=read.engine_version,
        language=target.language,
        pages=page_texts(read.pages[n] for n in range(page_range.page_start, page_range.page_end + 1)),
    )
    assert chunk.input_checksum is not None
    path = chunk_result_path(
        target.matter_id,
        target.document_id,
        chunk.chunk_index,
        chunk.input_checksum,
        target.engine,
        target.language,
    )
    stored = await store.put(path, result.to_bytes(), "application/json")
    uploaded.append(stored.path)
    return chunk.model_copy(update={"result_storage_path": stored.path, "result_checksum": stored.sha256})


async def _queue_or_merge(
    service: OCRChunkService,
    store: BlobStore,
    queue: JobQueue,
    document: Document,
    chunks: list[DocumentOCRChunk],
) -> None:
    """Queue the chunks left to OCR; with none left, merge the document here. A merge that fails
    is left to a worker: its finalize job (and, if Redis is down, the sweep) merges it."""
    pending = [c for c in chunks if c.status is ChunkStatus.PENDING]
    if pending:
        await enqueue_next_attempts(queue, pending)
        return
    threshold = service.settings.ocr_low_confidence_threshold
    try:
        await rebuild_merged(service, store, queue, document, low_confidence_threshold=threshold)
    except OCRError as exc:
        log.warning(
            "merge_at_planning_deferred", document_id=str(document.id), error_code=exc.code, error=str(exc)
        )
        with contextlib.suppress(OCRError):
            await queue.enqueue_finalize(document.id)


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
