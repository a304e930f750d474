"""DependencyHealth's revivers: what starts an embedded server again, run in an outage."""

from __future__ import annotations

import asyncio
import threading

import structlog

from app.core.health import DATABASE, REDIS, REVIVE_EVERY, DependencyHealth

DOWN = ConnectionRefusedError("refused")


async def _settled() -> None:
    """Until the revivers started so far have run (each in a thread of the default executor)."""
    for _ in range(100):
        await asyncio.sleep(0.01)
        if not [t for t in asyncio.all_tasks() if t.get_name().startswith("revive-")]:
            return
    raise AssertionError("a reviver is still running")


async def test_a_reviver_runs_at_an_outages_first_failure_and_every_nth_after() -> None:
    health = DependencyHealth()
    calls: list[str] = []
    health.revive_with(DATABASE, lambda: calls.append("database"))
    for _ in range(2 * REVIVE_EVERY + 1):
        health.failed(DATABASE, DOWN)
        await _settled()
    assert calls == ["database"] * 3  # failures 1, 1 + N, 1 + 2N
    health.restored(DATABASE)
    health.failed(DATABASE, DOWN)  # a new outage: its first failure tries again
    await _settled()
    assert len(calls) == 4


async def test_only_the_dependency_that_failed_is_revived() -> None:
    health = DependencyHealth()
    calls: list[str] = []
    health.revive_with(DATABASE, lambda: calls.append(DATABASE))
    health.revive_with(REDIS, lambda: calls.append(REDIS))
    health.failed(REDIS, DOWN)
    health.failed("blob-store", DOWN)  # no reviver: an outage like any other
    await _settled()
    assert calls == [REDIS]


async def test_one_revive_at_a_time_and_the_event_loop_is_not_blocked() -> None:
    health = DependencyHealth()
    release = threading.Event()
    started: list[int] = []

    def slow() -> None:
        started.append(1)
        release.wait(5)

    health.revive_with(DATABASE, slow)
    health.failed(DATABASE, DOWN)
    for _ in range(REVIVE_EVERY):  # the next due try comes while the first still runs
        health.failed(DATABASE, DOWN)
    await asyncio.sleep(0.05)  # the loop runs meanwhile: the reviver is in a thread
    assert started == [1]
    release.set()
    await _settled()
    assert started == [1]


async def test_a_reviver_that_fails_is_logged_and_tried_again_later() -> None:
    health = DependencyHealth(worker_id="w-1")
    tries: list[int] = []

    def broken() -> None:
        tries.append(1)
        raise RuntimeError("pg_ctl failed")

    health.revive_with(DATABASE, broken)
    with structlog.testing.capture_logs() as logs:
        health.failed(DATABASE, DOWN)
        await _settled()
        for _ in range(REVIVE_EVERY):
            health.failed(DATABASE, DOWN)
        await _settled()
    assert len(tries) == 2
    failed = [e for e in logs if e["event"] == "dependency_revive_failed"]
    assert len(failed) == 2
    assert failed[0]["dependency"] == DATABASE
    assert failed[0]["error_type"] == "RuntimeError"
    assert failed[0]["worker_id"] == "w-1"


def test_a_failure_seen_off_the_event_loop_revives_nothing_and_does_not_raise() -> None:
    health = DependencyHealth()
    calls: list[int] = []
    health.revive_with(DATABASE, lambda: calls.append(1))
    health.failed(DATABASE, DOWN)
    assert calls == []
    assert not health.is_up(DATABASE)
