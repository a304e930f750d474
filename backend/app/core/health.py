"""Which of a process's dependencies answer right now, logged when that changes.

A worker keeps working through an outage of Redis or the database; this is how
it says so: one `dependency_unavailable` event when a dependency stops
answering, one `dependency_restored` event with the outage's length when it
answers again, and a summary for the worker's health record in between.

A dependency the process itself started (an embedded server, app.embedded) can be given a
reviver: what starts it again. It is run in a thread, in the background, at the first failure of
an outage and every REVIVE_EVERY-th after, one at a time; the outage is waited out as any other
while it runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from app.core.logging import get_logger

log = get_logger(__name__)

REDIS = "redis"
DATABASE = "database"
REVIVE_EVERY = 5  # failures between tries to start a dependency again (the first tries at once)


class DependencyHealth:
    def __init__(self, **context: object) -> None:
        self._down: dict[str, float] = {}  # dependency -> time.monotonic() when it stopped answering
        self._failures: dict[str, int] = {}
        self._context = context  # ids for every event (worker_id)
        self._revivers: dict[str, Callable[[], None]] = {}
        self._reviving: dict[str, asyncio.Task[None]] = {}

    def revive_with(self, dependency: str, revive: Callable[[], None]) -> None:
        """revive starts dependency again (blocking; it is run in a thread) when it is down."""
        self._revivers[dependency] = revive

    def failed(self, dependency: str, error: BaseException) -> None:
        failures = self._failures[dependency] = self._failures.get(dependency, 0) + 1
        if failures % REVIVE_EVERY == 1:
            self._revive(dependency)
        if dependency in self._down:
            return
        self._down[dependency] = time.monotonic()
        log.warning(
            "dependency_unavailable",
            dependency=dependency,
            error_type=type(error).__name__,
            error=str(error)[:500],
            **self._context,
        )

    def _revive(self, dependency: str) -> None:
        revive = self._revivers.get(dependency)
        if revive is None or dependency in self._reviving:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a failure seen off the event loop: the next one tries
            return
        task = loop.create_task(self._run_reviver(dependency, revive), name=f"revive-{dependency}")
        self._reviving[dependency] = task
        task.add_done_callback(lambda _: self._reviving.pop(dependency, None))

    async def _run_reviver(self, dependency: str, revive: Callable[[], None]) -> None:
        started = time.monotonic()
        try:
            await asyncio.to_thread(revive)
        except Exception as exc:  # best effort: the outage goes on, and a later failure tries again
            log.warning(
                "dependency_revive_failed",
                dependency=dependency,
                error_type=type(exc).__name__,
                error=str(exc)[:500],
                duration_ms=round((time.monotonic() - started) * 1000, 1),
                **self._context,
            )

    def restored(self, dependency: str) -> None:
        since = self._down.pop(dependency, None)
        if since is None:
            return
        log.info(
            "dependency_restored",
            dependency=dependency,
            outage_seconds=round(time.monotonic() - since, 1),
            failures=self._failures.pop(dependency, 0),
            **self._context,
        )

    def bind(self, **context: object) -> None:
        """Add ids known only later (the worker id, once the runtime exists)."""
        self._context.update(context)

    def is_up(self, dependency: str) -> bool:
        return dependency not in self._down

    @property
    def degraded(self) -> bool:
        return bool(self._down)

    def summary(self, *dependencies: str) -> str:
        """'redis=ok database=unavailable' for the dependencies named (and any that are down)."""
        names = list(dict.fromkeys([*dependencies, *self._down]))
        return " ".join(f"{name}={'unavailable' if name in self._down else 'ok'}" for name in names)


class Probe:
    """A dependency's health check, waited for at most a given time, one at a time.

    Cancelling a database call that does not answer is no quicker than the call: asyncpg cancels
    it on the server over a new connection, which waits as long. So a check that has not
    answered in time is left to end on its own (its own timeout bounds it), reported as not
    answering, and a check asked for meanwhile waits on that one rather than start another.
    """

    def __init__(self, check: Callable[[], Awaitable[object]]) -> None:
        self._check = check
        self._running: asyncio.Future[object] | None = None

    async def __call__(self, seconds: float) -> BaseException | None:
        """None when the check passed within `seconds`; else what it raised, or TimeoutError."""
        if self._running is None or self._running.done():
            self._running = asyncio.ensure_future(self._check())
            self._running.add_done_callback(_retrieved)
        running = self._running
        await asyncio.wait({running}, timeout=seconds)
        if not running.done():
            return TimeoutError(f"no answer in {seconds:g} s")
        if running.cancelled():
            return asyncio.CancelledError()
        return running.exception()


def _retrieved(future: asyncio.Future[object]) -> None:
    """Mark the outcome of a check nobody waits for any more as seen (asyncio logs it otherwise)."""
    if not future.cancelled():
        future.exception()
