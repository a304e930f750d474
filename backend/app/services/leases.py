"""Keeping a lease alive while work runs: the same loop for a chunk and for a merge.

A heartbeat every few seconds extends the lease in the database. When the
database answers that the lease is gone (the sweep gave it to another attempt),
the work is cancelled at once and LeaseLostError raised, so nothing more is
written under a stale token. When the database does not answer at all, the work
goes on: a later beat may land, and every write the work makes is fenced anyway.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from app.core.errors import LeaseLostError, OCRError

T = TypeVar("T")


async def run_while_leased(
    work: Callable[[], Awaitable[T]],
    *,
    heartbeat: Callable[[], Awaitable[bool]],
    interval: float,
    what: str,
    on_beat: Callable[[OCRError | None], None] | None = None,
) -> T:
    """Run work, calling heartbeat every `interval` seconds; on_beat sees each beat's error (or None)."""
    task = asyncio.ensure_future(work())
    lost = asyncio.Event()

    async def beat() -> None:
        while not task.done():
            await asyncio.sleep(interval)
            try:
                alive = await heartbeat()
            except OCRError as exc:
                if on_beat is not None:
                    on_beat(exc)
                continue
            if not alive:
                lost.set()
                task.cancel()
                return
            if on_beat is not None:
                on_beat(None)

    beater = asyncio.create_task(beat())
    try:
        return await task
    except asyncio.CancelledError:
        if lost.is_set():
            raise LeaseLostError(f"lease on {what} lost") from None
        raise
    finally:
        beater.cancel()
        task.cancel()
