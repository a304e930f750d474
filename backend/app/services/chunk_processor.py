"""Process one chunk under its lease: claim, heartbeat, OCR, store, complete.

The recipe, one step per line in ``process`` and ``_run``:
  1. claim the chunk (nothing to claim: a duplicate delivery, done)
  2. keep the lease alive with a heartbeat task; if the lease is lost, stop
  3. a result an earlier attempt stored (recorded on the row, or found at the
     chunk's result path) that verifies: complete with it, no OCR
  4. download the chunk's input PDF, verified against its checksum
  5. OCR its pages in the process pool, with the engine the document asked for
  6. upload the result to its path, then complete the chunk
  7. on an error: fail the chunk with the error's code; retryable ones come back later
  8. cancelled, or the OCR processes stopped under it, while the worker stops: hand
     the chunk back without charging its attempt

Outages are waited out, not turned into failures: a blob store error on upload
is retried (bounded, with backoff) so OCR is never redone because an upload
failed, and a database that stops answering is waited for while the lease can
still be valid (until the stale threshold has passed since the last heartbeat
that landed). A result that could not be recorded stays at its path, where
the next attempt finds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from app.core.backoff import Backoff, retry_transient
from app.core.errors import LeaseLostError, OCRError, RepositoryUnavailableError
from app.core.health import DATABASE, DependencyHealth
from app.core.logging import get_logger
from app.engines.base import PageResult
from app.engines.errors import (
    EngineUnavailableError,
    OcrPoolStoppedError,
    OcrProcessDiedError,
    PageTimeoutError,
    UnknownEngineError,
)
from app.engines.pool import recognize_in_process
from app.metrics import ChunkMetrics
from app.models.limits import WORKER_ID_MAX
from app.models.ocr_chunk import ChunkLease, ChunkStatus, DocumentOCRChunk, ErrorCode
from app.models.results import ChunkResult
from app.services.leases import Fence, run_while_leased
from app.services.ocr_chunk_service import OCRChunkService
from app.services.page_budget import PageTimeoutBudget
from app.services.page_texts import page_texts
from app.services.queue import JobQueue
from app.services.recovery import retry_failed
from app.services.searchable import with_text_layer
from app.storage.base import BlobStore, StoredObject, get_verified
from app.storage.checksums import sha256_hex
from app.storage.errors import ChecksumMismatchError, ObjectNotFoundError, StorageError
from app.storage.paths import chunk_result_path

log = get_logger(__name__)
T = TypeVar("T")
# A page that killed its OCR process this many times in a row is failed without being read again.
_DEATHS_TO_BLAME_A_PAGE = 2


class ChunkOutcome(StrEnum):
    NOT_CLAIMABLE = "not_claimable"  # duplicate or early delivery: nothing done
    DEFERRED = "deferred"  # the database did not answer the claim; the sweep enqueues it again
    COMPLETED = "completed"  # OCR ran and the result is stored
    REUSED = "reused"  # an earlier attempt's stored result verified; no OCR
    FAILED = "failed"  # the chunk is failed with an error code
    LEASE_LOST = "lease_lost"  # another attempt owns the chunk; nothing written
    UNRECORDED = "unrecorded"  # the database stayed away past the lease; the next attempt reuses
    STOPPED = "stopped"  # the worker stopped its OCR processes under it: handed back uncharged


class InternalError(OCRError):
    """An exception we did not expect; retried within the attempt budget."""

    code = "internal_error"
    retryable = True


class ChunkCancelledError(OCRError):
    """The chunk's job ran past CHUNK_JOB_TIMEOUT_SECONDS and arq cancelled it. The chunk is failed
    with the sweep's own code (due again at once, not after a backoff) as the job is cancelled,
    instead of staying leased until the sweep finds its heartbeat stopped. The attempt counts:
    the chunk itself took too long."""

    code = ErrorCode.WORKER_TIMEOUT
    retryable = True


# How long a cancelled job may take to record its chunk's failure (the worker is stopping).
_RECORD_CANCEL_SECONDS = 5.0
_STOPPED_MESSAGE = (
    "the worker stopped (SIGTERM or Ctrl-C past WORKER_GRACE_SECONDS) while reading this chunk; "
    "the attempt is not counted"
)


@dataclass
class _Lease:
    """One attempt's lease as this worker knows it: the token and when it was last confirmed."""

    token: ChunkLease
    confirmed_at: float = field(default_factory=time.monotonic)  # time.monotonic()
    fence: Fence = field(default_factory=Fence)  # raised as the completion is sent

    def valid_until(self, threshold_seconds: float) -> float:
        """After this, the sweep may have failed the attempt: waiting to record is pointless."""
        return self.confirmed_at + threshold_seconds


UNSTORED_RESULTS_KEPT = 16  # chunks' results: text, a few MB at most


def _transient_storage_error(error: BaseException) -> bool:
    # A checksum mismatch does not heal by reading again; it needs the object produced again.
    return (
        isinstance(error, StorageError) and error.retryable and not isinstance(error, ChecksumMismatchError)
    )


@dataclass
class _Claim:
    """ChunkProcessor._claimer's claim: callable again after a connection error."""

    service: OCRChunkService
    holder: str  # the worker id the claim is made under: this worker's, and a nonce
    run_id: str | None  # the `chunk-ocr run` whose documents it claims among (None: the fleet's)
    called: bool = False

    async def __call__(self) -> DocumentOCRChunk | None:
        again, self.called = self.called, True
        chunk = await self.service.claim_for_holder(self.holder, self.run_id)
        if again and chunk is not None:
            log.info("chunk_claim_after_lost_answer", chunk_id=str(chunk.id), worker_id=self.holder)
        return chunk


@dataclass
class ChunkProcessor:
    service: OCRChunkService
    store: BlobStore
    queue: JobQueue
    executor: Executor
    worker_id: str
    health: DependencyHealth = field(default_factory=DependencyHealth)
    storage_backoff: Backoff = field(default_factory=lambda: Backoff(base=0.5, cap=8.0))
    storage_attempts: int = 6  # about 15 s of waits before an upload failure fails the attempt
    database_backoff: Backoff = field(default_factory=lambda: Backoff(base=0.5, cap=5.0))
    # What this worker read and could not store (a full disk, a store away longer than the upload
    # retries): by result path, which names the input's checksum, the engine and the language.
    # The next attempt, if it comes here, stores it without reading the pages again.
    _read_unstored: dict[str, ChunkResult] = field(default_factory=dict)
    # Set when the worker begins to stop (a signal, Ctrl-C, close): a chunk job cancelled from
    # then on is handed back uncharged (ocr_release_chunk), not failed as a timeout.
    _stopping: bool = field(default=False, init=False)
    # Claims, and hand-backs of cancelled jobs, still being written: a job cancelled a second time
    # while it hands its chunk back (arq's close cancels again what its stop cancelled) ends at
    # once and leaves its hand-back running, which the worker's shutdown must await (settle)
    # before it closes the database under it.
    _handing_back: set[asyncio.Future[Any]] = field(default_factory=set, init=False)

    def stop_requested(self) -> None:
        """The worker is stopping: the chunks it cancels from now on did nothing wrong."""
        self._stopping = True

    async def settle(self) -> None:
        """Wait for the hand-backs of cancelled jobs still being written (a few seconds at most:
        what is not written by then, the stale sweep finds)."""
        if self._handing_back:
            await asyncio.wait(set(self._handing_back), timeout=2 * _RECORD_CANCEL_SECONDS)

    def _shielded(self, work: Awaitable[Any]) -> asyncio.Future[Any]:
        """`work` as a task of its own, which settle awaits: its caller waits for it through
        asyncio.shield, so a cancel of the caller does not stop it."""
        task = asyncio.ensure_future(work)
        self._handing_back.add(task)
        task.add_done_callback(self._handing_back.discard)
        return task

    async def process(self, chunk_id: str) -> ChunkOutcome:
        """Run one chunk job: claim the chunk the fair order picks and see it through.

        `chunk_id` is the chunk the job was enqueued for. Every due pending chunk has a job, so
        there are as many jobs as chunks to claim, but which chunk a job runs is the database's
        choice (ocr_claim_next_chunk: fewest chunks in flight per matter, then per document), not
        arq's first-in-first-out order: a small document is not queued behind a large one.
        """
        outcome = await self._process(chunk_id)
        self.metrics.job_done(outcome.value)
        return outcome

    async def _process(self, chunk_id: str) -> ChunkOutcome:
        claim = self._claimer()
        claiming = self._shielded(self._with_database(claim, deadline=time.monotonic() + self._threshold))
        try:
            chunk = await asyncio.shield(claiming)
        except asyncio.CancelledError:
            await self._hand_back_claim(claim, claiming)
            raise
        except RepositoryUnavailableError as exc:
            log.warning(
                "chunk_claim_deferred", job_chunk_id=chunk_id, worker_id=self.worker_id, error=str(exc)
            )
            return ChunkOutcome.DEFERRED
        if chunk is None:
            log.info("chunk_not_claimable", job_chunk_id=chunk_id, worker_id=self.worker_id)
            return ChunkOutcome.NOT_CLAIMABLE
        lease = _Lease(chunk.lease)
        bound = log.bind(
            chunk_id=str(chunk.id),
            document_id=str(chunk.document_id),
            chunk_index=chunk.chunk_index,
            attempt=lease.token.attempt,
            worker_id=chunk.worker_id,
            engine=chunk.engine,
            language=chunk.language,
        )
        started = time.perf_counter()
        try:
            outcome = await self._with_heartbeat(lease, lambda: self._run(chunk, lease))
        except LeaseLostError:
            bound.warning("chunk_lease_lost", duration_ms=_ms(started))
            self.metrics.lease_lost(LeaseLostError.code)
            return ChunkOutcome.LEASE_LOST
        except RepositoryUnavailableError as exc:
            bound.warning("chunk_unrecorded", error=str(exc), duration_ms=_ms(started))
            return ChunkOutcome.UNRECORDED
        except asyncio.CancelledError:
            await self._record_cancel(lease, bound, started)
            raise
        except OcrPoolStoppedError:
            # The worker's shutdown stopped the OCR processes before this job saw the stop's
            # cancel (one that asyncio lost, or one still on its way): the worker stopped, not
            # the chunk.
            await self._hand_back(lease, bound, started, stopped=True)
            return ChunkOutcome.STOPPED
        except Exception as exc:  # every failure must land on the row, or the chunk waits for the sweep
            error = _domain_error(exc)
            bound.error(
                "chunk_attempt_failed",
                error_code=error.code,
                retryable=error.retryable,
                error=str(error),
                duration_ms=_ms(started),
                exc_info=not isinstance(exc, OCRError),
            )
            return await self._fail(lease, error, bound)
        bound.info("chunk_done", outcome=outcome.value, pages=chunk.page_count, duration_ms=_ms(started))
        if outcome is ChunkOutcome.COMPLETED:  # a reused result ran no OCR: not an engine's duration
            self.metrics.chunk_read(chunk.engine, time.perf_counter() - started)
        await self._after_complete(chunk)
        return outcome

    def _claimer(self) -> _Claim:
        """One claim, safe to call again after a connection error.

        The claim is made under a holder id of its own (this worker's id and a nonce), and each
        call returns what that holder already holds before it claims (ocr_claim_for_holder): an
        earlier call may have committed and lost its answer, or may not have run yet, and
        claiming again would take a second chunk while the first waited, leased to nobody, for
        the stale sweep and a second attempt.
        """
        holder = f"{self.worker_id[: WORKER_ID_MAX - 9]}/{secrets.token_hex(4)}"
        return _Claim(self.service, holder, self.queue.run_id)

    async def _hand_back_claim(
        self, claim: _Claim, claiming: asyncio.Future[DocumentOCRChunk | None]
    ) -> None:
        """The job was cancelled while it claimed. The claim (`claiming`, shielded) runs on to its
        answer, and what it took is handed back as a chunk cancelled while read is. Cancelled
        itself, it could commit after the hand-back looked for it: a cancel request that reaches
        the database after the commit, or an HTTP request the server runs on, while a second
        cancel (arq's close) ended the job before the first was answered. The chunk was then left
        leased to nobody until the stale sweep charged it an attempt. A claim whose answer was
        lost (a dropped connection) may have committed too: what its holder holds is handed
        back. Best effort, within a few seconds."""
        if not claim.called:  # not begun: it never will
            claiming.cancel()
            return

        async def hand_back() -> None:
            try:
                held = await claiming
            except OCRError:
                held = await self.service.held_chunk(claim.holder)
            if held is not None:
                bound = log.bind(
                    chunk_id=str(held.id), document_id=str(held.document_id), worker_id=claim.holder
                )
                await self._record_cancel(_Lease(held.lease), bound, time.perf_counter())

        handing = self._shielded(hand_back())
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(handing), 2 * _RECORD_CANCEL_SECONDS)

    async def _run(self, chunk: DocumentOCRChunk, lease: _Lease) -> ChunkOutcome:
        path = self.result_path(chunk)
        earlier = await self._stored_result(chunk, path)
        if earlier is not None:
            await self._complete(lease, earlier)
            return ChunkOutcome.REUSED
        result = await self.recognize(chunk)
        await self._confirm_lease(lease)  # a lease lost during OCR must not lead to a write
        stored = await self.put_result(path, result.to_bytes())
        self._read_unstored.pop(path, None)
        await self._complete(lease, stored)
        return ChunkOutcome.COMPLETED

    @staticmethod
    def result_path(chunk: DocumentOCRChunk) -> str:
        if not chunk.input_checksum:
            raise InternalError(f"chunk {chunk.id} has no input object", chunk_id=chunk.id)
        return chunk_result_path(
            chunk.matter_id,
            chunk.document_id,
            chunk.chunk_index,
            chunk.input_checksum,
            chunk.engine,
            chunk.language,
        )

    async def _stored_result(self, chunk: DocumentOCRChunk, path: str) -> StoredObject | None:
        """A result an earlier attempt stored, if it still verifies."""
        if chunk.result_storage_path and chunk.result_checksum:  # recorded on the row
            try:
                data = await get_verified(self.store, chunk.result_storage_path, chunk.result_checksum)
            except StorageError as exc:
                log.warning("chunk_recorded_result_unusable", chunk_id=str(chunk.id), error=str(exc))
            else:
                return StoredObject(chunk.result_storage_path, chunk.result_checksum, len(data))
        if chunk.attempt_count < 2:
            return None  # a first attempt has nothing to find: spare the storage round trip
        try:
            data = await self.store.get(path)  # stored, but the attempt died before recording it
        except ObjectNotFoundError:
            return None
        except StorageError as exc:
            log.warning("chunk_stored_result_unreadable", chunk_id=str(chunk.id), error=str(exc))
            return None
        if not _result_of(chunk, data):
            log.warning("chunk_stored_result_rejected", chunk_id=str(chunk.id), path=path)
            return None
        return StoredObject(path, sha256_hex(data), len(data))

    async def recognize(self, chunk: DocumentOCRChunk) -> ChunkResult:
        """OCR the chunk's input PDF in the process pool (also used by finalize to repair), or take
        what an earlier attempt of this worker read and could not store (_read_unstored)."""
        pdf = await self.input_pdf(chunk)
        path = self.result_path(chunk)
        result = self._read_unstored.pop(path, None)
        if result is not None:
            log.info("chunk_ocr_reused", chunk_id=str(chunk.id), pages=len(result.pages))
        else:
            result = await self._read(chunk, pdf)
        self._remember(path, result)  # until it is stored: _run forgets it then
        if not self.service.settings.searchable_pdf:
            return result
        return await with_text_layer(self.put_result, path, pdf, result)

    def _remember(self, path: str, result: ChunkResult) -> None:
        self._read_unstored[path] = result
        while len(self._read_unstored) > UNSTORED_RESULTS_KEPT:
            self._read_unstored.pop(next(iter(self._read_unstored)))

    async def _read(self, chunk: DocumentOCRChunk, pdf: bytes) -> ChunkResult:
        ocr_started = time.perf_counter()
        try:
            pages, engine_version = await self._recognize_pages(chunk, pdf)
        except UnknownEngineError as exc:
            raise EngineUnavailableError(f"worker {self.worker_id} cannot run this engine: {exc}") from None
        self.metrics.pages_read(chunk.engine, time.perf_counter() - ocr_started, len(pages))
        # One event per engine run: how often OCR really ran (tests count these).
        log.info(
            "chunk_ocr",
            chunk_id=str(chunk.id),
            engine=chunk.engine,
            language=chunk.language,
            pages=len(pages),
            duration_ms=_ms(ocr_started),
        )
        result = ChunkResult(
            document_id=chunk.document_id,
            chunk_index=chunk.chunk_index,
            page_start=chunk.page_start,
            page_end=chunk.page_end,
            engine=chunk.engine,
            engine_version=engine_version,
            language=chunk.language,
            pages=page_texts(pages),
        )
        if not result.covers_its_range():
            raise InternalError(
                f"engine returned pages {[p.page_number for p in result.pages]} "
                f"for pages {chunk.page_start}-{chunk.page_end}"
            )
        return result

    async def input_pdf(self, chunk: DocumentOCRChunk) -> bytes:
        """The chunk's input PDF, verified against its checksum."""
        if not chunk.input_storage_path or not chunk.input_checksum:
            raise InternalError(f"chunk {chunk.id} has no input object", chunk_id=chunk.id)
        path, checksum = chunk.input_storage_path, chunk.input_checksum
        return await retry_transient(
            lambda: get_verified(self.store, path, checksum),
            transient=(StorageError,),
            when=_transient_storage_error,
            backoff=self.storage_backoff,
            attempts=self.storage_attempts,
        )

    async def _recognize_pages(self, chunk: DocumentOCRChunk, pdf: bytes) -> tuple[list[PageResult], str]:
        """The engine's pages in the process pool. A page on which PDFium kills its OCR process
        (it aborts on a failed allocation, or crashes on a malformed page) fails alone: once it
        has done so twice in a row (once could be the OOM killer or an operator), or once when it
        used up its CPU time (page_timeout: a second run ends the same way), the chunk runs again
        at once without it. Past its document's budget of such pages, each page is read within
        fewer seconds (app.services.page_budget). The pages read before a death are kept, not
        read again (app.engines._read_pages)."""
        loop = asyncio.get_running_loop()
        lost: dict[int, tuple[str, str]] = {}
        read: dict[int, PageResult] = {}
        deaths: Counter[int] = Counter()
        budget = PageTimeoutBudget(self.queue, self.service.settings)
        page_seconds = await budget.page_seconds(chunk.document_id)
        while True:
            try:
                pages: tuple[list[PageResult], str] = await loop.run_in_executor(
                    self.executor,
                    recognize_in_process,
                    chunk.engine,
                    pdf,
                    chunk.page_start,
                    chunk.language,
                    lost,
                    page_seconds,
                    read,
                )
                return pages
            except OcrProcessDiedError as exc:
                page = exc.context.get("page")
                if not isinstance(page, int) or not chunk.page_start <= page <= chunk.page_end:
                    raise  # killed before any page: the attempt fails
                for earlier in exc.pages_read:  # a page kept from a run before stood in blank in this one
                    number = earlier.page_number
                    if chunk.page_start <= number <= chunk.page_end and number != page and number not in lost:
                        read.setdefault(number, earlier)
                error = exc
                if isinstance(exc, PageTimeoutError):  # its message names the limit it used up
                    error, page_seconds = await budget.timed_out(chunk.document_id, exc, page_seconds)
                deaths[page] += 1
                if deaths[page] >= _DEATHS_TO_BLAME_A_PAGE or not error.retryable:
                    lost[page] = (error.code, error.message)
                log.warning(
                    "ocr_process_died_on_page",
                    chunk_id=str(chunk.id),
                    page=page,
                    error_code=exc.code,
                    deaths=deaths[page],
                    page_failed=page in lost,
                    pages_kept=len(read),
                )

    async def put_result(
        self, path: str, data: bytes, content_type: str = "application/json"
    ) -> StoredObject:
        """Upload, retrying transient blob store errors: the OCR behind data is not redone for them."""

        def retrying(error: BaseException, wait: float) -> None:
            log.warning("result_upload_retry", path=path, error=str(error), wait_seconds=round(wait, 2))

        return await retry_transient(
            lambda: self.store.put(path, data, content_type),
            transient=(StorageError,),
            when=_transient_storage_error,
            backoff=self.storage_backoff,
            attempts=self.storage_attempts,
            on_failure=retrying,
        )

    async def put_result_file(self, path: str, source: Path, content_type: str) -> StoredObject:
        """put_result for a file on disk (a searchable PDF), streamed, not read into memory."""
        return await retry_transient(
            lambda: self.store.put_file(path, source, content_type),
            transient=(StorageError,),
            when=_transient_storage_error,
            backoff=self.storage_backoff,
            attempts=self.storage_attempts,
        )

    async def _confirm_lease(self, lease: _Lease) -> None:
        try:
            alive = await self.service.update_heartbeat(lease.token)
        except RepositoryUnavailableError as exc:
            # Cannot ask. Storing is still safe: the path is this chunk's own and recording is fenced.
            self.health.failed(DATABASE, exc)
            return
        if not alive:
            raise LeaseLostError("lease lost before upload", chunk_id=lease.token.chunk_id)
        lease.confirmed_at = time.monotonic()

    async def _complete(self, lease: _Lease, stored: StoredObject) -> None:
        token = lease.token
        lease.fence.raised = True
        try:
            await self._with_database(
                lambda: self.service.complete_chunk(token, stored.path, stored.sha256),
                deadline=lease.valid_until(self._threshold),
            )
        except LeaseLostError:
            # A completion whose answer the outage swallowed looks like a lost lease on the retry.
            row = await self.service.get_chunk(token.chunk_id)
            if not (
                row.status is ChunkStatus.COMPLETED
                and (row.worker_id, row.attempt_count, row.result_checksum)
                == (token.worker_id, token.attempt, stored.sha256)
            ):
                raise

    async def _with_database(self, operation: Callable[[], Awaitable[T]], *, deadline: float) -> T:
        """Run a database call, waiting out an outage until deadline (time.monotonic())."""

        def waiting(error: BaseException, wait: float) -> None:
            self.health.failed(DATABASE, error)

        value = await retry_transient(
            operation,
            transient=(RepositoryUnavailableError,),
            backoff=self.database_backoff,
            deadline=deadline,
            on_failure=waiting,
        )
        self.health.restored(DATABASE)
        return value

    async def _with_heartbeat(self, lease: _Lease, work: Callable[[], Awaitable[T]]) -> T:
        """Run work while a heartbeat extends the lease; cancel it the moment the lease is lost."""

        def beaten(error: OCRError | None) -> None:
            if error is None:
                lease.confirmed_at = time.monotonic()
                self.health.restored(DATABASE)
                return
            if isinstance(error, RepositoryUnavailableError):
                self.health.failed(DATABASE, error)
            log.warning("heartbeat_failed", chunk_id=str(lease.token.chunk_id), error=str(error))

        return await run_while_leased(
            work,
            heartbeat=lambda: self.service.update_heartbeat(lease.token),
            interval=self.service.settings.heartbeat_interval_seconds,
            what=f"chunk {lease.token.chunk_id}",
            on_beat=beaten,
            fence=lease.fence,
        )

    async def _record_cancel(self, lease: _Lease, bound: Any, started: float) -> None:
        """The job is being cancelled: hand its chunk back (due again at once) so another worker
        takes it now, not when the sweep finds it stale. A worker that is stopping releases it
        without charging the attempt; a job past its timeout fails it as worker_timeout."""
        await self._hand_back(lease, bound, started, stopped=self._stopping)

    async def _hand_back(self, lease: _Lease, bound: Any, started: float, *, stopped: bool) -> None:
        """Release the chunk uncharged as worker_stopped (`stopped`), or fail it as a
        worker_timeout. Best effort, within a few seconds: what is not recorded, the sweep still
        finds (as a worker_timeout)."""
        write: Callable[[], Awaitable[DocumentOCRChunk]]
        if stopped:
            code: str = ErrorCode.WORKER_STOPPED
            write = partial(self.service.release_chunk, lease.token, error_message=_STOPPED_MESSAGE)
        else:
            error = ChunkCancelledError(
                "the chunk's job ran past CHUNK_JOB_TIMEOUT_SECONDS and was cancelled while reading it"
            )
            code = error.code
            write = partial(
                self.service.fail_chunk,
                lease.token,
                error_code=code,
                error_message=str(error),
                retryable=True,
            )
        bound.warning("chunk_cancelled", error_code=code, duration_ms=_ms(started))
        recording = self._shielded(self._record_failure(lease, code, write, bound))
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(recording), _RECORD_CANCEL_SECONDS)

    async def _fail(self, lease: _Lease, error: OCRError, bound: Any) -> ChunkOutcome:
        return await self._record_failure(
            lease,
            error.code,
            lambda: self.service.fail_chunk(
                lease.token, error_code=error.code, error_message=str(error), retryable=error.retryable
            ),
            bound,
        )

    async def _record_failure(
        self, lease: _Lease, code: str, write: Callable[[], Awaitable[DocumentOCRChunk]], bound: Any
    ) -> ChunkOutcome:
        """Write the attempt's end (`write`: fail or release, under the lease), then schedule the
        next attempt at once when the row says there is one."""
        try:
            failed = await self._with_database(write, deadline=lease.valid_until(self._threshold))
        except LeaseLostError:
            self.metrics.lease_lost(code)  # lost while recording this failure
            return ChunkOutcome.LEASE_LOST
        except RepositoryUnavailableError as exc:  # the sweep will time the attempt out instead
            bound.warning("chunk_failure_unrecorded", error=str(exc))
            return ChunkOutcome.UNRECORDED
        if failed.error_retryable and failed.attempt_count < failed.max_attempts:
            # Schedule the next attempt now rather than waiting for the sweep.
            try:
                await retry_failed(self.service, self.queue, failed.document_id)
            except OCRError as exc:  # the sweep retries and enqueues them instead
                bound.warning("chunk_retry_not_scheduled", error_code=exc.code, error=str(exc))
        return ChunkOutcome.FAILED

    async def _after_complete(self, chunk: DocumentOCRChunk) -> None:
        try:
            progress = await self.service.get_chunk_progress(chunk.document_id)
            if progress.is_complete:
                await self.queue.enqueue_finalize(chunk.document_id)
            elif progress.is_stuck:  # the last movable chunk is done and some other one failed for good
                await self.service.refresh_document_status(chunk.document_id)
        except OCRError as exc:  # the sweep finds documents ready to merge and enqueues them
            log.warning("finalize_not_enqueued", document_id=str(chunk.document_id), error=str(exc))

    @property
    def metrics(self) -> ChunkMetrics:
        return self.service.metrics

    @property
    def _threshold(self) -> float:
        return self.service.settings.stale_chunk_threshold_seconds


def _result_of(chunk: DocumentOCRChunk, data: bytes) -> bool:
    """Whether data is a chunk result for exactly this chunk, engine, language and pages."""
    try:
        result = ChunkResult.model_validate_json(data)
    except ValidationError:
        return False
    return (
        result.document_id == chunk.document_id
        and result.chunk_index == chunk.chunk_index
        and (result.page_start, result.page_end) == (chunk.page_start, chunk.page_end)
        and result.engine == chunk.engine
        and result.language == chunk.language
        and result.covers_its_range()
    )


def _domain_error(exc: BaseException) -> OCRError:
    if isinstance(exc, UnknownEngineError):
        return EngineUnavailableError(str(exc))
    return exc if isinstance(exc, OCRError) else InternalError(f"{type(exc).__name__}: {exc}")


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
