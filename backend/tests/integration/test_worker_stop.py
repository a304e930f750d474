"""A stop whose cancellation something swallowed still stops ChunkOcrWorker.

arq stops a worker by cancelling its main task once. If the task is awaiting a call that
catches that CancelledError without passing it on (on Python 3.11, asyncio.wait_for does
when the call it waits on ends as the cancel lands), arq's loop polls on with job-taking
switched off, and the process never exits: seen as workers still running 20 s after a
SIGTERM sent while their first health check ran.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Any

from arq import func
from arq.connections import ArqRedis
from structlog.testing import capture_logs

from app.services.queue import redis_settings
from app.worker_loop import ChunkOcrWorker


async def test_a_swallowed_stop_still_ends_the_worker_and_runs_its_shutdown(
    redis_url: str, arq_redis: ArqRedis
) -> None:
    started = asyncio.Event()
    shut_down: list[bool] = []

    async def startup_that_swallows_the_stop(ctx: dict[str, Any]) -> None:
        started.set()
        with contextlib.suppress(asyncio.CancelledError):  # caught and not passed on
            await asyncio.sleep(30)  # the stop's cancel lands here

    async def shutdown(ctx: dict[str, Any]) -> None:
        shut_down.append(True)

    async def nothing(ctx: dict[str, Any]) -> None:
        return None

    worker = ChunkOcrWorker(
        functions=[func(nothing, name="nothing")],
        redis_settings=redis_settings(redis_url),
        queue_name="worker-stop-test",
        poll_delay=0.05,
        handle_signals=False,
        on_startup=startup_that_swallows_the_stop,
        on_shutdown=shutdown,
    )
    main = worker.main_task = asyncio.create_task(worker.main())
    with capture_logs() as logs:
        await asyncio.wait_for(started.wait(), 10)
        worker.handle_sig(signal.SIGTERM)
        await asyncio.wait({main}, timeout=10)
        assert main.done(), "the worker polls on after its stop"
        assert main.cancelled()
        await worker.close()
    assert shut_down == [True]
    assert [e["event"] for e in logs if e["event"] == "worker_stop_resumed"] == ["worker_stop_resumed"]


async def test_a_job_that_lost_the_stops_cancel_is_cancelled_and_awaited_before_the_shutdown(
    redis_url: str, arq_redis: ArqRedis
) -> None:
    """arq cancels a running job through its run_job task, whose asyncio.wait_for passes the
    cancel on to the job. When the job's own await loses it (on 3.11, a wait_for whose call ends
    as the cancel lands), the job reads on; the second cancel, close's, then ended run_job alone,
    and the shutdown hook stopped the OCR processes under a job still reading, which failed its
    chunk and charged the attempt (seen as `chunk-ocr run` stopped by SIGTERM from a script). Now
    the stop cancels the job itself, and close awaits it before the shutdown hook."""
    queue = "worker-stop-lost-cancel"
    reading = asyncio.Event()
    ended: list[str] = []
    shut_down: list[list[str]] = []

    async def job_that_loses_a_cancel(ctx: dict[str, Any]) -> None:
        reading.set()
        with contextlib.suppress(asyncio.CancelledError):  # lost, as 3.11's wait_for can lose it
            await asyncio.sleep(30)
        try:
            await asyncio.sleep(30)  # reads on
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise
        ended.append("read to the end")

    async def shutdown(ctx: dict[str, Any]) -> None:  # where the OCR processes are stopped
        shut_down.append(list(ended))

    worker = ChunkOcrWorker(
        functions=[func(job_that_loses_a_cancel, name="reads")],
        redis_settings=redis_settings(redis_url),
        queue_name=queue,
        poll_delay=0.05,
        handle_signals=False,
        on_shutdown=shutdown,
    )
    await arq_redis.enqueue_job("reads", _queue_name=queue)
    main = worker.main_task = asyncio.create_task(worker.main())
    await asyncio.wait_for(reading.wait(), 10)
    (job,) = worker.job_tasks.values()
    try:
        worker.handle_sig(signal.SIGTERM)
        await asyncio.wait({main}, timeout=10)
        await asyncio.wait_for(worker.close(), 10)
        assert shut_down == [["cancelled"]], "the shutdown hook ran under a job still reading"
    finally:
        job.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await job
