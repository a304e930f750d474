"""The periodic sweep: recover dead workers' chunks and re-enqueue what Redis may have lost.

Safe to run on every worker at once: each SQL function skips rows another
sweeper holds, and job ids make every enqueue idempotent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from uuid import UUID

from app.core.logging import get_logger
from app.models.ocr_chunk import DocumentOCRChunk
from app.services.ocr_chunk_service import OCRChunkService
from app.services.queue import FINALIZE_DOCUMENT_JOB, PROCESS_CHUNK_JOB, JobQueue, enqueue_next_attempts

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class SweepReport:
    stale: int
    retried: int
    enqueued: int
    finalize_enqueued: int


async def retry_failed(
    service: OCRChunkService, queue: JobQueue, document_id: UUID | None = None, *, force: bool = False
) -> list[DocumentOCRChunk]:
    """Send the failed chunks that may run again back to pending and enqueue their next attempts.

    force (a person asked: the API's and the command line's retry) makes every failed chunk of
    the document due now, whatever its error and attempt count; otherwise only retryable
    failures with attempts left go back, due after their backoff. The one way every caller
    retries; an enqueue that Redis refuses is logged and left to the sweep.
    """
    retried = await service.retry_failed_chunks(document_id, force=force)
    if retried:
        await enqueue_next_attempts(queue, retried)
    return retried


async def sweep(service: OCRChunkService, queue: JobQueue, *, limit: int = 1000) -> SweepReport:
    """Fail dead workers' chunks and send retryable failures back (every document's), then
    enqueue what is due on `queue`: the chunks and merges of the documents it carries (a `chunk-ocr
    run`'s private queue: the run's documents; the shared queue: those no run holds)."""
    started = time.perf_counter()
    run_id = queue.run_id
    stale = await service.sweep_stale_chunks()  # processing, heartbeat too old -> failed (worker_timeout)
    retried = await service.retry_failed_chunks()  # retryable failed -> pending (now, or after backoff)
    enqueued = 0
    # the queue may have lost their jobs
    for chunk in await service.get_due_pending_chunks(limit, run_id=run_id):
        enqueued += await queue.enqueue_chunk(chunk.id, chunk.attempt_count + 1)
    # Due for longer than a live worker could take to claim them: their job may sit with a dead
    # worker. Rescue ids change once per threshold period, so a chunk is rescued at most that often.
    threshold = service.settings.stale_chunk_threshold_seconds
    generation = int(time.time() // threshold)
    for chunk in await service.get_due_pending_chunks(limit, overdue_seconds=threshold, run_id=run_id):
        enqueued += await queue.rescue_chunk(chunk.id, chunk.attempt_count + 1, generation)
    if run_id is None:  # not due yet: deferred jobs, so they start on time
        # (a run's sweep leaves them: they may be any document's; the run's come due in a sweep)
        await enqueue_next_attempts(queue, retried)
    finalize = 0
    for document in await service.get_documents_ready_to_merge(run_id=run_id):
        finalize += await queue.rescue_finalize(document.id, generation)
    report = SweepReport(len(stale), len(retried), enqueued, finalize)
    service.metrics.enqueued_again(PROCESS_CHUNK_JOB, enqueued)
    service.metrics.enqueued_again(FINALIZE_DOCUMENT_JOB, finalize)
    if stale or retried or enqueued or finalize:
        log.info(
            "sweep",
            stale=report.stale,
            retried=report.retried,
            enqueued=report.enqueued,
            finalize_enqueued=report.finalize_enqueued,
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
        )
    return report
