"""A document's budget of page timeouts (MAX_DOCUMENT_PAGE_TIMEOUTS).

A page that uses up MAX_PAGE_CPU_SECONDS (120 s of PDFium's time by default) fails alone, but a
file can hold a thousand such pages, or one such page referenced a thousand times: a thousand
times the limit of the fleet's CPU. So the pages of a document that used up theirs are counted
across the fleet (a counter in Redis, app.services.queue), and once the count reaches the budget,
each page of the document still to be read may take MAX_PAGE_CPU_SECONDS_AFTER_TIMEOUTS (10 s)
instead: a sound page takes PDFium well under a second, tesseract's reading aside (which neither
limit counts). A sound document with a page or two that PDFium cannot read in time is not
touched.

The count is best-effort: when Redis does not answer within a couple of seconds, a chunk is read
within the full limit (a chunk under way goes on through a Redis outage, as it did before: its
lease is in the database).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from uuid import UUID

from redis.exceptions import RedisError

from app.core.config import Settings
from app.core.errors import QueueUnavailableError
from app.core.logging import get_logger
from app.engines.errors import PageTimeoutError
from app.engines.pool import page_timeout
from app.services.queue import JobQueue

log = get_logger(__name__)

_AFTER = "MAX_PAGE_CPU_SECONDS_AFTER_TIMEOUTS"


@dataclass(frozen=True)
class PageTimeoutBudget:
    queue: JobQueue
    settings: Settings
    ask_seconds: float = 2.0  # how long to wait for Redis's count (its client retries for ~30 s)

    async def page_seconds(self, document_id: UUID) -> float | None:
        """The CPU seconds each page of the document may take, when fewer than
        MAX_PAGE_CPU_SECONDS: None while the document is within its budget."""
        if not self._applies:
            return None
        count = await self._asked(self.queue.page_timeouts(document_id), document_id, "page_timeouts_unknown")
        return None if count is None else self._seconds_after(count)

    async def timed_out(
        self, document_id: UUID, error: PageTimeoutError, page_seconds: float | None
    ) -> tuple[PageTimeoutError, float | None]:
        """Count the page's timeout against its document. Returns the page's error (saying which
        limit it used up: page_seconds, when the chunk was read within fewer seconds) and the
        seconds each page of the document may take from now (None: the full limit)."""
        page = error.context.get("page")
        if page_seconds is not None:
            error = page_timeout(page if isinstance(page, int) else None, page_seconds, _AFTER)
        if not self._applies:
            return error, page_seconds
        count = await self._asked(
            self.queue.note_page_timeout(document_id), document_id, "page_timeout_not_counted"
        )
        if count is None:
            return error, page_seconds
        seconds = self._seconds_after(count)
        if seconds is not None and page_seconds is None:
            log.warning(
                "document_page_timeouts_spent",
                document_id=str(document_id),
                page_timeouts=count,
                page_cpu_seconds=seconds,
            )
        return error, seconds

    async def _asked(self, count: Awaitable[int], document_id: UUID, event: str) -> int | None:
        """The count Redis answers, or None (logged as event) when it does not in time."""
        try:
            # Not wait_for: on 3.11 it loses a cancel (the worker's stop) that lands as Redis
            # answers, and the chunk would be read on past its worker's stop.
            async with asyncio.timeout(self.ask_seconds):
                return await count
        except (QueueUnavailableError, RedisError, TimeoutError) as exc:  # any: it is best-effort
            log.warning(event, document_id=str(document_id), error=str(exc) or type(exc).__name__)
            return None

    @property
    def _applies(self) -> bool:
        settings = self.settings
        return bool(settings.max_document_page_timeouts) and (
            not settings.max_page_cpu_seconds
            or settings.max_page_cpu_seconds_after_timeouts < settings.max_page_cpu_seconds
        )

    def _seconds_after(self, count: int) -> float | None:
        if count < self.settings.max_document_page_timeouts:
            return None
        return self.settings.max_page_cpu_seconds_after_timeouts
