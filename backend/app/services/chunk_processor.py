"""Process one chunk under its lease: claim, heartbeat, OCR, store, complete.

The recipe, one step per line in ``process``:
  1. claim the chunk (nothing to claim: a duplicate delivery, done)
  2. keep the lease alive with a heartbeat task; if the lease is lost, stop
  3. a result recorded by an earlier attempt that still verifies: complete with it
  4. download the chunk's input PDF, verified against its checksum
  5. OCR its pages in the process pool
  6. upload the result (content-addressed), record it, complete the chunk
  7. on an error: fail the chunk with the error's code; retryable ones come back later
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from app.core.errors import LeaseLostError, OCRError
from app.core.logging import get_logger
from app.engines.pool import recognize_in_process
from app.models.ocr_chunk import ChunkLease, DocumentOCRChunk
from app.models.results import ChunkResult, PageText, WordBox
from app.services.ocr_chunk_service import OCRChunkService
from app.services.queue import JobQueue
from app.storage.base import BlobStore, get_verified
from app.storage.checksums import sha256_hex
from app.storage.errors import StorageError
from app.storage.paths import chunk_result_path

log = get_logger(__name__)
T = TypeVar("T")


class ChunkOutcome(StrEnum):
    NOT_CLAIMABLE = "not_claimable"  # duplicate or early delivery: nothing done
    COMPLETED = "completed"  # OCR ran and the result is stored
    REUSED = "reused"  # an earlier attempt's stored result verified; no OCR
    FAILED = "failed"  # the chunk is failed with an error code
    LEASE_LOST = "lease_lost"  # another attempt owns the chunk; nothing written


class InternalError(OCRError):
    """An exception we did not expect; retried within the attempt budget."""

    code = "internal_error"
    retryable = True


@dataclass
class ChunkProcessor:
    service: OCRChunkService
    store: BlobStore
    queue: JobQueue
    executor: Executor
    engine: str
    worker_id: str

    async def process(self, chunk_id: str) -> ChunkOutcome:
        chunk = await self.service.claim_chunk(chunk_id, self.worker_id)
        if chunk is None:
            log.info("chunk_not_claimable", chunk_id=chunk_id, worker_id=self.worker_id)
            return ChunkOutcome.NOT_CLAIMABLE
        lease = chunk.lease
        bound = log.bind(
            chunk_id=str(chunk.id),
            document_id=str(chunk.document_id),
            chunk_index=chunk.chunk_index,
            attempt=lease.attempt,
            worker_id=self.worker_id,
        )
        started = time.perf_counter()
        try:
            outcome = await self._with_heartbeat(lease, lambda: self._run(chunk, lease))
        except LeaseLostError:
            bound.warning("chunk_lease_lost", duration_ms=_ms(started))
            return ChunkOutcome.LEASE_LOST
        except Exception as exc:  # every failure must land on the row, or the chunk waits for the sweep
            error = exc if isinstance(exc, OCRError) else InternalError(f"{type(exc).__name__}: {exc}")
            bound.error(
                "chunk_attempt_failed",
                error_code=error.code,
                retryable=error.retryable,
                error=str(error),
                duration_ms=_ms(started),
                exc_info=not isinstance(exc, OCRError),
            )
            await self._fail(lease, error)
            return ChunkOutcome.FAILED
        bound.info("chunk_done", outcome=outcome.value, pages=chunk.page_count, duration_ms=_ms(started))
        await self._after_complete(chunk)
        return outcome

    async def _run(self, chunk: DocumentOCRChunk, lease: ChunkLease) -> ChunkOutcome:
        if chunk.result_storage_path and chunk.result_checksum:
            try:
                await get_verified(self.store, chunk.result_storage_path, chunk.result_checksum)
            except StorageError as exc:
                log.warning("chunk_recorded_result_unusable", chunk_id=str(chunk.id), error=str(exc))
            else:
                await self.service.complete_chunk(lease, chunk.result_storage_path, chunk.result_checksum)
                return ChunkOutcome.REUSED
        result = await self.recognize(chunk)
        data = result.to_bytes()
        path = chunk_result_path(chunk.matter_id, chunk.document_id, chunk.chunk_index, sha256_hex(data))
        # A lease lost during OCR must not lead to a write: check it before uploading.
        if not await self.service.update_heartbeat(lease):
            raise LeaseLostError("lease lost before upload", chunk_id=chunk.id)
        stored = await self.store.put(path, data, "application/json")
        await self.service.record_chunk_result(lease, stored.path, stored.sha256)
        await self.service.complete_chunk(lease, stored.path, stored.sha256)
        return ChunkOutcome.COMPLETED

    async def recognize(self, chunk: DocumentOCRChunk) -> ChunkResult:
        """OCR the chunk's input PDF in the process pool (also used by finalize to repair)."""
        if not chunk.input_storage_path or not chunk.input_checksum:
            raise InternalError(f"chunk {chunk.id} has no input object", chunk_id=chunk.id)
        pdf = await get_verified(self.store, chunk.input_storage_path, chunk.input_checksum)
        loop = asyncio.get_running_loop()
        ocr_started = time.perf_counter()
        pages, engine_version = await loop.run_in_executor(
            self.executor, recognize_in_process, self.engine, pdf, chunk.page_start
        )
        log.debug("chunk_ocr", chunk_id=str(chunk.id), pages=len(pages), duration_ms=_ms(ocr_started))
        result = ChunkResult(
            document_id=chunk.document_id,
            chunk_index=chunk.chunk_index,
            page_start=chunk.page_start,
            page_end=chunk.page_end,
            engine=self.engine,
            engine_version=engine_version,
            pages=tuple(
                PageText(
                    page_number=p.page_number,
                    text=p.text,
                    confidence=p.confidence,
                    source=p.source,
                    words=tuple(WordBox(text=w.text, confidence=w.confidence, bbox=w.bbox) for w in p.words)
                    or None,
                )
                for p in pages
            ),
        )
        if not result.covers_its_range():
            raise InternalError(
                f"engine returned pages {[p.page_number for p in result.pages]} "
                f"for pages {chunk.page_start}-{chunk.page_end}"
            )
        return result

    async def _with_heartbeat(self, lease: ChunkLease, work: Callable[[], Awaitable[T]]) -> T:
        """Run work while a heartbeat extends the lease; cancel it the moment the lease is lost."""
        task = asyncio.ensure_future(work())
        lost = asyncio.Event()

        async def beat() -> None:
            interval = self.service.settings.heartbeat_interval_seconds
            while not task.done():
                await asyncio.sleep(interval)
                try:
                    alive = await self.service.update_heartbeat(lease)
                except OCRError as exc:  # a database blip: keep working, the next beat may pass
                    log.warning("heartbeat_failed", chunk_id=str(lease.chunk_id), error=str(exc))
                    continue
                if not alive:
                    lost.set()
                    task.cancel()
                    return

        beater = asyncio.create_task(beat())
        try:
            return await task
        except asyncio.CancelledError:
            if lost.is_set():
                raise LeaseLostError(
                    f"lease on chunk {lease.chunk_id} lost", chunk_id=lease.chunk_id
                ) from None
            raise
        finally:
            beater.cancel()
            task.cancel()

    async def _fail(self, lease: ChunkLease, error: OCRError) -> None:
        try:
            failed = await self.service.fail_chunk(
                lease, error_code=error.code, error_message=str(error), retryable=error.retryable
            )
        except LeaseLostError:
            return
        if error.retryable and failed.attempt_count < failed.max_attempts:
            # Schedule the next attempt now rather than waiting for the sweep.
            for chunk in await self.service.retry_failed_chunks(failed.document_id):
                await self.queue.enqueue_chunk(
                    chunk.id, chunk.attempt_count + 1, defer_until=chunk.next_attempt_at
                )

    async def _after_complete(self, chunk: DocumentOCRChunk) -> None:
        progress = await self.service.get_chunk_progress(chunk.document_id)
        if progress.is_complete:
            await self.queue.enqueue_finalize(chunk.document_id)
        elif progress.is_stuck:  # the last movable chunk is done and some other one failed for good
            await self.service.refresh_document_status(chunk.document_id)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
