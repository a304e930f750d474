"""ChunkOcrWorker against a Redis that this test stops and starts while jobs are being started.

arq's own Worker ends on the first Redis error of its poll loop (a refused
connect, or a connection lost while it WATCHes a job key), and each such error
inside its start_jobs keeps one of its job slots forever. Here a real worker on
a private Redis goes through a storm of restarts, then must still run a fresh
batch of jobs to the end with every slot free.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from arq import create_pool, func
from arq.connections import ArqRedis
from arq.worker import Worker
from structlog.testing import capture_logs

from app.services.queue import redis_settings
from app.worker_loop import ChunkOcrWorker, adopt_running_worker
from tests import servers
from tests.e2e.conftest import wait_for
from tests.servers import PrivateRedis

private_redis = servers.private_redis
QUEUE = "worker-loop-test"
MAX_JOBS = 3


@pytest.fixture
async def client(private_redis: PrivateRedis) -> AsyncIterator[ArqRedis]:
    pool = await create_pool(redis_settings(private_redis.url))
    yield pool
    await pool.aclose()


async def enqueue(client: ArqRedis, values: range, tag: str) -> None:
    for value in values:
        await client.enqueue_job("record", tag, value, _queue_name=QUEUE)


def worker_options(private_redis: PrivateRedis, done: list[tuple[str, int]], **extra: Any) -> dict[str, Any]:
    async def record(ctx: dict[str, Any], tag: str, value: int) -> None:
        done.append((tag, value))

    return {
        "functions": [func(record, name="record", keep_result=0)],
        "redis_settings": redis_settings(private_redis.url),
        "queue_name": QUEUE,
        "poll_delay": 0,
        "max_jobs": MAX_JOBS,
        "handle_signals": False,
    } | extra


async def storm(private_redis: PrivateRedis, client: ArqRedis, main: asyncio.Task[None], cycles: int) -> None:
    """Restart Redis again and again while the worker is starting jobs."""
    for cycle in range(cycles):
        await enqueue(client, range(100), f"storm-{cycle}")
        await asyncio.sleep(random.uniform(0.0, 0.05))
        private_redis.stop()
        await asyncio.sleep(0.2)
        private_redis.start()
        assert not main.done(), main.exception() if main.done() else None


def awaiting(task: asyncio.Task[None]) -> list[str]:
    """Where a task waits: each coroutine or future it awaits, down to the innermost."""
    chain: list[str] = []
    current: Any = task.get_coro()
    while current is not None and len(chain) < 40:
        frame = getattr(current, "cr_frame", None) or getattr(current, "ag_frame", None)
        if frame is not None:
            chain.append(
                f"{frame.f_code.co_filename.rsplit('/', 2)[-1]}:{frame.f_lineno} {frame.f_code.co_name}"
            )
        else:
            chain.append(repr(current)[:200])
        current = getattr(current, "cr_await", None) or getattr(current, "ag_await", None)
    return chain


async def runs_a_fresh_batch(client: ArqRedis, worker: Worker, done: list[tuple[str, int]]) -> None:
    await enqueue(client, range(40), "after")

    async def finished() -> bool:
        return sum(1 for tag, _ in done if tag == "after") == 40 and not worker.tasks

    await wait_for(finished, 30, "the batch enqueued after the storm")
    assert worker.job_counter == 0
    assert worker.sem._value == worker.sem._bound_value  # every slot free again


@pytest.mark.slow
@pytest.mark.timeout(120)
async def test_worker_outlives_redis_restarts_and_keeps_its_job_slots(
    private_redis: PrivateRedis, client: ArqRedis
) -> None:
    done: list[tuple[str, int]] = []
    worker = ChunkOcrWorker(**worker_options(private_redis, done))
    with capture_logs() as logs:
        main = asyncio.create_task(worker.main())
        try:
            await storm(private_redis, client, main, cycles=12)
            # Each command retries for about 4 s (queue.redis_settings), so the short outages above
            # may all be absorbed; one that lasts until the worker reports it reaches the poll
            # loop whatever the timing. A command caught reconnecting retries each connect too
            # (redis-py nests the two): about 31 s before its error reaches the loop.
            private_redis.stop()
            deadline = time.monotonic() + 60
            while not any(e["event"] == "dependency_unavailable" for e in logs):
                assert time.monotonic() < deadline, (
                    f"the worker never noticed Redis was gone: counter={worker.job_counter} "
                    f"sem={worker.sem._value} tasks={worker.tasks} unfinished={worker._unfinished} "
                    f"awaiting={awaiting(main)} fails={worker._redis_failures}"
                )
                await asyncio.sleep(0.2)
            assert not main.done()
            private_redis.start()
            await runs_a_fresh_batch(client, worker, done)
        finally:
            main.cancel()
            await worker.close()
    down = [e for e in logs if e["event"] == "dependency_unavailable"]
    back = [e for e in logs if e["event"] == "dependency_restored"]
    assert down, "the worker never noticed an outage: the storm did not hit it"
    assert {e["dependency"] for e in down + back} == {"redis"}
    assert len(back) == len(down)  # every outage it noticed, it also saw end


@pytest.mark.timeout(60)
async def test_arq_cli_worker_is_adopted_by_the_start_up_hook(
    private_redis: PrivateRedis, client: ArqRedis
) -> None:
    """`arq app.worker.WorkerSettings` builds arq's own Worker; the start-up hook makes it ours."""
    done: list[tuple[str, int]] = []

    async def on_startup(ctx: dict[str, Any]) -> None:
        adopt_running_worker()

    worker = Worker(**worker_options(private_redis, done, on_startup=on_startup))
    main = asyncio.create_task(worker.main())
    try:
        await wait_for(lambda: _is_chunk_ocr_worker(worker), 10, "the worker to be adopted")
        assert worker.ctx["health"] is worker.health  # type: ignore[attr-defined]
        await storm(private_redis, client, main, cycles=6)
        await runs_a_fresh_batch(client, worker, done)
    finally:
        main.cancel()
        await worker.close()


async def _is_chunk_ocr_worker(worker: Worker) -> bool:
    return isinstance(worker, ChunkOcrWorker)


async def test_adoption_outside_a_worker_changes_nothing() -> None:
    assert adopt_running_worker() is None
