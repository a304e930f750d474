"""Merge a document whose chunks have all completed, under the document's finalize lease.

One merge per document at a time: the lease is taken in the database (fenced
by worker and attempt, like a chunk's), kept alive by a heartbeat, and only a
lease whose heartbeat stopped can be taken over, by the sweep's re-enqueue.
Every chunk result is verified against its row's checksum; one that does not
verify (or is missing, or is for other pages) is OCR'd again and its row
pointed at the new result, never merged as it is. A completed document whose
merged result is missing or no longer verifies is merged again the same way.

The recipe, one step per line in ``finalize``:
  1. a completed document whose merged result verifies: nothing to do
  2. take the finalize lease (held by a live merge, or chunks not done: nothing to do)
  3. verify each chunk result, OCR again the ones that fail
  4. build result.pdf (app.services.searchable), merge, store result.txt and result.json,
     complete the document under the lease
  5. on an error: give the lease up (a permanent error fails the document)
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum
from uuid import UUID

from app.core.errors import LeaseLostError, OCRError
from app.core.logging import get_logger
from app.models.document import Document, DocumentStatus, FinalizeLease
from app.models.ocr_chunk import DocumentOCRChunk
from app.models.results import ChunkResult
from app.services.chunk_processor import ChunkProcessor, InternalError
from app.services.leases import Fence, run_while_leased
from app.services.merge import TextTotal, merge, read_merged, store_merged, verified_chunk_result
from app.services.ocr_chunk_service import OCRChunkService
from app.services.searchable import searchable_or_why, verifies
from app.storage.base import BlobStore

log = get_logger(__name__)


class FinalizeOutcome(StrEnum):
    COMPLETED = "completed"  # merged and stored under the lease; the document is completed
    ALREADY_DONE = "already_done"  # completed before, and its merged result verifies
    NOT_READY = "not_ready"  # a chunk is not completed (yet, or for good), or the document failed
    BUSY = "busy"  # a live merge holds the lease
    DEFERRED = "deferred"  # a retryable error; the lease is given up, the sweep enqueues it again
    FAILED = "failed"  # a permanent error; the document is failed
    LEASE_LOST = "lease_lost"  # our heartbeat stopped long enough for another merge to take over


@dataclass
class Finalizer:
    service: OCRChunkService
    store: BlobStore
    processor: ChunkProcessor
    low_confidence_threshold: float = 0.7

    async def finalize(self, document_id: UUID | str) -> FinalizeOutcome:
        document = await self.service.get_document(document_id)
        if document.ocr_status is DocumentStatus.COMPLETED and await self._result_verifies(document):
            return FinalizeOutcome.ALREADY_DONE
        claimed = await self.service.claim_finalize(document.id, self.processor.worker_id)
        if claimed is None:
            return await self._not_claimed(document)
        lease = claimed.finalize_lease
        bound = log.bind(document_id=str(document.id), worker_id=lease.worker_id, attempt=lease.attempt)
        started = time.perf_counter()
        bound.info("finalize_started", repair=document.ocr_status is DocumentStatus.COMPLETED)
        fence = Fence()
        try:
            await run_while_leased(
                lambda: self._merge(claimed, lease, fence),
                heartbeat=lambda: self.service.heartbeat_finalize(lease),
                interval=self.service.settings.heartbeat_interval_seconds,
                what=f"the merge of document {document.id}",
                fence=fence,
            )
        except LeaseLostError:
            bound.warning("finalize_lease_lost", duration_ms=_ms(started))
            return FinalizeOutcome.LEASE_LOST
        except Exception as exc:
            error = exc if isinstance(exc, OCRError) else InternalError(f"{type(exc).__name__}: {exc}")
            return await self._give_up(lease, error, bound, exc_info=not isinstance(exc, OCRError))
        bound.info("document_finalized", duration_ms=_ms(started))
        return FinalizeOutcome.COMPLETED

    async def _merge(self, document: Document, lease: FinalizeLease, fence: Fence) -> Document:
        chunks = sorted(await self.service.get_chunks_by_document(document.id), key=lambda c: c.page_start)
        total = TextTotal(self.service.settings.max_document_text_chars or None)
        verified = []
        for chunk in chunks:
            verified.append(pair := await self._verified_or_redone(chunk))
            total.add(document, pair[1])
        chunks, results = [c for c, _ in verified], [r for _, r in verified]
        searchable, unsearchable = None, None
        if self.service.settings.searchable_pdf:
            processor = self.processor
            searchable, unsearchable = await searchable_or_why(
                self.store, processor.put_result_file, document, chunks, results, processor.input_pdf
            )
        merged = merge(document, chunks, results, self.low_confidence_threshold, searchable, unsearchable)
        stored = await store_merged(self.processor.put_result, document, merged)
        fence.raised = True
        done = await self.service.complete_finalize(
            lease, stored.path, stored.sha256, len(merged.failed_pages)
        )
        log.info(
            "document_merged",
            document_id=str(document.id),
            pages=merged.page_count,
            chunks=len(chunks),
            low_confidence_pages=len(merged.low_confidence_pages),
            failed_pages=[p.page_number for p in merged.failed_pages],
        )
        return done

    async def _result_verifies(self, document: Document) -> bool:
        """The merged result verifies, and so does the searchable PDF it names."""
        merged = await read_merged(self.store, document)
        if merged is None:
            return False
        return merged.searchable_pdf is None or await verifies(self.store, merged.searchable_pdf)

    async def _verified_or_redone(self, chunk: DocumentOCRChunk) -> tuple[DocumentOCRChunk, ChunkResult]:
        result = await verified_chunk_result(self.store, chunk)
        if result is not None:
            return chunk, result
        # OCR the chunk again, store the new result at its path and point the row at it.
        result = await self.processor.recognize(chunk)
        path = self.processor.result_path(chunk)
        stored = await self.processor.put_result(path, result.to_bytes())
        updated = await self.service.update_result(chunk.id, stored.path, stored.sha256)
        log.info("chunk_result_redone", chunk_id=str(chunk.id), chunk_index=chunk.chunk_index, path=path)
        return updated, result

    async def _not_claimed(self, document: Document) -> FinalizeOutcome:
        progress = await self.service.get_chunk_progress(document.id)
        mergeable = progress.is_complete and document.ocr_status is not DocumentStatus.FAILED
        outcome = FinalizeOutcome.BUSY if mergeable else FinalizeOutcome.NOT_READY
        log.info(
            "finalize_skipped",
            document_id=str(document.id),
            outcome=outcome.value,
            completed=progress.completed,
            total=progress.total,
        )
        return outcome

    async def _give_up(
        self, lease: FinalizeLease, error: OCRError, bound: object, *, exc_info: bool
    ) -> FinalizeOutcome:
        failed = not error.retryable
        log.log(
            40 if failed else 30,
            "finalize_failed" if failed else "finalize_deferred",
            document_id=str(lease.document_id),
            error_code=error.code,
            error=str(error),
            exc_info=exc_info,
        )
        try:
            await self.service.release_finalize(
                lease,
                failed_message=str(error) if failed else None,
                deferred_message=None if failed else f"{error.code}: {error}",
            )
        except OCRError as exc:  # the lease expires by itself; the sweep enqueues the merge again
            log.warning("finalize_release_failed", document_id=str(lease.document_id), error=str(exc))
        return FinalizeOutcome.FAILED if failed else FinalizeOutcome.DEFERRED


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
