"""`chunk-ocr run`'s documents, kept to the command's own worker while it runs.

The command's worker is a real arq worker (app.local.workers). On the DATABASE_URL and
REDIS_URL of a fleet it took the fleet's jobs and claimed the fleet's chunks, with an engine,
languages and a store that are the laptop's: a chunk of an engine it could not build failed
for good (engine_unavailable). The fleet's workers took the command's chunks the same way.

So a run has an id, a private queue (its worker reads nothing else) and a reservation of
each document it starts or takes up again (app.services.planner.reserve_for_run): the
run's claims and sweeps see only those documents, and the fleet's leave them alone. The
reservations last the stale threshold and are renewed every third of it while the command
runs; when it ends, however it ends, they are released and the private queue is deleted, so
a `chunk-ocr worker` takes up what is left. A command that was killed releases nothing: its
reservations lapse after the stale threshold, as its chunks' leases do, and its queue goes
from Redis an hour after its last renewal.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
from dataclasses import dataclass, field

from app.core.errors import OCRError
from app.core.logging import get_logger
from app.local.stack import LocalStack
from app.services.documents import Documents
from app.services.queue import ArqJobQueue

log = get_logger(__name__)

PRIVATE_QUEUE_SECONDS = 3600  # a killed run's queue stays this long after its last renewal
CLOSE_SECONDS = 5.0  # what the end of a run waits to hand its documents back


def new_run_id() -> str:
    """run:host:pid:random, readable in the reservations and the queue's name."""
    return f"run:{socket.gethostname()[:64]}:{os.getpid()}:{secrets.token_hex(3)}"


@dataclass
class PrivateRun:
    stack: LocalStack
    queue: ArqJobQueue  # the run's private queue (queue.run_id)
    _renewing: asyncio.Task[None] | None = field(default=None, init=False)

    @classmethod
    def open(cls, stack: LocalStack) -> PrivateRun:
        """A new run on the stack's servers, renewing its reservations from now until close()."""
        run = cls(stack, ArqJobQueue(stack.redis, run_id=new_run_id()))
        run._renewing = asyncio.get_running_loop().create_task(run._renew(), name="chunk-ocr-run-renewal")
        return run

    @property
    def run_id(self) -> str:
        assert self.queue.run_id is not None
        return self.queue.run_id

    @property
    def documents(self) -> Documents:
        """The documents service whose starts are this run's (reserved, on its queue)."""
        return Documents(self.stack.service, self.stack.store, self.queue, self.stack.reader)

    async def _renew(self) -> None:
        every = self.stack.settings.stale_chunk_threshold_seconds / 3
        while True:
            await asyncio.sleep(every)
            try:
                held = await self.stack.service.renew_reservations(self.run_id)
                await self.queue.expire_private_queue(PRIVATE_QUEUE_SECONDS)
            except OCRError as exc:  # an outage: the next renewal tries again
                log.warning("run_reservations_not_renewed", run_id=self.run_id, error=str(exc))
            else:
                log.debug("run_reservations_renewed", run_id=self.run_id, documents=held)

    async def close(self) -> None:
        """Hand the run's documents back to the fleet and delete its queue (best effort, within
        CLOSE_SECONDS: what is not released lapses)."""
        if self._renewing is not None:
            self._renewing.cancel()
            # whatever ended it: a renewal that failed in a way of its own only let them lapse
            await asyncio.gather(self._renewing, return_exceptions=True)
        try:
            async with asyncio.timeout(CLOSE_SECONDS):
                released = await self.stack.service.release_reservations(self.run_id)
                discarded = await self.queue.discard_private_queue()
        except (OCRError, TimeoutError) as exc:
            log.warning("run_reservations_not_released", run_id=self.run_id, error=str(exc) or "timed out")
            return
        log.info(
            "run_reservations_released", run_id=self.run_id, documents=released, jobs_discarded=discarded
        )
