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
