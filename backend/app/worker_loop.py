"""arq's Worker, made to outlive Redis outages.

arq ends its poll loop, and with it the process, on the first Redis error it
does not expect: a refused connect once its client retries run out, or a
connection lost while it WATCHes a job's key to start it, so a few seconds
without Redis ended every worker. A dead worker leaves its chunks
`processing` with nobody to sweep them. ChunkOcrWorker instead:

- waits for Redis at start-up for as long as it takes;
- treats a Redis error in a poll iteration as an outage: logs it once, waits
  with capped backoff and polls again, while running chunks go on (their
  leases live in the database, not in Redis); when Redis answers again it
  re-enqueues from the database at once (a restarted Redis lost its queue)
  and frees the in-progress keys of jobs the outage cut short;
- writes its health record with the state of Redis and the database, and
  advertises the engines it can run and the languages its tesseract reads;
- on shutdown, still stops its OCR processes when Redis is gone.

Both entry points run it: `chunk-ocr worker` builds it directly, and
`arq app.worker.WorkerSettings` (whose CLI always builds arq's own Worker)
has it adopted by the start-up hook (``adopt_running_worker``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
import time
from typing import Any

from arq.connections import create_pool
from arq.constants import in_progress_key_prefix
from arq.worker import Worker

from app.core.backoff import Backoff
from app.core.errors import OCRError, QueueUnavailableError
from app.core.health import DATABASE, REDIS, DependencyHealth, Probe
from app.core.logging import get_logger
from app.services.queue import REDIS_UNAVAILABLE, ArqJobQueue
from app.services.recovery import sweep

log = get_logger(__name__)

# The ctx key of what starts the worker's Redis or database again, by dependency (REDIS,
# DATABASE), when it is an embedded server that went away; absent for a server of REDIS_URL or
# DATABASE_URL, which its operator restarts. `chunk-ocr worker` and `run` on the embedded servers
# set it (app.local.stack.Services.revivers); DependencyHealth runs them in an outage.
REVIVERS = "revivers"
# The Redis client itself retries each call for about 4 s; this only spaces the polls that follow.
_OUTAGE_BACKOFF = Backoff(base=0.2, cap=2.0)
# What a Redis outage raises in the worker: redis-py's and arq's own errors, and ours where the
# worker's calls go through ArqJobQueue (which translates them).
_OUTAGE: tuple[type[BaseException], ...] = (*REDIS_UNAVAILABLE, QueueUnavailableError)


class ChunkOcrWorker(Worker):
    health: DependencyHealth
    _redis_failures: int
    _asked_redis: bool
    _unfinished: set[str]  # jobs whose start or finish Redis failed: their in-progress keys linger
    _database_probe: Probe | None  # the health record's ping, made once the runtime is built
    _stopped_jobs: set[asyncio.Task[Any]]  # job functions' tasks a stop cancelled (close awaits them)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._init_outage_state()

    def _init_outage_state(self) -> None:
        self._database_probe = None
        self.health = DependencyHealth()
        for dependency, revive in (self.ctx.get(REVIVERS) or {}).items():
            self.health.revive_with(dependency, revive)
        self._redis_failures = 0
        self._asked_redis = False
        self._unfinished = set()
        self._stopped_jobs = set()
        self.ctx["health"] = self.health  # the start-up hook hands it to the runtime

    async def main(self) -> None:
        # One try per create_pool, the waiting done here: arq's own retries (a week of them, for
        # arq's CLI, app.worker._redis_settings) would never reach _redis_down, which starts an
        # embedded Redis again.
        while self._pool is None:  # no pool given: arq's __init__ made redis_settings
            assert self.redis_settings is not None
            try:
                self._pool = await create_pool(
                    dataclasses.replace(self.redis_settings, conn_retries=0),
                    job_deserializer=self.job_deserializer,
                    job_serializer=self.job_serializer,
                    default_queue_name=self.queue_name,
                    expires_extra_ms=self.expires_extra_ms,
                )
            except REDIS_UNAVAILABLE as exc:
                await self._redis_down(exc)
        while True:
            try:
                await super().main()  # start-up hook, then the poll loop
                return
            except _OUTAGE as exc:  # Redis went away during start-up itself
                await self._redis_down(exc)

    def handle_sig(self, signum: signal.Signals) -> None:
        """arq's stop: cancel the running jobs and the poll loop. Their chunks are handed back
        uncharged (ChunkProcessor.stop_requested): the worker stopped, not the chunk."""
        self._stop_requested()
        super().handle_sig(signum)
        self._cancel_jobs()

    async def _wait_for_tasks_to_complete(self, signum: signal.Signals) -> None:
        """arq's stop with a grace period (job_completion_wait): take no more jobs, wait for the
        running ones, then cancel what is left, as handle_sig does."""
        self._stop_requested()
        await super()._wait_for_tasks_to_complete(signum)
        self._cancel_jobs()

    def _stop_requested(self) -> None:
        runtime = self.ctx.get("runtime")
        if runtime is not None:
            runtime.processor.stop_requested()

    def _cancel_jobs(self) -> None:
        """Cancel the job functions' own tasks too, not only arq's run_job tasks around them.

        run_job awaits its job through asyncio.wait_for, which on 3.11 loses the cancel when the
        job's current await ends as the cancel lands (a Redis reply, say): the job reads on. The
        next cancel (close cancels again) then ends run_job at once while its job runs on,
        unwatched, and the shutdown hook stopped the OCR processes under it. Cancelled here, a
        job is handed back (ChunkProcessor); close awaits these tasks before the shutdown hook."""
        running = [task for task in self.job_tasks.values() if not task.done()]
        self._stopped_jobs.update(running)
        for task in running:
            task.cancel()

    async def _poll_iteration(self) -> None:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            # A stop cancelled the main task, and something the task awaited caught the
            # CancelledError without passing it on (on 3.11, asyncio.wait_for does when the call
            # it waits on ends as the cancel lands): without this the worker would poll on,
            # taking no jobs, until it is killed.
            log.warning("worker_stop_resumed")
            raise asyncio.CancelledError
        # Whether this iteration asks Redis anything: for jobs when a slot is free, and the health
        # record when it is due (record_health sets it). One that asks nothing (every slot taken)
        # is no news of Redis: it must not count as Redis back during an outage.
        self._asked_redis = self.allow_pick_jobs and self.job_counter < self.max_jobs
        try:
            await super()._poll_iteration()
        except _OUTAGE as exc:
            await self._redis_down(exc)
        else:
            if not self._asked_redis:
                return
            self._redis_failures = 0
            if not self.health.is_up(REDIS):
                self.health.restored(REDIS)
                await self._reconcile()
            if self._unfinished:
                await self._release_unfinished()

    async def _reconcile(self) -> None:
        """Re-enqueue from the database now, not at the next sweep: a Redis that restarted empty
        lost every queued job. Safe on every worker at once, like the sweep itself."""
        runtime = self.ctx.get("runtime")
        if runtime is None:
            return
        try:
            await sweep(runtime.service, runtime.processor.queue)
        except OCRError as exc:  # the periodic sweep tries again
            log.warning("reconcile_failed", error_code=exc.code, error=str(exc))

    async def run_job(self, job_id: str, score: int) -> None:
        """arq's run_job; a Redis error before or after the job function ran is remembered, not raised.

        arq would re-raise it from the poll loop later (as if Redis were down then). The job's
        in-progress key (an hour) is what matters: while it lives no worker takes the job again.
        """
        try:
            await super().run_job(job_id, score)
        except REDIS_UNAVAILABLE as exc:
            self._unfinished.add(job_id)
            self.health.failed(REDIS, exc)
            log.warning("job_unfinished", job_id=job_id, error_type=type(exc).__name__)

    async def _release_unfinished(self) -> None:
        """Delete the in-progress keys of jobs Redis failed, now that it answers again.

        If Redis kept its data through the outage, those jobs are still queued behind their keys;
        without this a chunk whose job never ran waits for the sweep's rescue (the stale threshold).
        A job that had run is delivered again and finds nothing to claim: a logged no-op.
        """
        for job_id in list(self._unfinished):
            await self.pool.delete(in_progress_key_prefix + job_id)
            self._unfinished.discard(job_id)
            log.info("job_in_progress_key_released", job_id=job_id)

    async def start_jobs(self, job_ids: list[bytes]) -> None:
        """arq's start_jobs, one job at a time, giving back the slot a Redis error would leak.

        arq takes a slot (its semaphore and job counter) for a job before the Redis
        calls that start it, and frees it only on paths it expects: an error from
        those calls keeps the slot forever, and after max_jobs such errors the
        worker polls on but never starts a job again.
        """
        for job_id in job_ids:
            try:
                await super().start_jobs([job_id])
            except REDIS_UNAVAILABLE:
                self.job_counter -= 1
                self.sem.release()
                raise

    async def _redis_down(self, error: BaseException) -> None:
        # An embedded Redis is started again from here (its reviver): nobody else may, and its
        # clients reconnect to the same socket once it is back (then _reconcile re-enqueues what
        # its queue lost).
        self._redis_failures += 1
        self.health.failed(REDIS, error)
        await asyncio.sleep(_OUTAGE_BACKOFF.delay(self._redis_failures))

    async def record_health(self) -> None:
        """arq's health record (its `--check` reads it), with our dependencies; engines and languages
        advertised. Advertising goes through ArqJobQueue, whose Redis errors are QueueUnavailableError:
        one in _OUTAGE, so an outage seen first here (a worker whose job slots are all taken asks
        Redis nothing else) is waited out like any other, not the end of the worker."""
        now = time.time()
        if now - self._last_health_check < self.health_check_interval:
            return
        self._last_health_check = now
        self._asked_redis = True
        runtime = self.ctx.get("runtime")
        if runtime is not None:
            await self._check_database(runtime)
            if runtime.engines.complete:  # a part would read as all this worker can run
                queue = ArqJobQueue(self.pool)
                await queue.advertise_engines(runtime.engines.available)
                await queue.advertise_languages(runtime.engines.languages)
        ongoing = sum(not t.done() for t in self.tasks.values())
        info = (
            f"{time.strftime('%b-%d %H:%M:%S')} j_complete={self.jobs_complete} "
            f"j_failed={self.jobs_failed} j_retried={self.jobs_retried} j_ongoing={ongoing} "
            f"queued={await self.pool.zcard(self.queue_name)} {self.health.summary(REDIS, DATABASE)}"
        )
        await self.pool.psetex(
            self.health_check_key, int((self.health_check_interval + 1) * 1000), info.encode()
        )

    async def _check_database(self, runtime: Any) -> None:
        """Ping the database, waiting 10 s at most: the poll loop waits for this, and a call
        to a database that does not answer takes DATABASE_TIMEOUT_SECONDS, and as long again to
        cancel (Probe)."""
        if self._database_probe is None:
            self._database_probe = Probe(runtime.service.ping)
        error = await self._database_probe(10)
        if error is None:
            self.health.restored(DATABASE)
        elif isinstance(error, (OCRError, TimeoutError)):
            self.health.failed(DATABASE, error)
        else:
            raise error

    async def close(self) -> None:
        """arq's close, except that an outage or a failed job does not skip the shutdown hook
        (which stops the OCR processes)."""
        if not self._handle_signals:
            self.handle_sig(signal.SIGUSR1)
        if not self._pool:
            return
        await asyncio.gather(*self.tasks.values(), *self._stopped_jobs, return_exceptions=True)
        self._stopped_jobs.clear()
        try:
            with contextlib.suppress(*REDIS_UNAVAILABLE):  # TimeoutError among them
                async with asyncio.timeout(2):
                    await self.pool.delete(self.health_check_key)
            if self.on_shutdown:
                await self.on_shutdown(self.ctx)
        finally:
            with contextlib.suppress(*REDIS_UNAVAILABLE):
                await self.pool.aclose(close_connection_pool=True)
            self._pool = None


def adopt_running_worker() -> ChunkOcrWorker | None:
    """Make the arq Worker that is running this start-up hook a ChunkOcrWorker.

    arq's CLI (`arq app.worker.WorkerSettings`) always builds arq's own Worker
    and passes hooks nothing but ctx, so the worker is found as the `self` of
    the coroutine its main task runs (Worker.main), and its class is swapped
    for our subclass, which adds methods and no slots. From the next poll
    iteration on it behaves exactly as if it had been built as one. Returns
    None when the hook is not running inside a Worker's main (a test calling it).
    """
    task = asyncio.current_task()
    frame = getattr(task.get_coro(), "cr_frame", None) if task is not None else None
    worker = frame.f_locals.get("self") if frame is not None else None
    if not isinstance(worker, Worker):
        return None
    if isinstance(worker, ChunkOcrWorker):
        return worker
    worker.__class__ = ChunkOcrWorker
    adopted: ChunkOcrWorker = worker  # type: ignore[assignment]  # what the line above made it
    adopted._init_outage_state()
    if adopted._handle_signals:  # arq bound its handlers to its own class's methods: bind ours
        stop = adopted.handle_sig_wait_for_completion if adopted._job_completion_wait else adopted.handle_sig
        for signum in (signal.SIGINT, signal.SIGTERM):
            adopted._add_signal_handler(signum, stop)
    log.debug("worker_adopted")
    return adopted
