"""The values the Vision quota's parts pass around: its limits, a ledger's answers, a permit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from app.core.config import Settings
from app.core.errors import ConfigurationError
from app.engines.specs import ENGINE_SPECS

PAGES_PER_REQUEST = ENGINE_SPECS["google-vision"].pages_per_request
# How long past its deadline a request keeps its place in flight: the time between its grant
# and its call, and after its answer until it is released. Past it, the lease of a process that
# died holding it expires.
HOLD_GRACE_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class QuotaLimits:
    requests_per_window: int
    pages_per_window: int
    window_seconds: float
    pages_in_flight: int  # fleet-wide: pages sent and not yet answered
    hold_seconds: float  # the longest a request can be in flight: its deadline and a grace
    max_wait_seconds: float  # the longest a request waits for the quota before it gives up
    backoff_base_seconds: float
    backoff_cap_seconds: float

    @classmethod
    def from_settings(cls, settings: Settings) -> QuotaLimits:
        """The limits the GOOGLE_VISION_* settings ask for: the per-minute quotas counted over
        GOOGLE_VISION_QUOTA_WINDOW_SECONDS (a shorter window spreads a minute's requests out)."""
        window = settings.google_vision_quota_window_seconds
        share = window / 60.0
        requests = int(settings.google_vision_requests_per_minute * share + 1e-9)
        pages = int(settings.google_vision_pages_per_minute * share + 1e-9)
        if requests < 1:
            raise ConfigurationError(
                "GOOGLE_VISION_REQUESTS_PER_MINUTE allows no request in a window of "
                f"GOOGLE_VISION_QUOTA_WINDOW_SECONDS={window:g}; lengthen the window"
            )
        if pages < PAGES_PER_REQUEST:
            raise ConfigurationError(
                f"GOOGLE_VISION_PAGES_PER_MINUTE allows fewer than {PAGES_PER_REQUEST} pages (one request) "
                f"in a window of GOOGLE_VISION_QUOTA_WINDOW_SECONDS={window:g}; lengthen the window"
            )
        if settings.google_vision_backoff_base_seconds > settings.google_vision_backoff_cap_seconds:
            raise ConfigurationError(
                "GOOGLE_VISION_BACKOFF_BASE_SECONDS must not exceed GOOGLE_VISION_BACKOFF_CAP_SECONDS"
            )
        return cls(
            requests_per_window=requests,
            pages_per_window=pages,
            window_seconds=window,
            pages_in_flight=settings.google_vision_pages_in_flight,
            hold_seconds=settings.google_vision_timeout_seconds + HOLD_GRACE_SECONDS,
            max_wait_seconds=settings.google_vision_quota_max_wait_seconds,
            backoff_base_seconds=settings.google_vision_backoff_base_seconds,
            backoff_cap_seconds=settings.google_vision_backoff_cap_seconds,
        )


@dataclass(frozen=True, slots=True)
class Decision:
    """A ledger's answer to a request for a permit."""

    granted: bool
    wait_ms: int  # refused: how long until it may be granted (0: unknown, ask again soon)
    reason: str  # granted, or why not: backoff (after a 429), rate (the window), pages (in flight)
    at: int = 0  # granted: when, in milliseconds of the ledger's clock


@dataclass(frozen=True, slots=True)
class BackoffSet:
    """What a 429 did to the back-off: how long is left, after how many strikes."""

    left_ms: int
    strikes: int
    escalated: bool  # False: the request was sent before the last back-off began, part of it


@dataclass(frozen=True, slots=True)
class Permit:
    """One request's place in the quota, from its grant until it is released."""

    member: str  # `<random id>:<pages>`
    pages: int
    ledger: Ledger
    granted_at: int  # in milliseconds of the ledger's clock


class Ledger(Protocol):
    """Where the quota is kept: Redis for the fleet, or this process alone (LocalLedger)."""

    name: str

    async def acquire(self, member: str, pages: int, waited_ms: int) -> Decision: ...

    async def release(self, member: str, pages: int) -> None: ...

    async def exhausted(self, sent_at: int, shorten: float) -> BackoffSet: ...

    async def count_timeout(self) -> None: ...
