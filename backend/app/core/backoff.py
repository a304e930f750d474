"""Capped exponential backoff as a value, and one loop that retries transient errors with it.

Used wherever a worker waits out an outage instead of giving up: Redis in the
poll loop, the database while a chunk's result is recorded, the blob store
while a result is uploaded. What counts as transient is the caller's to say,
by exception type (never by message text).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Backoff:
    base: float = 0.5  # seconds before the second try
    cap: float = 5.0  # no wait is longer than this
    jitter: float = 0.2  # each wait is shortened by up to this fraction, so peers spread out

    def delay(self, failures: int) -> float:
        """Seconds to wait after `failures` consecutive failures (1, 2, ...)."""
        full = min(self.cap, self.base * 2.0 ** max(failures - 1, 0))
        return float(full * (1 - self.jitter * random.random()))

    def delays(self) -> Iterator[float]:
        failures = 0
        while True:
            failures += 1
            yield self.delay(failures)


async def retry_transient(
    operation: Callable[[], Awaitable[T]],
    *,
    transient: tuple[type[BaseException], ...],
    backoff: Backoff,
    when: Callable[[BaseException], bool] | None = None,
    deadline: float | None = None,
    attempts: int | None = None,
    on_failure: Callable[[BaseException, float], None] | None = None,
) -> T:
    """Run operation until it succeeds; on a transient error wait and try again.

    An error is transient when it is one of `transient` and (if given) `when`
    accepts it. Gives up, re-raising the last error, once `attempts` tries have
    failed or the next wait would end after `deadline` (a time.monotonic()
    value). on_failure sees each transient error and the wait that follows it.
    """
    tried = 0
    for wait in backoff.delays():
        try:
            return await operation()
        except transient as exc:
            if when is not None and not when(exc):
                raise
            tried += 1
            if (attempts is not None and tried >= attempts) or (
                deadline is not None and time.monotonic() + wait > deadline
            ):
                raise
            if on_failure is not None:
                on_failure(exc, wait)
            await asyncio.sleep(wait)
    raise AssertionError("unreachable: Backoff.delays() never ends")  # pragma: no cover
