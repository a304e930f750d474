"""One Vision quota for the fleet (app.engines.vision_quota), on a real Redis.

Engine processes are real OS processes (tests/vision_workers.py), each building the
google-vision engine from Settings and talking gRPC to the loopback Vision server
(tests/vision_fake.py), which records when each request arrived and how many pages were in
flight. The quota's window is shortened (GOOGLE_VISION_QUOTA_WINDOW_SECONDS) so that a test
sees several windows in seconds; each test has a quota of its own (GOOGLE_VISION_QUOTA_PROJECT).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import grpc
import pytest
import redis
from google.cloud import vision_v1
from redis.asyncio import Redis
from structlog.testing import capture_logs

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.engines._vision_quota_scripts import KEY_PREFIX, QuotaKeys
from app.engines._vision_quota_types import QuotaLimits
from app.engines.errors import VisionQuotaWaitError
from app.engines.google_vision import GoogleVisionEngine, VisionError
from app.engines.vision_quota import RedisLedger, VisionQuota, VisionQuotaCounters, quota_scope, read_counters
from app.pdf.samples import make_born_digital_pdf
from tests import servers
from tests.servers import PrivateRedis
from tests.vision_fake import Abort, Arrival, VisionServer, echo_pages, serve_vision, vision_settings
from tests.vision_workers import Fleet, hold_pages

private_redis = servers.private_redis


@pytest.fixture
def vision() -> Iterator[VisionServer]:
    with serve_vision(threads=32) as server:
        yield server


@pytest.fixture
def project(redis_url: str) -> Iterator[str]:
    """A quota of this test's own; its keys are deleted after it."""
    name = f"test-{uuid.uuid4().hex[:12]}"
    yield name
    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=f"{KEY_PREFIX}{{{name}@*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def quota_settings(vision: VisionServer, redis_url: str | None, project: str, **options: object) -> Settings:
    return vision_settings(
        vision,
        redis_url=redis_url,
        google_vision_quota_project=project,
        google_vision_timeout_seconds=5.0,
        google_vision_quota_max_wait_seconds=60.0,
        **options,
    )


def chunk_pdf(tmp_path: Path, pages: int) -> bytes:
    path = tmp_path / f"chunk-{pages}.pdf"
    if not path.exists():
        make_born_digital_pdf(path, pages=pages)
    return path.read_bytes()


def most_in_any_window(arrivals: Sequence[Arrival], window: float) -> tuple[int, int]:
    """The most requests, and the most pages, that arrived within any span of `window` seconds."""
    ordered = sorted(arrivals, key=lambda a: a.at)
    most_requests = most_pages = 0
    for i, first in enumerate(ordered):
        inside = [a for a in ordered[i:] if a.at < first.at + window]
        most_requests = max(most_requests, len(inside))
        most_pages = max(most_pages, sum(a.pages for a in inside))
    return most_requests, most_pages


def counters(redis_url: str, settings: Settings) -> VisionQuotaCounters:
    async def read() -> VisionQuotaCounters:
        client = Redis.from_url(redis_url)
        try:
            return await read_counters(client, quota_scope(settings))
        finally:
            await client.aclose()

    return asyncio.run(read())


def expected_pages(first: int, count: int) -> list[tuple[int, str, None]]:
    """What the echoing server gives back for a chunk: each page's text names its place in the chunk."""
    return [(first + i, f"page {i + 1} text", None) for i in range(count)]


@pytest.mark.slow
def test_eight_processes_together_never_exceed_the_rate(
    vision: VisionServer, redis_url: str, project: str, tmp_path: Path
) -> None:
    # 10 requests and 35 pages per 2-second window; each process reads two 7-page chunks
    # (a 5-page and a 2-page request each): 32 requests, 112 pages, more than three windows' worth.
    settings = quota_settings(
        vision,
        redis_url,
        project,
        google_vision_quota_window_seconds=2.0,
        google_vision_requests_per_minute=300,
        google_vision_pages_per_minute=1050,
    )
    pdf = chunk_pdf(tmp_path, 7)
    fleet = Fleet.start(settings, [[(pdf, 1), (pdf, 8)]] * 8)
    done = fleet.run()

    assert len(done) == 8
    for chunks in done.values():  # every request served: throttled ones waited, none failed
        assert chunks == [expected_pages(1, 7), expected_pages(8, 7)]
    assert len(vision.arrivals) == 32  # each request sent once
    most_requests, most_pages = most_in_any_window(vision.arrivals, 2.0)
    assert most_requests <= 10
    assert most_pages <= 35
    seen = counters(redis_url, settings)
    assert (seen.requests, seen.pages, seen.exhausted, seen.wait_timeouts) == (32, 112, 0, 0)
    assert seen.throttled > 0  # the fleet asked for more than the quota, and waited
    assert seen.pages_in_flight == 0


@pytest.mark.slow
def test_pages_in_flight_never_exceed_the_fleet_limit(
    vision: VisionServer, redis_url: str, project: str, tmp_path: Path
) -> None:
    # 8 processes each read a 20-page chunk, 4 requests at once: 160 pages asked for at once.
    vision.delay = 0.3
    settings = quota_settings(vision, redis_url, project, google_vision_pages_in_flight=10)
    pdf = chunk_pdf(tmp_path, 20)
    done = Fleet.start(settings, [[(pdf, 1)]] * 8).run()

    assert [chunks for chunks in done.values()] == [[expected_pages(1, 20)]] * 8
    assert len(vision.arrivals) == 32
    assert vision.max_in_flight_pages <= 10
    seen = counters(redis_url, settings)
    assert seen.throttled > 0
    assert seen.pages_in_flight == 0  # every permit given back


@pytest.mark.slow
def test_a_429_backs_the_whole_fleet_off_then_work_resumes(
    vision: VisionServer, redis_url: str, project: str, tmp_path: Path
) -> None:
    # One request in flight fleet-wide (5 pages), so each arrival follows the answer before it.
    # The 3rd and 4th requests are answered RESOURCE_EXHAUSTED: back-offs of 1 s, then 2 s, each
    # shortened by up to 20 % (the jitter).
    vision.exhaust = {3, 4}
    settings = quota_settings(
        vision,
        redis_url,
        project,
        google_vision_pages_in_flight=5,
        google_vision_backoff_base_seconds=1.0,
        google_vision_backoff_cap_seconds=8.0,
    )
    pdf = chunk_pdf(tmp_path, 10)
    done = Fleet.start(settings, [[(pdf, 1)]] * 8).run()

    assert [chunks for chunks in done.values()] == [[expected_pages(1, 10)]] * 8  # all completed
    arrivals = sorted(vision.arrivals, key=lambda a: a.number)
    assert len(arrivals) == 16 + 2  # the two refused requests were sent again
    third, fourth, fifth = arrivals[2:5]
    assert third.exhausted_at is not None
    assert fourth.exhausted_at is not None
    # No request from any process reached the server during each back-off.
    assert fourth.at - third.exhausted_at >= 1.0 * 0.8
    assert fifth.at - fourth.exhausted_at >= 2.0 * 0.8  # the second 429 doubled it
    seen = counters(redis_url, settings)
    assert (seen.exhausted, seen.backoffs, seen.requests) == (2, 2, 18)
    assert seen.wait_timeouts == 0


def test_a_killed_holders_pages_come_back_when_its_lease_expires(
    vision: VisionServer, redis_url: str, project: str
) -> None:
    # A lease lasts the request's deadline (3 s) and a grace (2 s).
    settings = quota_settings(vision, redis_url, project, google_vision_pages_in_flight=5)
    settings = settings.model_copy(update={"google_vision_timeout_seconds": 3.0})
    context = multiprocessing.get_context("spawn")
    held = context.Event()
    holder = context.Process(target=hold_pages, args=(settings, 5, held), daemon=True)
    holder.start()
    try:
        assert held.wait(60)
    finally:
        os.kill(holder.pid, signal.SIGKILL)  # type: ignore[arg-type]
        holder.join(10)
    assert counters(redis_url, settings).pages_in_flight == 5

    quota = VisionQuota.from_settings(settings)

    async def take() -> None:
        async with quota.session() as session:
            with pytest.raises(VisionQuotaWaitError) as raised:  # the dead process still holds them
                await session.acquire(5, time.monotonic() + 0.5)
            assert raised.value.retryable
            permit = await session.acquire(5, session.deadline())  # until the lease expires
            await session.release(permit)

    asyncio.run(take())
    seen = counters(redis_url, settings)
    assert (seen.requests, seen.throttled, seen.wait_timeouts, seen.pages_in_flight) == (2, 1, 1, 0)


def test_without_redis_the_engine_keeps_the_limits_for_itself(
    vision: VisionServer, private_redis: PrivateRedis, project: str, tmp_path: Path
) -> None:
    # 3 requests per 2-second window.
    settings = quota_settings(
        vision,
        private_redis.url,
        project,
        google_vision_quota_window_seconds=2.0,
        google_vision_requests_per_minute=90,
    )
    quota = VisionQuota(
        QuotaLimits.from_settings(settings),
        scope=quota_scope(settings),
        redis_url=private_redis.url,
        redis_retry_seconds=0.5,
    )
    engine = GoogleVisionEngine(
        endpoint=settings.google_vision_endpoint,
        insecure=True,
        max_concurrency=4,
        timeout_seconds=5,
        quota=quota,
    )
    assert len(engine.recognize(chunk_pdf(tmp_path, 10), 1)) == 10
    assert counters(private_redis.url, settings).requests == 2  # the fleet's quota, in Redis

    private_redis.stop()
    before = len(vision.arrivals)
    with capture_logs() as logs:
        pages = engine.recognize(chunk_pdf(tmp_path, 20), 1)  # 4 requests: the 4th waits a window
    assert [(p.page_number, p.text) for p in pages] == [(n, t) for n, t, _ in expected_pages(1, 20)]
    during = sorted(vision.arrivals, key=lambda a: a.number)[before:]
    assert len(during) == 4
    assert most_in_any_window(during, 2.0)[0] <= 3
    events = [e for e in logs if e["event"].startswith("vision_quota_")]
    assert [e["event"] for e in events if e["event"] == "vision_quota_redis_unavailable"] == [
        "vision_quota_redis_unavailable"
    ]  # once for the outage, not once per request
    throttled = [e for e in events if e["event"] == "vision_quota_throttled"]
    assert [(e["ledger"], e["reasons"]) for e in throttled] == [("local", ["rate"])]

    private_redis.start()  # empty: a restarted Redis keeps no keys
    with capture_logs() as logs:
        asyncio.run(asyncio.sleep(0.6))  # past the time Redis is tried again
        engine.recognize(chunk_pdf(tmp_path, 5), 1)
    assert "vision_quota_redis_restored" in [e["event"] for e in logs]
    assert counters(private_redis.url, settings).requests == 1  # back on the fleet's quota


async def test_the_fleet_ledger_refuses_with_the_time_to_wait(redis_url: str, project: str) -> None:
    limits = QuotaLimits(
        requests_per_window=2,
        pages_per_window=100,
        window_seconds=10.0,
        pages_in_flight=100,
        hold_seconds=30.0,
        max_wait_seconds=1.0,
        backoff_base_seconds=1.0,
        backoff_cap_seconds=3.0,
    )
    client = Redis.from_url(redis_url)
    try:
        ledger = RedisLedger(client, QuotaKeys.for_scope(f"{project}@here"), limits)
        first = await ledger.acquire("a:5", 5, 0)
        second = await ledger.acquire("b:5", 5, 0)
        assert (first.granted, second.granted) == (True, True)
        refused = await ledger.acquire("c:5", 5, 0)
        # Both are in flight: the first leaves the window one window after its deadline and grace.
        assert (refused.granted, refused.reason) == (False, "rate")
        assert 30_000 < refused.wait_ms <= 40_000
        await ledger.release("a:5", 5)  # answered: it leaves the window one window from now
        refused = await ledger.acquire("c:5", 5, 0)
        assert 9_000 < refused.wait_ms <= 10_000

        # A 429 backs off; one of a request granted before that back-off began does not add to it.
        set_first = await ledger.exhausted(second.at, 0.0)
        assert (set_first.strikes, set_first.escalated) == (1, True)
        assert 900 < set_first.left_ms <= 1000
        same_episode = await ledger.exhausted(first.at, 0.0)
        assert (same_episode.strikes, same_episode.escalated) == (1, False)
        refused = await ledger.acquire("d:5", 5, 0)
        assert (refused.granted, refused.reason) == (False, "backoff")
        later = await ledger.exhausted(second.at + 10**6, 0.0)  # a request granted after it began
        assert (later.strikes, later.escalated) == (2, True)
        assert 1900 < later.left_ms <= 2000
        capped = await ledger.exhausted(second.at + 10**7, 0.0)
        assert capped.strikes == 3
        assert capped.left_ms <= 3000  # 4 s, capped at 3
    finally:
        await client.aclose()


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"google_vision_requests_per_minute": 20, "google_vision_quota_window_seconds": 1.0}, "REQUESTS"),
        ({"google_vision_pages_per_minute": 60, "google_vision_quota_window_seconds": 2.0}, "PAGES"),
        ({"google_vision_backoff_base_seconds": 10.0, "google_vision_backoff_cap_seconds": 5.0}, "BACKOFF"),
    ],
)
def test_limits_that_allow_no_request_are_refused_at_start_up(
    vision: VisionServer, options: dict[str, object], named: str
) -> None:
    with pytest.raises(ConfigurationError, match=f"GOOGLE_VISION_{named}"):
        GoogleVisionEngine.from_settings(vision_settings(vision, **options))


def test_a_failed_chunk_gives_back_the_permits_of_its_other_requests(
    vision: VisionServer, redis_url: str, project: str, tmp_path: Path
) -> None:
    """The first request is refused for good while the others are still in flight: they are
    cancelled, and a failed chunk leaves no pages in flight behind it."""

    def handler(request: vision_v1.BatchAnnotateFilesRequest) -> vision_v1.BatchAnnotateFilesResponse:
        if request.requests[0].pages[0] == 1:
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT)
        threading.Event().wait(1.0)
        return echo_pages(request)

    vision.handler = handler
    settings = quota_settings(vision, redis_url, project)
    engine = GoogleVisionEngine.from_settings(settings)
    with capture_logs() as logs, pytest.raises(VisionError) as raised:
        engine.recognize(chunk_pdf(tmp_path, 15), 1)
    assert raised.value.status is grpc.StatusCode.INVALID_ARGUMENT
    seen = counters(redis_url, settings)
    assert (seen.requests, seen.pages_in_flight) == (3, 0)
    assert [e["event"] for e in logs if e["event"].startswith("vision_quota_redis")] == []
