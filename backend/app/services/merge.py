"""A document's merged result: built from verified chunk results, read back verified.

No OCR happens here, so both the worker's finalize and the API (rebuilding a
merged result that went missing or stopped verifying) use it. A chunk result
that is missing, does not match its row's checksum, or is for other pages is
never merged: the caller gets None for it and OCRs that chunk again (a worker)
or hands the document to a worker (the API).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from app.core.errors import ConflictError, NotFoundError, OCRError, ResourceLimitError
from app.core.logging import get_logger
from app.models.document import Document, DocumentStatus, FinalizeLease
from app.models.ocr_chunk import DocumentOCRChunk
from app.models.results import ChunkResult, FailedPage, MergedChunk, MergedResult, StoredFile
from app.services.ocr_chunk_service import OCRChunkService
from app.services.queue import JobQueue
from app.storage.base import BlobStore, StoredObject, get_verified, get_verified_file
from app.storage.errors import ChecksumMismatchError, ObjectNotFoundError, StorageError
from app.storage.paths import merged_json_path, merged_text_path

log = get_logger(__name__)

Put = Callable[[str, bytes, str], Awaitable[StoredObject]]


class MergeError(OCRError):
    """The chunk results do not add up to the document (a gap or an overlap in pages)."""

    code = "merge_failed"


class ResultRebuildingError(OCRError):
    """The merged result is being rebuilt (by another merge, or a worker must OCR a chunk again)."""

    code = "result_rebuilding"
    retryable = True


class NoSearchablePdfError(NotFoundError):
    """The document has no searchable PDF: no page was OCR'd (the original's own text layer is the
    text), or searchable PDFs are turned off (SEARCHABLE_PDF=false)."""

    code = "no_searchable_pdf"


class ResultNotReadyError(ConflictError):
    """The document has no result: it failed (its failed chunks must be retried first)."""

    code = "result_not_ready"


class ResultPendingError(ResultNotReadyError):
    """The document has no result yet: it is still being OCR'd (ask again later)."""

    retryable = True


async def document_result(
    service: OCRChunkService, store: BlobStore, queue: JobQueue, document: Document
) -> MergedResult:
    """A completed document's merged result, verified against its checksum; rebuilt from the
    verified chunk results when it went missing or stopped verifying (the API's and the CLI's
    way to the text)."""
    if document.ocr_status is DocumentStatus.FAILED:
        raise ResultNotReadyError(
            f"document {document.id} failed ({document.error_message}); retry its failed chunks first"
        )
    if document.ocr_status is not DocumentStatus.COMPLETED:
        raise ResultPendingError(
            f"document {document.id} is {document.ocr_status.value}; try again when it completes"
        )
    return await read_merged(store, document) or await rebuild_merged(
        service,
        store,
        queue,
        document,
        low_confidence_threshold=service.settings.ocr_low_confidence_threshold,
    )


async def searchable_pdf_file(
    service: OCRChunkService,
    store: BlobStore,
    queue: JobQueue,
    document: Document,
    named: StoredFile,
    dest: Path,
) -> StoredFile:
    """The searchable PDF its merged result names (searchable_pdf_of), written to dest and verified;
    when it went missing or stopped verifying, a worker is asked to graft it again
    (ResultRebuildingError: come back shortly)."""
    async with _rebuilt_when_unusable(service, queue, document):
        await get_verified_file(store, named.path, named.sha256, dest)
    return named


async def searchable_pdf_local_file(
    service: OCRChunkService, store: BlobStore, queue: JobQueue, document: Document, named: StoredFile
) -> Path | None:
    """The searchable PDF's own file in a store that keeps its objects as files here, verified
    (BlobStore.verified_local_file), to be sent as it is; None for a store that does not. As
    searchable_pdf_file when it went missing or stopped verifying."""
    async with _rebuilt_when_unusable(service, queue, document):
        return await store.verified_local_file(named.path, named.sha256)


@asynccontextmanager
async def _rebuilt_when_unusable(
    service: OCRChunkService, queue: JobQueue, document: Document
) -> AsyncIterator[None]:
    """A searchable PDF that went missing or stopped verifying is grafted again by a worker:
    ResultRebuildingError, come back shortly."""
    try:
        yield
    except (ObjectNotFoundError, ChecksumMismatchError) as exc:
        log.warning("searchable_pdf_unusable", document_id=str(document.id), reason=exc.code)
        claimed = await service.claim_finalize(document.id, _api_worker_id())
        if claimed is not None:
            await _hand_to_worker(service, queue, claimed.finalize_lease)
        raise ResultRebuildingError(
            f"the searchable PDF of document {document.id} is being rebuilt"
        ) from None


async def searchable_pdf_of(
    service: OCRChunkService, store: BlobStore, queue: JobQueue, document: Document
) -> StoredFile:
    """Where the document's searchable PDF is and its checksum, from its verified merged result."""
    merged = await document_result(service, store, queue, document)
    if merged.searchable_pdf is None:
        read = [p for p in merged.pages if p.source == "ocr" and p.error is None]
        if merged.searchable_pdf_error:
            why = merged.searchable_pdf_error
        elif any(p.text.strip() for p in read):
            why = "SEARCHABLE_PDF was off when it was merged"
        elif read:  # blank scans, or an engine that reads nothing: no word to lay over them
            why = "OCR found no words on the pages it read"
        else:
            why = "no page of it needed OCR"
        raise NoSearchablePdfError(f"document {document.id} has no searchable PDF: {why}")
    return merged.searchable_pdf


@dataclass
class TextTotal:
    """The characters of text in a document's chunk results, counted as each is read: past
    MAX_DOCUMENT_TEXT_CHARS the merge stops (ResourceLimitError, permanent) before it holds more.
    A merge holds every page's text at once, and a page tree may name one page of a million
    characters 10,000 times."""

    limit: int | None
    characters: int = 0

    def add(self, document: Document, result: ChunkResult) -> None:
        self.characters += sum(len(page.text) for page in result.pages)
        if self.limit is not None and self.characters > self.limit:
            raise ResourceLimitError(
                f"document {document.id}'s text is more than {self.limit:,} characters "
                f"(MAX_DOCUMENT_TEXT_CHARS); its result is not merged",
                document_id=document.id,
            )


async def verified_chunk_result(store: BlobStore, chunk: DocumentOCRChunk) -> ChunkResult | None:
    """The chunk's stored result if it verifies against the row and covers the row's pages."""
    try:
        if not chunk.result_storage_path or not chunk.result_checksum:
            raise MergeError(f"chunk {chunk.chunk_index} is completed without a result")
        data = await get_verified(store, chunk.result_storage_path, chunk.result_checksum)
        result = ChunkResult.model_validate_json(data)
        if (
            result.document_id != chunk.document_id
            or not result.covers_its_range()
            or (result.page_start, result.page_end) != (chunk.page_start, chunk.page_end)
        ):
            raise MergeError(f"chunk {chunk.chunk_index}'s stored result is for other pages")
    except (StorageError, ValidationError, MergeError) as exc:
        log.warning(
            "chunk_result_rejected",
            document_id=str(chunk.document_id),
            chunk_id=str(chunk.id),
            chunk_index=chunk.chunk_index,
            path=chunk.result_storage_path,
            reason=getattr(exc, "code", type(exc).__name__),
        )
        return None
    return result


def merge(
    document: Document,
    chunks: Sequence[DocumentOCRChunk],
    results: Sequence[ChunkResult],
    low_confidence_threshold: float,
    searchable_pdf: StoredFile | None = None,
    searchable_pdf_error: str | None = None,
) -> MergedResult:
    """Chunks and their results in page order -> the document's result (deterministic bytes)."""
    pages = [p.model_copy(update={"words": None}) for r in results for p in r.pages]
    if [p.page_number for p in pages] != list(range(1, document.page_count + 1)):
        raise MergeError(
            f"chunk results of document {document.id} do not cover pages 1-{document.page_count}"
        )
    # Blank pages carry no evidence either way: they count neither in the mean nor as low.
    with_text = [p for p in pages if p.text.strip()]
    mean = sum(p.confidence for p in with_text) / len(with_text) if with_text else 0.0
    low = tuple(
        p.page_number for p in with_text if p.source == "ocr" and p.confidence < low_confidence_threshold
    )
    return MergedResult(
        document_id=document.id,
        filename=document.filename,
        page_count=document.page_count,
        engines=tuple(sorted({r.engine for r in results})),
        language=document.language,
        searchable_pdf=searchable_pdf,
        searchable_pdf_error=searchable_pdf_error,
        mean_confidence=round(mean, 4),
        low_confidence_threshold=low_confidence_threshold,
        low_confidence_pages=low,
        pages=tuple(pages),
        failed_pages=tuple(
            FailedPage(page_number=p.page_number, code=p.error.code, message=p.error.message)
            for p in pages
            if p.error is not None
        ),
        chunks=tuple(
            MergedChunk(
                chunk_index=c.chunk_index,
                page_start=c.page_start,
                page_end=c.page_end,
                result_storage_path=c.result_storage_path or "",
                result_checksum=c.result_checksum or "",
            )
            for c in chunks
        ),
    )


async def store_merged(put: Put, document: Document, merged: MergedResult) -> StoredObject:
    """Write result.txt, then result.json (whose checksum the document row records)."""
    await put(merged_text_path(document.matter_id, document.id), merged.text().encode("utf-8"), "text/plain")
    return await put(merged_json_path(document.matter_id, document.id), merged.to_bytes(), "application/json")


async def read_merged(store: BlobStore, document: Document) -> MergedResult | None:
    """The document's merged result, verified; None when it is missing, altered or unreadable."""
    if not document.result_storage_path or not document.result_checksum:
        return None
    try:
        data = await get_verified(store, document.result_storage_path, document.result_checksum)
        return MergedResult.model_validate_json(data)
    except (StorageError, ValidationError) as exc:
        log.warning(
            "merged_result_unusable",
            document_id=str(document.id),
            path=document.result_storage_path,
            reason=getattr(exc, "code", type(exc).__name__),
        )
        return None


async def rebuild_merged(
    service: OCRChunkService,
    store: BlobStore,
    queue: JobQueue,
    document: Document,
    *,
    low_confidence_threshold: float,
) -> MergedResult:
    """Rebuild a completed document's merged result from its verified chunk results, under the
    finalize lease. When a chunk result does not verify, OCR is needed: the document is handed to
    a worker (its finalize job) and ResultRebuildingError says to come back later."""
    worker_id = _api_worker_id()
    claimed = await service.claim_finalize(document.id, worker_id)
    if claimed is None:
        raise ResultRebuildingError(f"the result of document {document.id} is being rebuilt")
    lease = claimed.finalize_lease
    try:
        chunks = sorted(await service.get_chunks_by_document(document.id), key=lambda c: c.page_start)
        total = TextTotal(service.settings.max_document_text_chars or None)
        results: list[ChunkResult | None] = []
        for chunk in chunks:
            results.append(result := await verified_chunk_result(store, chunk))
            if result is not None:
                total.add(claimed, result)
        if any(r is None for r in results):
            await _hand_to_worker(service, queue, lease)
            raise ResultRebuildingError(f"document {document.id} needs chunks OCR'd again; retry shortly")
        verified = [r for r in results if r is not None]
        searchable, unsearchable = None, None
        if service.settings.searchable_pdf:  # grafted again: every input to it verifies, no OCR needed
            # here, not at the top: the grafting imports pikepdf, which a command that never
            # builds a searchable PDF (`run` of a born-digital file) would wait on at its start
            from app.services.searchable import searchable_or_why

            async def chunk_input(chunk: DocumentOCRChunk) -> bytes:
                return await get_verified(store, chunk.input_storage_path or "", chunk.input_checksum or "")

            searchable, unsearchable = await searchable_or_why(
                store, store.put_file, claimed, chunks, verified, chunk_input
            )
        merged = merge(claimed, chunks, verified, low_confidence_threshold, searchable, unsearchable)
        stored = await store_merged(store.put, claimed, merged)
        await service.complete_finalize(lease, stored.path, stored.sha256, len(merged.failed_pages))
    except BaseException:
        await _release_quietly(service, lease)
        raise
    log.info(
        "merged_result_rebuilt", document_id=str(document.id), worker_id=worker_id, pages=merged.page_count
    )
    return merged


def _api_worker_id() -> str:
    """Who holds a finalize lease taken outside a worker (the API or the command line)."""
    return f"api:{socket.gethostname()}:{os.getpid()}"


async def _hand_to_worker(service: OCRChunkService, queue: JobQueue, lease: FinalizeLease) -> None:
    await service.release_finalize(lease)
    # As the sweep does: a finalize job of a worker that died may still hold the plain job id.
    generation = int(time.time() // service.settings.stale_chunk_threshold_seconds)
    await queue.rescue_finalize(lease.document_id, generation)


async def _release_quietly(service: OCRChunkService, lease: FinalizeLease) -> None:
    """Best effort: the lease expires on its own; the original error is what the caller must see."""
    try:
        await service.release_finalize(lease)
    except OCRError as exc:
        log.warning("finalize_release_failed", document_id=str(lease.document_id), error=str(exc))
