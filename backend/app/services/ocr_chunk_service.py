"""OCRChunkService: the one entry point to chunk state for routes, workers and the CLI.

The service validates input, applies ``VALID_STATUS_TRANSITIONS`` before it
touches the database, and otherwise delegates to the chunk repository, whose
SQL functions carry out the lease protocol atomically with database time.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from uuid import UUID

from app.core.config import RepositoryBackend, Settings, get_settings
from app.core.errors import (
    ChunkNotFoundError,
    ConfigurationError,
    InvalidInputError,
    InvalidStatusTransitionError,
)
from app.core.logging import get_logger
from app.db.repository import ChunkRepository
from app.metrics import ChunkMetrics
from app.models.limits import ERROR_MESSAGE_MAX
from app.models.ocr_chunk import (
    ChunkLease,
    ChunkProgress,
    ChunkRange,
    ChunkStatus,
    DocumentOCRChunk,
    DocumentOCRChunkCreate,
    DocumentOCRChunkUpdate,
    PlannedChunk,
    is_valid_transition,
)
from app.models.queue import QueueSnapshot
from app.services.document_operations import DocumentOperations
from app.services.validation import (
    IdLike,
    as_uuid,
    check_ranges,
    error_code_of,
    lease_lost,
    result_fields,
    validated,
    worker_id_of,
)

log = get_logger(__name__)


class OCRChunkService(DocumentOperations):
    """Chunks and their lease protocol; documents, matters and the merge lease come from
    DocumentOperations (one object for callers, two modules for readers)."""

    def __init__(
        self, repository: ChunkRepository, settings: Settings, metrics: ChunkMetrics | None = None
    ) -> None:
        self.repository = repository
        self.settings = settings
        self.metrics = metrics or ChunkMetrics()  # what this process counts (served at /metrics)

    async def close(self) -> None:
        await self.repository.close()

    async def ping(self) -> None:
        """Raise RepositoryUnavailableError (or another RepositoryError) unless the database answers."""
        await self.repository.ping()

    # -- creating chunks ------------------------------------------------------

    async def create_chunk(self, chunk: DocumentOCRChunkCreate | dict[str, object]) -> DocumentOCRChunk:
        data = validated(DocumentOCRChunkCreate, chunk)
        document = await self.get_document(data.document_id)
        check_ranges(document, [data])
        created = await self.repository.create_chunk(data, self.settings.ocr_max_attempts)
        log.info(
            "chunk_created",
            chunk_id=str(created.id),
            document_id=str(created.document_id),
            chunk_index=created.chunk_index,
        )
        return created

    async def create_chunks_for_document(
        self,
        document_id: IdLike,
        chunks: Sequence[ChunkRange | dict[str, object]],
    ) -> list[DocumentOCRChunk]:
        """Create every chunk row of a document in one statement: all or nothing."""
        doc_id, ranges = await self._checked_ranges(document_id, chunks)
        created = await self.repository.create_chunks(doc_id, ranges, self.settings.ocr_max_attempts)
        log.info("chunks_created", document_id=str(doc_id), chunks=len(created))
        return created

    async def start_document(
        self, document_id: IdLike, chunks: Sequence[PlannedChunk | ChunkRange | dict[str, object]]
    ) -> list[DocumentOCRChunk]:
        """Create a pending document's chunks and move it to processing in one atomic step; a
        chunk that names its stored result (read at planning) is created completed.

        Any number of concurrent calls for one document: one succeeds, the
        others raise OCRAlreadyStartedError and change nothing.
        """
        doc_id, ranges = await self._checked_ranges(document_id, chunks, PlannedChunk)
        created = await self.repository.start_document(doc_id, ranges, self.settings.ocr_max_attempts)
        log.info("document_chunks_created", document_id=str(doc_id), chunks=len(created))
        return created

    async def _checked_ranges(
        self,
        document_id: IdLike,
        chunks: Sequence[ChunkRange | dict[str, object]],
        model: type[ChunkRange] = ChunkRange,
    ) -> tuple[UUID, list[ChunkRange]]:
        doc_id = as_uuid(document_id, "document_id")
        # a plain ChunkRange given to start_document is a PlannedChunk without a result
        ranges = [
            validated(model, c.model_dump() if isinstance(c, ChunkRange) and not isinstance(c, model) else c)
            for c in chunks
        ]
        if not ranges:
            raise InvalidInputError("a document needs at least one chunk")
        check_ranges(await self.get_document(doc_id), ranges)
        return doc_id, ranges

    # -- reading --------------------------------------------------------------

    async def get_chunk(self, chunk_id: IdLike) -> DocumentOCRChunk:
        cid = as_uuid(chunk_id, "chunk_id")
        chunk = await self.repository.get_chunk(cid)
        if chunk is None:
            raise ChunkNotFoundError(f"chunk {cid} not found", chunk_id=cid)
        return chunk

    async def get_chunks_by_document(self, document_id: IdLike) -> list[DocumentOCRChunk]:
        return await self.repository.list_chunks(document_id=as_uuid(document_id, "document_id"))

    async def _by_status(self, status: ChunkStatus, document_id: IdLike | None) -> list[DocumentOCRChunk]:
        doc_id = as_uuid(document_id, "document_id") if document_id is not None else None
        return await self.repository.list_chunks(document_id=doc_id, status=status)

    async def get_failed_chunks(self, document_id: IdLike | None = None) -> list[DocumentOCRChunk]:
        return await self._by_status(ChunkStatus.FAILED, document_id)

    async def get_pending_chunks(self, document_id: IdLike | None = None) -> list[DocumentOCRChunk]:
        return await self._by_status(ChunkStatus.PENDING, document_id)

    async def get_processing_chunks(self, document_id: IdLike | None = None) -> list[DocumentOCRChunk]:
        return await self._by_status(ChunkStatus.PROCESSING, document_id)

    async def get_chunk_progress(self, document_id: IdLike) -> ChunkProgress:
        return await self.repository.progress(as_uuid(document_id, "document_id"))

    # -- administrative moves -------------------------------------------------

    async def update_status(
        self,
        chunk_id: IdLike,
        status: ChunkStatus | str | DocumentOCRChunkUpdate,
        *,
        error_code: str | None = None,
        error_message: str | None = None,
    ) -> DocumentOCRChunk:
        """Move a chunk along the state machine outside the lease protocol.

        For moves that carry no lease data: processing -> failed (give up on a
        chunk), failed -> pending (retry one chunk now). Taking and finishing a
        lease go through claim_chunk and complete_chunk.
        """
        update = (
            status
            if isinstance(status, DocumentOCRChunkUpdate)
            else validated(
                DocumentOCRChunkUpdate,
                {"status": status, "error_code": error_code, "error_message": error_message},
            )
        )
        current = await self.get_chunk(chunk_id)
        if not is_valid_transition(current.status, update.status):
            raise InvalidStatusTransitionError(
                f"chunk {current.id} cannot move {current.status} -> {update.status}",
                chunk_id=current.id,
                current=current.status,
                requested=update.status,
            )
        if update.status is ChunkStatus.PROCESSING:
            raise InvalidInputError("a chunk enters processing only through claim_chunk (it needs a lease)")
        if update.status is ChunkStatus.COMPLETED:
            raise InvalidInputError("a chunk completes only through complete_chunk (it needs its result)")
        if update.status is ChunkStatus.FAILED and update.error_code is None:
            raise InvalidInputError("moving a chunk to failed needs an error_code")
        moved = await self.repository.update_status(
            current.id,
            current.status,
            update.status,
            error_code=update.error_code,
            error_message=update.error_message,
        )
        if moved is None:  # somebody moved it first; report against what it is now
            latest = await self.get_chunk(current.id)
            raise InvalidStatusTransitionError(
                f"chunk {current.id} changed to {latest.status} before it could move to {update.status}",
                chunk_id=current.id,
                current=latest.status,
                requested=update.status,
            )
        if moved.status is ChunkStatus.FAILED:
            await self.repository.refresh_document_status(moved.document_id)
        log.info(
            "chunk_status_updated",
            chunk_id=str(moved.id),
            document_id=str(moved.document_id),
            from_status=current.status.value,
            to_status=moved.status.value,
        )
        return moved

    async def update_result(
        self, chunk_id: IdLike, result_storage_path: str, result_checksum: str
    ) -> DocumentOCRChunk:
        """Point a processing or completed chunk at a (replacement) stored result."""
        cid = as_uuid(chunk_id, "chunk_id")
        path, checksum = result_fields(result_storage_path, result_checksum)
        updated = await self.repository.set_result(cid, path, checksum)
        if updated is None:
            current = await self.get_chunk(cid)
            raise InvalidStatusTransitionError(
                f"chunk {cid} is {current.status}; only processing or completed chunks hold results",
                chunk_id=cid,
                current=current.status,
            )
        return updated

    # -- lease protocol -------------------------------------------------------

    async def claim_chunk(self, chunk_id: IdLike, worker_id: str) -> DocumentOCRChunk | None:
        """Lease this chunk if it is pending and due; None otherwise (a duplicate delivery)."""
        return await self.repository.claim(as_uuid(chunk_id, "chunk_id"), worker_id_of(worker_id))

    async def claim_next_chunk(
        self, worker_id: str, document_id: IdLike | None = None
    ) -> DocumentOCRChunk | None:
        doc_id = as_uuid(document_id, "document_id") if document_id is not None else None
        return await self.repository.claim_next(worker_id_of(worker_id), doc_id)

    async def claim_for_holder(self, holder: str, run_id: str | None = None) -> DocumentOCRChunk | None:
        """claim_next_chunk for a claim that may be called again after an answer that never came:
        the chunk `holder` already holds, else the next one. A call given up on may still run
        (when a database that stopped answering wakes), beside the one that replaced it; they
        lease one chunk between them, not two (ocr_claim_for_holder). run_id: claim among the
        documents reserved for that `chunk-ocr run`; None, among those no run holds."""
        return await self.repository.claim_for_holder(worker_id_of(holder), run_id=run_id)

    async def held_chunk(self, worker_id: str) -> DocumentOCRChunk | None:
        """The chunk leased to this holder id and still processing, if any: a claim that committed
        though its caller never heard back (the connection dropped with the answer)."""
        return await self.repository.held(worker_id_of(worker_id))

    async def update_heartbeat(self, lease: ChunkLease) -> bool:
        """Extend the lease; False means it is lost and the worker must stop and write nothing."""
        return await self.repository.heartbeat(lease.chunk_id, lease.worker_id, lease.attempt)

    async def complete_chunk(
        self, lease: ChunkLease, result_storage_path: str, result_checksum: str
    ) -> DocumentOCRChunk:
        path, checksum = result_fields(result_storage_path, result_checksum)
        done = await self.repository.complete(lease.chunk_id, lease.worker_id, lease.attempt, path, checksum)
        if done is None:
            raise lease_lost(lease)
        return done

    async def fail_chunk(
        self,
        lease: ChunkLease,
        *,
        error_code: str,
        error_message: str,
        retryable: bool,
    ) -> DocumentOCRChunk:
        failed = await self.repository.fail(
            lease.chunk_id,
            lease.worker_id,
            lease.attempt,
            error_code_of(error_code),
            error_message[:ERROR_MESSAGE_MAX],
            retryable,
        )
        if failed is None:
            raise lease_lost(lease)
        log.info(
            "chunk_failed",
            chunk_id=str(failed.id),
            document_id=str(failed.document_id),
            attempt=failed.attempt_count,
            error_code=error_code,
            retryable=retryable,
        )
        return failed

    async def release_chunk(self, lease: ChunkLease, *, error_message: str) -> DocumentOCRChunk:
        """Hand a chunk back because its worker is stopping: failed as worker_stopped (retryable,
        due again at once) without charging the attempt, which max_attempts gives back."""
        released = await self.repository.release(
            lease.chunk_id, lease.worker_id, lease.attempt, error_message[:ERROR_MESSAGE_MAX]
        )
        if released is None:
            raise lease_lost(lease)
        log.info(
            "chunk_released",
            chunk_id=str(released.id),
            document_id=str(released.document_id),
            attempt=released.attempt_count,
            max_attempts=released.max_attempts,
        )
        return released

    # -- recovery -------------------------------------------------------------

    async def detect_stale_chunks(self) -> list[DocumentOCRChunk]:
        return await self.repository.detect_stale(self.settings.stale_chunk_threshold_seconds)

    async def mark_chunk_stale(self, chunk_id: IdLike) -> DocumentOCRChunk | None:
        """Fail one chunk with worker_timeout if it is still stale now; None if it is not."""
        swept = await self.repository.sweep_stale(
            self.settings.stale_chunk_threshold_seconds, as_uuid(chunk_id, "chunk_id")
        )
        self.metrics.swept(len(swept))
        return swept[0] if swept else None

    async def sweep_stale_chunks(self) -> list[DocumentOCRChunk]:
        swept = await self.repository.sweep_stale(self.settings.stale_chunk_threshold_seconds)
        for chunk in swept:
            log.warning(
                "chunk_stale",
                chunk_id=str(chunk.id),
                document_id=str(chunk.document_id),
                attempt=chunk.attempt_count,
                worker_id=chunk.worker_id,
            )
        self.metrics.swept(len(swept))
        return swept

    async def retry_failed_chunks(
        self, document_id: IdLike | None = None, *, force: bool = False
    ) -> list[DocumentOCRChunk]:
        """Send failed chunks back to pending.

        Automatic (force=False): retryable errors with attempts left, after the
        backoff (at once for worker_timeout). Manual (force=True): every failed
        chunk in scope, due now.
        """
        doc_id = as_uuid(document_id, "document_id") if document_id is not None else None
        retried = await self.repository.retry_failed(
            document_id=doc_id,
            base_seconds=self.settings.ocr_retry_base_seconds,
            cap_seconds=self.settings.ocr_retry_cap_seconds,
            force=force,
        )
        for chunk in retried:
            log.info(
                "chunk_retry_scheduled",
                chunk_id=str(chunk.id),
                document_id=str(chunk.document_id),
                attempt=chunk.attempt_count,
                next_attempt_at=chunk.next_attempt_at.isoformat(),
            )
        self.metrics.retried(retried)
        return retried

    async def get_due_pending_chunks(
        self, limit: int = 1000, *, overdue_seconds: float = 0, run_id: str | None = None
    ) -> list[DocumentOCRChunk]:
        """Pending chunks due (by database time) at least overdue_seconds ago, oldest first: of
        the documents reserved for the `chunk-ocr run` run_id, or (None) of those no run holds."""
        return await self.repository.due_pending(limit, overdue_seconds, run_id)

    async def queue_snapshot(self) -> QueueSnapshot:
        """The live queue's counts now; overdue means due for longer than the stale threshold (the
        sweep's rescue threshold), docs/METRICS.md."""
        return await self.repository.queue_snapshot(self.settings.stale_chunk_threshold_seconds)


# -- one service per process ----------------------------------------------------

_service: OCRChunkService | None = None
_service_loop: asyncio.AbstractEventLoop | None = None
_service_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


async def build_repository(settings: Settings) -> ChunkRepository:
    if settings.repository_backend is RepositoryBackend.SUPABASE:
        from app.db.supabase import SupabaseChunkRepository

        return await SupabaseChunkRepository.connect(
            *settings.supabase_credentials(), request_timeout=settings.database_timeout_seconds
        )
    if not settings.database_url:
        raise ConfigurationError(
            "DATABASE_URL is not set (or set SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY)"
        )
    from app.db.postgres import PostgresChunkRepository

    return await PostgresChunkRepository.connect(
        settings.database_url,
        min_size=settings.database_pool_min_size,
        max_size=settings.database_pool_max_size,
        statement_cache_size=settings.statement_cache_size,
        call_timeout=settings.database_timeout_seconds,
    )


async def get_ocr_chunk_service(settings: Settings | None = None) -> OCRChunkService:
    """The process's OCRChunkService, built on first use with the backend the settings choose."""
    global _service, _service_loop
    loop = asyncio.get_running_loop()
    async with _service_locks.setdefault(loop, asyncio.Lock()):
        if _service is None or _service_loop is not loop:
            settings = settings or get_settings()
            _service = OCRChunkService(await build_repository(settings), settings)
            _service_loop = loop
        return _service


async def close_ocr_chunk_service() -> None:
    global _service, _service_loop
    async with _service_locks.setdefault(asyncio.get_running_loop(), asyncio.Lock()):
        if _service is not None:
            await _service.close()
        _service, _service_loop = None, None
