"""One Google Vision quota for the whole fleet, kept in Redis (docs/VISION_QUOTA.md).

Google counts a Cloud project's Vision requests (and text-detection pages) per minute across
every worker that uses it. Each OCR process's Vision engine asks this quota for a permit before
each request and releases it when the answer is back:

- rate: at most `requests_per_window` requests and `pages_per_window` pages in any window of
  `window_seconds`, counted from each request's grant until one window after its answer came
  back, so that no window of arrivals at Google holds more, however long requests travel;
- pages in flight: at most `pages_in_flight` pages sent and not yet answered, fleet-wide, each
  request's pages held under a lease that ends by itself (its deadline and a grace) if the
  process holding it dies;
- back-off: a RESOURCE_EXHAUSTED answer stops every worker until a fleet-wide "until" passes
  (exponential in the strikes, capped, with jitter).

A refused request waits (asyncio.sleep) and asks again; past `max_wait_seconds` it raises
VisionQuotaWaitError, which is retryable. When Redis cannot be reached (or answers with an
error), the process keeps the same rules for itself alone (LocalLedger), logs
`vision_quota_redis_unavailable` once, and tries Redis again every few seconds: a chunk never
fails because Redis is down.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.core.config import Settings
from app.core.logging import get_logger
from app.engines._vision_quota_local import LocalLedger
from app.engines._vision_quota_scripts import ACQUIRE, COUNTERS_TTL_MS, EXHAUSTED, RELEASE, QuotaKeys
from app.engines._vision_quota_types import BackoffSet, Decision, Ledger, Permit, QuotaLimits
from app.engines.errors import VisionQuotaWaitError

log = get_logger(__name__)

JITTER = 0.2  # a back-off is shortened by up to this fraction, so the fleet does not return at once
POLL_SECONDS = 0.1  # how often a request waiting for pages in flight asks again (jittered)
LONGEST_SLEEP_SECONDS = 1.0  # a waiting request asks again at least this often: answers free slots
_REDIS_ERRORS = (RedisError, OSError)


def quota_scope(settings: Settings) -> str:
    """What names the quota shared in Redis: the Cloud project (GOOGLE_VISION_QUOTA_PROJECT, or
    `default`) and the endpoint. Braces are replaced: they would break the keys' hash tag."""
    project = settings.google_vision_quota_project or "default"
    scope = f"{project}@{settings.google_vision_endpoint}"
    return scope.replace("{", "_").replace("}", "_")


class RedisLedger:
    """The fleet's quota: the scripts of _vision_quota_scripts on one Redis connection."""

    name = "fleet"

    def __init__(self, client: Redis, keys: QuotaKeys, limits: QuotaLimits) -> None:
        self._client = client
        self._keys = keys
        self._limits = limits
        self._acquire = client.register_script(ACQUIRE)
        self._release = client.register_script(RELEASE)
        self._exhausted = client.register_script(EXHAUSTED)

    async def acquire(self, member: str, pages: int, waited_ms: int) -> Decision:
        keys, limits = self._keys, self._limits
        hold_ms = round(limits.hold_seconds * 1000)
        window_ms = round(limits.window_seconds * 1000)
        answer = await self._acquire(
            keys=[keys.sent, keys.sent_pages, keys.leases, keys.leased_pages, keys.backoff, keys.counters],
            args=[
                member,
                pages,
                limits.requests_per_window,
                limits.pages_per_window,
                window_ms,
                limits.pages_in_flight,
                hold_ms,
                waited_ms,
                window_ms + hold_ms,
                COUNTERS_TTL_MS,
            ],
        )
        if int(answer[0]) == 1:
            return Decision(True, 0, "granted", at=int(answer[1]))
        reason = answer[2].decode() if isinstance(answer[2], bytes) else str(answer[2])
        return Decision(False, int(answer[1]), reason)

    async def release(self, member: str, pages: int) -> None:
        keys = self._keys
        await self._release(keys=[keys.sent, keys.leases, keys.leased_pages], args=[member, pages])

    async def exhausted(self, sent_at: int, shorten: float) -> BackoffSet:
        limits = self._limits
        left, strikes, escalated = await self._exhausted(
            keys=[self._keys.backoff, self._keys.counters],
            args=[
                sent_at,
                round(limits.backoff_base_seconds * 1000),
                round(limits.backoff_cap_seconds * 1000),
                shorten,
            ],
        )
        return BackoffSet(int(left), int(strikes), escalated=bool(int(escalated)))

    async def count_timeout(self) -> None:
        async with self._client.pipeline(transaction=False) as pipe:
            pipe.hincrby(self._keys.counters, "wait_timeouts", 1)
            pipe.pexpire(self._keys.counters, COUNTERS_TTL_MS)
            await pipe.execute()


class VisionQuota:
    """The quota as one OCR process sees it: the fleet's in Redis, or its own while Redis is down.

    Built once per process with the engine; a session (one per event loop: the engine runs one
    per chunk) holds the Redis connection.
    """

    def __init__(
        self, limits: QuotaLimits, *, scope: str, redis_url: str | None, redis_retry_seconds: float = 5.0
    ) -> None:
        self.limits = limits
        self.scope = scope
        self.keys = QuotaKeys.for_scope(scope)
        self.redis_url = redis_url
        self.redis_retry_seconds = redis_retry_seconds
        self.local = LocalLedger(limits)
        self._redis_down_since: float | None = None  # monotonic
        self._redis_retry_at = 0.0
        if redis_url is None:
            log.info("vision_quota_local_only", scope=scope, reason="no REDIS_URL")

    @classmethod
    def from_settings(cls, settings: Settings) -> VisionQuota:
        return cls(
            QuotaLimits.from_settings(settings), scope=quota_scope(settings), redis_url=settings.redis_url
        )

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[QuotaSession]:
        client = None
        if self.redis_url is not None:
            client = Redis.from_url(self.redis_url, socket_connect_timeout=1.0, socket_timeout=2.0)
        try:
            yield QuotaSession(self, None if client is None else RedisLedger(client, self.keys, self.limits))
        finally:
            if client is not None:
                with contextlib.suppress(*_REDIS_ERRORS):
                    await client.aclose()

    def redis_usable(self) -> bool:
        return self._redis_down_since is None or time.monotonic() >= self._redis_retry_at

    def redis_failed(self, error: BaseException) -> None:
        now = time.monotonic()
        self._redis_retry_at = now + self.redis_retry_seconds
        if self._redis_down_since is None:
            self._redis_down_since = now
            log.warning(
                "vision_quota_redis_unavailable",
                scope=self.scope,
                error=f"{type(error).__name__}: {error}",
                fallback="per-process limits",
                retry_in_s=self.redis_retry_seconds,
            )

    def redis_answered(self) -> None:
        if self._redis_down_since is not None:
            down_ms = round((time.monotonic() - self._redis_down_since) * 1000)
            self._redis_down_since = None
            log.info("vision_quota_redis_restored", scope=self.scope, down_ms=down_ms)


class QuotaSession:
    """Permits for the requests of one chunk: acquire before sending, release once answered."""

    def __init__(self, quota: VisionQuota, fleet: RedisLedger | None) -> None:
        self._quota = quota
        self._fleet = fleet

    def deadline(self) -> float:
        """When a request asking now must stop waiting (time.monotonic())."""
        return time.monotonic() + self._quota.limits.max_wait_seconds

    def _ledger(self) -> Ledger:
        if self._fleet is not None and self._quota.redis_usable():
            return self._fleet
        return self._quota.local

    async def acquire(self, pages: int, deadline: float, **context: object) -> Permit:
        """A permit for one request of `pages` pages, waiting for it until `deadline` at most."""
        member = f"{uuid.uuid4().hex}:{pages}"
        started = time.monotonic()
        reasons: set[str] = set()
        while True:
            ledger = self._ledger()
            waited_ms = round((time.monotonic() - started) * 1000) if reasons else 0
            try:
                decision = await ledger.acquire(member, pages, waited_ms)
            except _REDIS_ERRORS as exc:
                self._quota.redis_failed(exc)
                continue  # the local ledger, from now until Redis is tried again
            if ledger is self._fleet:
                self._quota.redis_answered()
            if decision.granted:
                if reasons:
                    log.info(
                        "vision_quota_throttled",
                        scope=self._quota.scope,
                        ledger=ledger.name,
                        reasons=sorted(reasons),
                        pages=pages,
                        waited_ms=waited_ms,
                        **context,
                    )
                return Permit(member, pages, ledger, decision.at)
            reasons.add(decision.reason)
            left = deadline - time.monotonic()
            if left <= 0:
                await self._count_timeout(ledger)
                waited_ms = round((time.monotonic() - started) * 1000)
                log.warning(
                    "vision_quota_wait_timeout",
                    scope=self._quota.scope,
                    reasons=sorted(reasons),
                    pages=pages,
                    waited_ms=waited_ms,
                    **context,
                )
                raise VisionQuotaWaitError(
                    f"waited {waited_ms / 1000:.1f} s for the Vision quota ({', '.join(sorted(reasons))}), "
                    "longer than GOOGLE_VISION_QUOTA_MAX_WAIT_SECONDS",
                    waited_ms=waited_ms,
                )
            if decision.wait_ms > 0:
                # Past the time given, and a little more, so that waiters do not all ask at once.
                wait = min(decision.wait_ms / 1000, LONGEST_SLEEP_SECONDS) + random.uniform(0, 0.02)
            else:
                wait = POLL_SECONDS * random.uniform(0.5, 1.5)
            await asyncio.sleep(min(wait, left))

    async def release(self, permit: Permit) -> None:
        """The request's answer is back (or it failed): its pages leave the flight."""
        try:
            await permit.ledger.release(permit.member, permit.pages)
        except _REDIS_ERRORS as exc:
            self._quota.redis_failed(exc)  # its lease and its window entry expire by themselves

    async def exhausted(self, permit: Permit, **context: object) -> None:
        """Vision answered RESOURCE_EXHAUSTED to this permit's request: back the fleet off."""
        shorten = random.uniform(0, JITTER)
        try:
            backoff = await permit.ledger.exhausted(permit.granted_at, shorten)
            ledger = permit.ledger
        except _REDIS_ERRORS as exc:
            self._quota.redis_failed(exc)
            ledger = self._quota.local
            backoff = await ledger.exhausted(0, shorten)  # this process at least backs off
        log.warning(
            "vision_quota_backoff",
            scope=self._quota.scope,
            ledger=ledger.name,
            backoff_ms=backoff.left_ms,
            strikes=backoff.strikes,
            escalated=backoff.escalated,
            **context,
        )

    async def _count_timeout(self, ledger: Ledger) -> None:
        try:
            await ledger.count_timeout()
        except _REDIS_ERRORS as exc:
            self._quota.redis_failed(exc)


@dataclass(frozen=True, slots=True)
class VisionQuotaCounters:
    """The fleet's Vision counters (running totals in Redis) and the quota's state right now."""

    requests: int
    pages: int
    throttled: int
    waited_ms: int
    exhausted: int
    backoffs: int
    wait_timeouts: int
    pages_in_flight: int  # now: pages of requests granted and not yet released (or expired)
    backoff_ms: int  # now: how long the fleet's back-off still lasts (0: none)


async def read_counters(redis: Redis, scope: str) -> VisionQuotaCounters:
    """The counters of the quota named `scope` (quota_scope(settings)), for metrics. Pages in
    flight include leases of dead processes until they expire."""
    keys = QuotaKeys.for_scope(scope)
    async with redis.pipeline(transaction=False) as pipe:
        pipe.hgetall(keys.counters)
        pipe.get(keys.leased_pages)
        pipe.hget(keys.backoff, "until")
        pipe.time()
        counters, leased, until, (seconds, micros) = await pipe.execute()
    values = {(k.decode() if isinstance(k, bytes) else k): int(v) for k, v in counters.items()}
    now_ms = int(seconds) * 1000 + int(micros) // 1000
    return VisionQuotaCounters(
        requests=values.get("requests", 0),
        pages=values.get("pages", 0),
        throttled=values.get("throttled", 0),
        waited_ms=values.get("waited_ms", 0),
        exhausted=values.get("exhausted", 0),
        backoffs=values.get("backoffs", 0),
        wait_timeouts=values.get("wait_timeouts", 0),
        pages_in_flight=max(int(leased or 0), 0),
        backoff_ms=max(int(until or 0) - now_ms, 0),
    )
