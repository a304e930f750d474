"""The Vision quota kept in one process: what an OCR process enforces while Redis is unreachable.

The same rules as the Redis scripts (_vision_quota_scripts), on this process's monotonic clock
and for this process's requests alone. An OCR process runs one chunk at a time, on one event
loop, so nothing here needs a lock.
"""

from __future__ import annotations

import time

from app.engines._vision_quota_types import BackoffSet, Decision, QuotaLimits


def _now_ms() -> int:
    return int(time.monotonic() * 1000)


def _pages_of(member: str) -> int:
    return int(member.rsplit(":", 1)[1])


class LocalLedger:
    name = "local"

    def __init__(self, limits: QuotaLimits) -> None:
        self._limits = limits
        self._sent: dict[str, int] = {}  # member: when its window time starts (ms)
        self._leases: dict[str, int] = {}  # member: lease expiry (ms)
        self._backoff_until = 0
        self._backoff_set_at = 0
        self._strikes = 0

    async def acquire(self, member: str, pages: int, waited_ms: int) -> Decision:
        limits, now = self._limits, _now_ms()
        if self._backoff_until > now:
            return Decision(False, self._backoff_until - now, "backoff")
        window = round(limits.window_seconds * 1000)
        self._sent = {m: at for m, at in self._sent.items() if at > now - window}
        self._leases = {m: until for m, until in self._leases.items() if until > now}
        sent_pages = sum(_pages_of(m) for m in self._sent)
        count = len(self._sent)
        if count + 1 > limits.requests_per_window or sent_pages + pages > limits.pages_per_window:
            need_requests = count + 1 - limits.requests_per_window
            need_pages = sent_pages + pages - limits.pages_per_window
            wait = window
            for entry, at in sorted(self._sent.items(), key=lambda item: item[1]):
                need_requests -= 1
                need_pages -= _pages_of(entry)
                if need_requests <= 0 and need_pages <= 0:
                    wait = at + window - now
                    break
            return Decision(False, max(wait, 1), "rate")
        if sum(_pages_of(m) for m in self._leases) + pages > limits.pages_in_flight:
            return Decision(False, 0, "pages")
        hold = round(limits.hold_seconds * 1000)
        self._sent[member] = now + hold
        self._leases[member] = now + hold
        return Decision(True, 0, "granted", at=now)

    async def release(self, member: str, pages: int) -> None:
        if member in self._sent:
            self._sent[member] = _now_ms()
        self._leases.pop(member, None)

    async def exhausted(self, sent_at: int, shorten: float) -> BackoffSet:
        limits, now = self._limits, _now_ms()
        if sent_at <= self._backoff_set_at:  # granted before the back-off began, or in its millisecond
            return BackoffSet(max(self._backoff_until - now, 0), self._strikes, escalated=False)
        cap = round(limits.backoff_cap_seconds * 1000)
        if now > self._backoff_until + cap:
            self._strikes = 0
        self._strikes += 1
        base = limits.backoff_base_seconds * 1000
        delay = int(min(cap, base * 2.0 ** (self._strikes - 1)) * (1 - shorten))
        self._backoff_until = max(self._backoff_until, now + delay)
        self._backoff_set_at = now
        return BackoffSet(self._backoff_until - now, self._strikes, escalated=True)

    async def count_timeout(self) -> None:
        return None  # the fleet's counters live in Redis; this process logs its own
