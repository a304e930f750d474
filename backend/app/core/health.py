"""Which of a process's dependencies answer right now, logged when that changes.

A worker keeps working through an outage of Redis or the database; this is how
it says so: one `dependency_unavailable` event when a dependency stops
answering, one `dependency_restored` event with the outage's length when it
answers again, and a summary for the worker's health record in between.
"""

from __future__ import annotations

import time

from app.core.logging import get_logger

log = get_logger(__name__)


class DependencyHealth:
    def __init__(self, **context: object) -> None:
        self._down: dict[str, float] = {}  # dependency -> time.monotonic() when it stopped answering
        self._failures: dict[str, int] = {}
        self._context = context  # ids for every event (worker_id)

    def failed(self, dependency: str, error: BaseException) -> None:
        self._failures[dependency] = self._failures.get(dependency, 0) + 1
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
