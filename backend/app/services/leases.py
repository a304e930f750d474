"""Keeping a lease alive while work runs: the same loop for a chunk and for a merge.

A heartbeat every few seconds extends the lease in the database. When the
database answers that the lease is gone (the sweep gave it to another attempt),
the work is cancelled at once and LeaseLostError raised, so nothing more is
written under a stale token. When the database does not answer at all, the work
goes on: a later beat may land, and every write the work makes is fenced anyway.

The work ends with a fenced write that ends the lease too (completing the chunk, or the
merge). A beat in flight as that write commits is refused (the lease it extends is gone
because the work finished), which is not a lost lease: the work raises its Fence first,
and from then on the beats stop and a refusal is the write's to judge.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from app.core.errors import LeaseLostError, OCRError

T = TypeVar("T")


@dataclass
class Fence:
    """Raised by the work just before its last write, the fenced one that ends the lease."""

    raised: bool = False


async def run_while_leased(
    work: Callable[[], Awaitable[T]],
    *,
    heartbeat: Callable[[], Awaitable[bool]],
    interval: float,
    what: str,
    on_beat: Callable[[OCRError | None], None] | None = None,
    fence: Fence | None = None,
) -> T:
    """Run work, calling heartbeat every `interval` seconds until the work ends or raises the
    fence; on_beat sees each beat's error (or None)."""
    task = asyncio.ensure_future(work())
    lost = asyncio.Event()
    fence = fence or Fence()

    async def beat() -> None:
        while not task.done():
            await asyncio.sleep(interval)
            if fence.raised:
                return
            try:
                alive = await heartbeat()
            except OCRError as exc:
                if on_beat is not None:
                    on_beat(exc)
                continue
            if not alive:
                if not fence.raised:
                    lost.set()
                    task.cancel()
                # else refused because the last write committed first: that write's answer decides
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
