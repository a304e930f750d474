"""A chunk job cancelled mid-chunk hands its chunk back at once, due again now, not left leased
until the sweep finds its heartbeat stopped (90 s by default): past arq's job timeout as a
worker_timeout, an attempt like any failure; when its worker is stopping (SIGTERM or Ctrl-C past
the grace period) as worker_stopped, the attempt given back."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from uuid import UUID

import asyncpg
import pytest
from arq.connections import ArqRedis

from app.core.config import Settings
from app.engines.pool import stop_ocr_pool
from app.models.ocr_chunk import ChunkStatus, DocumentOCRChunk
from app.pdf.samples import make_scanned_pdf
from app.services.chunk_processor import ChunkOutcome
from app.services.planner import start_document
from app.services.queue import QUEUE_NAME, ArqJobQueue, chunk_job_id
from app.services.runtime import Runtime, build_runtime
from tests.late_cancels import late_cancels


async def _one_chunk_scan(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, path: Path, pages: int
) -> DocumentOCRChunk:
    """A scan of `pages` pages started as one tesseract chunk, queued."""
    make_scanned_pdf(path, pages=pages, seed=4)
    started = await start_document(
        runtime.service,
        runtime.store,
        ArqJobQueue(arq_redis),
        path,
        matter_id=matter_id,
        engine="tesseract",
        chunk_pages=pages,
        workers=1,
    )
    (chunk,) = started.chunks
    return chunk


async def _until(condition: Callable[[], Awaitable[bool]], seconds: float = 30) -> None:
    for _ in range(int(seconds / 0.02)):
        if await condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{condition.__name__}: not within {seconds} s")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("stopping", [False, True], ids=["job-timeout", "worker-stopping"])
async def test_a_cancelled_job_hands_its_chunk_back_at_once(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, stopping: bool
) -> None:
    # about 10 s of OCR: still reading at 3 s
    chunk = await _one_chunk_scan(runtime, arq_redis, matter_id, tmp_path / "scan.pdf", pages=12)
    if stopping:
        runtime.processor.stop_requested()  # what the worker's stop (handle_sig) does first

    with pytest.raises(TimeoutError):  # as arq cancels a job at its timeout, or a stop past its grace
        await asyncio.wait_for(runtime.processor.process(str(chunk.id)), timeout=3)

    row = await runtime.service.get_chunk(chunk.id)
    assert (row.status, row.attempt_count) == (ChunkStatus.PENDING, 1)
    assert row.error_message is not None
    if stopping:  # the worker stopped, not the chunk: the attempt is given back
        assert (row.error_code, row.max_attempts) == ("worker_stopped", 4)
        assert "WORKER_GRACE_SECONDS" in row.error_message
    else:  # the chunk took too long: the attempt counts
        assert (row.error_code, row.max_attempts) == ("worker_timeout", 3)
        assert "CHUNK_JOB_TIMEOUT_SECONDS" in row.error_message
    assert await arq_redis.zscore(QUEUE_NAME, chunk_job_id(chunk.id, 2)) is not None  # due again


@pytest.mark.timeout(120)
async def test_a_job_cancelled_while_it_claims_leaves_no_chunk_leased(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path
) -> None:
    """A stop that cancels a job while its claim is in flight: the claim may commit and its answer
    be lost, which left the chunk leased to nobody until the stale sweep charged it an attempt
    (found with `run` stopped at once, one chunk read and one just claimed). Whatever the claim
    took is handed back. The cancel lands at moments spread over the claim's round trip."""
    chunk = await _one_chunk_scan(runtime, arq_redis, matter_id, tmp_path / "scan.pdf", pages=1)
    runtime.processor.stop_requested()
    for step in range(40):
        job = asyncio.ensure_future(runtime.processor.process(str(chunk.id)))
        await asyncio.sleep(step * 0.0005)  # 0 to 20 ms: before, during and after the claim
        job.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await job
        row = await runtime.service.get_chunk(chunk.id)
        assert row.status is not ChunkStatus.PROCESSING, f"left leased by a cancel after {step * 0.5} ms"
        if row.status is ChunkStatus.FAILED:
            await runtime.service.retry_failed_chunks(chunk.document_id)


@pytest.mark.timeout(120)
async def test_a_job_cancelled_again_while_it_hands_back_is_handed_back_before_the_worker_closes(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, pool: asyncpg.Pool
) -> None:
    """arq's close cancels again the jobs its stop cancelled: the second cancel ends the job while
    its hand-back is being written, and the worker's shutdown closed the database under it, which
    left the chunk failed as worker_stopped, not due again until some worker's sweep sent it back
    (none, after a `chunk-ocr run` stopped). The shutdown waits for the hand-back first."""
    chunk = await _one_chunk_scan(runtime, arq_redis, matter_id, tmp_path / "scan.pdf", pages=3)
    runtime.processor.stop_requested()
    job = asyncio.ensure_future(runtime.processor.process(str(chunk.id)))

    async def claimed() -> bool:
        return (await runtime.service.get_chunk(chunk.id)).status is ChunkStatus.PROCESSING

    async def handing_back() -> bool:  # its write waits for the row this test holds
        return bool(
            await pool.fetchval(
                "select count(*) from pg_stat_activity"
                " where wait_event_type = 'Lock' and query like '%ocr_release_chunk%'"
            )
        )

    await _until(claimed)
    await asyncio.sleep(0.5)  # reading its pages (about 3 s of OCR)
    async with pool.acquire() as holder, holder.transaction():
        # The document's row held: the hand-back (which updates it) waits, as on a loaded machine.
        await holder.execute("select 1 from documents where id = $1 for update", chunk.document_id)
        job.cancel()  # the stop
        await _until(handing_back)
        job.cancel()  # arq's close, while the hand-back is being written
        with contextlib.suppress(asyncio.CancelledError):
            await job
        closing = asyncio.ensure_future(runtime.close())  # what the worker's shutdown hook does next
        await asyncio.sleep(0.5)
    await closing

    row = await pool.fetchrow(
        "select status, error_code, attempt_count, max_attempts from document_ocr_chunks where id = $1",
        chunk.id,
    )
    assert tuple(row) == ("pending", "worker_stopped", 1, 4)
    assert await arq_redis.zscore(QUEUE_NAME, chunk_job_id(chunk.id, 2)) is not None  # due again


@pytest.mark.timeout(120)
@pytest.mark.parametrize("when", ["mid-read", "before-read"])
async def test_ocr_processes_stopped_under_a_chunk_hand_it_back_uncharged(
    runtime: Runtime, arq_redis: ArqRedis, matter_id: UUID, tmp_path: Path, pool: asyncpg.Pool, when: str
) -> None:
    """The worker's shutdown stops its OCR processes (stop_ocr_pool) once its jobs have ended;
    a job that had not seen the stop's cancel (asyncio lost it) was still reading. Its read
    ended with the pool's own error (a killed process, or no process to run on), which the chunk
    took as an internal error: failed, its attempt charged (seen as `chunk-ocr run` stopped by
    SIGTERM from a script). The worker stopped, not the chunk: it is handed back uncharged."""
    chunk = await _one_chunk_scan(runtime, arq_redis, matter_id, tmp_path / "scan.pdf", pages=12)
    runtime.processor.stop_requested()  # the worker's stop, first (handle_sig)
    if when == "before-read":  # the job reaches the pool after the shutdown stopped it
        await asyncio.to_thread(stop_ocr_pool, runtime.executor)
    job = asyncio.ensure_future(runtime.processor.process(str(chunk.id)))

    async def reading() -> bool:
        return (await runtime.service.get_chunk(chunk.id)).status is ChunkStatus.PROCESSING

    if when == "mid-read":
        await _until(reading)
        await asyncio.sleep(1.5)  # in tesseract: about 10 s of OCR
        await asyncio.to_thread(stop_ocr_pool, runtime.executor)
    assert await asyncio.wait_for(job, 30) is ChunkOutcome.STOPPED

    row = await pool.fetchrow(
        "select status, error_code, attempt_count, max_attempts from document_ocr_chunks where id = $1",
        chunk.id,
    )
    assert tuple(row) == ("pending", "worker_stopped", 1, 4)
    assert await arq_redis.zscore(QUEUE_NAME, chunk_job_id(chunk.id, 2)) is not None  # due again


@pytest.mark.timeout(120)
async def test_a_job_cancelled_twice_while_its_claim_waits_leaves_no_chunk_leased(
    pipeline_settings: Settings,
    arq_redis: ArqRedis,
    matter_id: UUID,
    tmp_path: Path,
    pool: asyncpg.Pool,
    database_url: str,
) -> None:
    """A stop cancels a job whose claim is still at the database, and arq's close cancels the job
    again before the first cancel is answered. The job looked for what its claim held, found
    nothing yet, and ended; then the claim committed (its cancel request reached the database
    too late, as on a busy machine), and the chunk stayed leased to nobody until the stale sweep
    charged it an attempt (seen as `chunk-ocr run` stopped by SIGTERM). The claim's own answer
    now says what to hand back. Here the claim waits on a table lock, and the cancel request is
    held back until the claim has committed."""
    async with late_cancels(database_url) as proxy:
        settings = pipeline_settings.model_copy(update={"database_url": proxy.url})
        runtime = await build_runtime(settings, ArqJobQueue(arq_redis), worker_id="late-cancels")
        try:
            chunk = await _one_chunk_scan(runtime, arq_redis, matter_id, tmp_path / "scan.pdf", pages=1)
            runtime.processor.stop_requested()

            async def claims(where: str) -> int:
                return int(
                    await pool.fetchval(
                        "select count(*) from pg_stat_activity"
                        f" where {where} and query like '%ocr_claim_for_holder%' and pid <> pg_backend_pid()"
                    )
                )

            async def claim_waits() -> bool:
                return await claims("wait_event_type = 'Lock'") == 1

            async def claim_ended() -> bool:
                return await claims("state = 'active'") == 0

            async with pool.acquire() as holder:
                locked = holder.transaction()
                await locked.start()
                await holder.execute("lock table public.document_ocr_chunks in exclusive mode")
                job = asyncio.ensure_future(runtime.processor.process(str(chunk.id)))
                await _until(claim_waits)
                job.cancel()  # the stop
                await asyncio.sleep(0.3)
                job.cancel()  # arq's close
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait_for(job, 30)
                await locked.commit()  # the claim goes on, and commits
            await _until(claim_ended)
            await runtime.processor.settle()
            proxy.release()
            await asyncio.sleep(0.2)  # the late cancel request, if any, reaches an idle server
        finally:
            await runtime.close()

    row = await pool.fetchrow(
        "select status, error_code, attempt_count, max_attempts from document_ocr_chunks where id = $1",
        chunk.id,
    )
    assert row["status"] != "processing", "left leased to nobody"
    assert tuple(row) == ("pending", "worker_stopped", 1, 4)
