"""Job queue names and the enqueue side of arq.

Job ids make enqueueing idempotent: one id per chunk attempt and one per
document merge, so the reconciler and a retry can enqueue as often as they
like and arq keeps one job. ``keep_result=0`` frees an id as soon as its job
ends, so the next attempt (or a re-enqueue after Redis lost the queue) can use
it again.

Redis errors are translated here, once, into QueueUnavailableError. Losing an
enqueue loses no work: every job is also a database row that the sweep
re-enqueues, so callers log the error and go on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from uuid import UUID

from arq.connections import ArqRedis, RedisSettings, create_pool
from arq.constants import in_progress_key_prefix, job_key_prefix
from redis import exceptions as redis_errors
from redis._parsers import BaseParser
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from app.core.errors import ConfigurationError, QueueUnavailableError
from app.core.logging import get_logger
from app.models.ocr_chunk import DocumentOCRChunk

log = get_logger(__name__)

QUEUE_NAME = "chunk-ocr:queue"  # its own queue, so other arq apps on the same Redis are not mixed in
PROCESS_CHUNK_JOB = "process_chunk"
FINALIZE_DOCUMENT_JOB = "finalize_document"
SWEEP_JOB = "sweep"
HEALTH_CHECK_KEY = "chunk-ocr:health-check"
FINALIZE_PRIORITY_LEAD = timedelta(days=1)  # see _ahead_of_chunks
# Hash: engine name -> unix time a worker last said it can run it. The API refuses an engine
# that workers are known (recently) to exist for but none of them can run.
ENGINES_KEY = "chunk-ocr:engines"
ENGINE_ADVERTISEMENT_TTL_SECONDS = 600
# Hash: the languages one worker's tesseract reads, sorted and joined by + (eng+rus) -> unix
# time it last said so. Whole sets, not single codes: a document in rus+deu needs one worker
# with both. Read with the same TTL as the engines.
LANGUAGES_KEY = "chunk-ocr:languages"
# How many of a document's pages used up MAX_PAGE_CPU_SECONDS, on any worker: a counter a
# document (its id after the prefix), kept a week after its last page timeout.
PAGE_TIMEOUTS_KEY_PREFIX = "chunk-ocr:page-timeouts:"
PAGE_TIMEOUTS_TTL_SECONDS = 7 * 24 * 3600


class RedisRefusingError(redis_errors.ResponseError):
    """Redis refused a command for a state of its own that passes with time or an operator:
    MISCONF (it is set to stop writes when its last snapshot failed, a full disk on its host),
    NOREPLICAS (fewer replicas than min-replicas-to-write answer), BUSY (a script runs past its
    time limit). redis-py raises these as a plain ResponseError, which is also what a bug of
    ours would get (WRONGTYPE), so their error codes, the first word of a RESP error reply, are
    given this class in redis-py's table of them (what it does for OOM, LOADING, READONLY)."""


for _code in ("MISCONF", "NOREPLICAS", "BUSY"):
    BaseParser.EXCEPTION_CLASSES.setdefault(_code, RedisRefusingError)

# What a lost, restarting or full Redis raises. A refused connect surfaces as OSError inside
# redis-py, and a connection lost while a transaction WATCHes a key as WatchError. A Redis at its
# maxmemory under noeviction refuses every write (OOM) until memory is freed: a worker that took
# that for a bug exited, and a start answered 500 for a document it had already created.
REDIS_UNAVAILABLE: tuple[type[BaseException], ...] = (
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    redis_errors.WatchError,
    redis_errors.ReadOnlyError,  # a replica promoted mid-failover
    redis_errors.OutOfMemoryError,
    redis_errors.ClusterDownError,  # MASTERDOWN too: a replica whose primary is gone
    redis_errors.TryAgainError,
    RedisRefusingError,
    OSError,
    asyncio.TimeoutError,
)


@asynccontextmanager
async def translated_redis_errors() -> AsyncIterator[None]:
    try:
        yield
    except REDIS_UNAVAILABLE as exc:
        raise QueueUnavailableError(f"Redis is unavailable: {_reason(exc)}") from exc


def _reason(error: BaseException) -> str:
    """What to say of a Redis error: a full Redis's names the command it refused, with a pickled
    job in it, so its kind is said instead."""
    if isinstance(error, redis_errors.OutOfMemoryError):
        return "OutOfMemoryError: Redis is at its maxmemory and refuses writes"
    return f"{type(error).__name__}: {str(error)[:300]}"


def queue_name(run_id: str | None) -> str:
    """The arq queue of a `chunk-ocr run` (its private queue), or the fleet's shared queue."""
    return QUEUE_NAME if run_id is None else f"{QUEUE_NAME}:{run_id}"


def chunk_job_id(chunk_id: UUID, attempt: int) -> str:
    """`attempt` is the attempt the job will run: attempt_count + 1 of a pending row."""
    return f"ocr-chunk:{chunk_id}:{attempt}"


def finalize_job_id(document_id: UUID) -> str:
    return f"ocr-finalize:{document_id}"


class JobQueue(Protocol):
    # The `chunk-ocr run` whose documents this queue carries (its private queue), None for the
    # fleet's shared queue. Claims and sweeps made through it see only those documents.
    run_id: str | None

    async def enqueue_chunk(self, chunk_id: UUID, attempt: int, defer_by: timedelta | None = None) -> bool:
        """Enqueue one chunk attempt, due `defer_by` from now by this process's clock (None: now);
        False when that job is already queued."""
        ...

    async def enqueue_finalize(self, document_id: UUID) -> bool: ...

    async def rescue_chunk(self, chunk_id: UUID, attempt: int, generation: int) -> bool:
        """Enqueue again a chunk whose job a dead worker took before it could claim the chunk."""
        ...

    async def rescue_finalize(self, document_id: UUID, generation: int) -> bool: ...

    async def engine_offered(self, engine: str) -> bool | None:
        """Whether a worker said lately that it can run the engine; None when no worker said anything."""
        ...

    async def worker_languages(self) -> list[frozenset[str]]:
        """The languages each worker that spoke lately reads with tesseract (workers reading the
        same ones count once); empty when none said."""
        ...

    async def page_timeouts(self, document_id: UUID) -> int:
        """How many of the document's pages used up their CPU time lately, on any worker."""
        ...

    async def note_page_timeout(self, document_id: UUID) -> int:
        """Count one more of the document's pages that used up its CPU time; the count now."""
        ...


class ArqJobQueue:
    """The enqueue side of arq: the fleet's shared queue, or with run_id a `chunk-ocr run`'s
    private queue, whose jobs have ids of their own (a dead run's queue, read by nobody, holds
    its ids until they expire: the fleet must be able to enqueue the same attempts afresh)."""

    def __init__(self, redis: ArqRedis, run_id: str | None = None) -> None:
        self.redis = redis
        self.run_id = run_id
        self.queue_name = queue_name(run_id)
        self._job_prefix = "" if run_id is None else f"{run_id}:"

    async def enqueue_chunk(self, chunk_id: UUID, attempt: int, defer_by: timedelta | None = None) -> bool:
        async with translated_redis_errors():
            job = await self.redis.enqueue_job(
                PROCESS_CHUNK_JOB,
                str(chunk_id),
                _job_id=self._job_prefix + chunk_job_id(chunk_id, attempt),
                _queue_name=self.queue_name,
                _defer_by=defer_by,
            )
        return job is not None

    async def rescue_chunk(self, chunk_id: UUID, attempt: int, generation: int) -> bool:
        """arq marks a job in progress when a worker takes it and only frees the id when the
        in-progress key expires (the job timeout + 10 s, an hour here). If that worker died
        before claiming the chunk, the row stays pending behind an id nobody will run. When the
        id is in progress but not queued, enqueue the same attempt under a rescue id; should the
        first worker be alive after all, one of the two deliveries finds nothing to claim.
        """
        job_id = self._job_prefix + chunk_job_id(chunk_id, attempt)
        return await self._rescue(PROCESS_CHUNK_JOB, job_id, chunk_id, generation)

    async def rescue_finalize(self, document_id: UUID, generation: int) -> bool:
        """The same for a finalize job (finalize is idempotent, so a duplicate is harmless)."""
        return await self._rescue(
            FINALIZE_DOCUMENT_JOB,
            self._job_prefix + finalize_job_id(document_id),
            document_id,
            generation,
            **_ahead_of_chunks(),
        )

    async def _rescue(
        self, function: str, job_id: str, target: UUID, generation: int, **options: Any
    ) -> bool:
        # arq leaves a running job in the queue's sorted set until it ends, so "in progress"
        # must be asked first; "queued and not in progress" is a job that will still run.
        async with translated_redis_errors():
            if await self.redis.exists(in_progress_key_prefix + job_id):
                job_id = f"{job_id}:rescue-{generation}"  # held by a worker that is gone
            elif await self.redis.zscore(self.queue_name, job_id) is not None:
                return False
            job = await self.redis.enqueue_job(
                function, str(target), _job_id=job_id, _queue_name=self.queue_name, **options
            )
        return job is not None

    async def enqueue_finalize(self, document_id: UUID) -> bool:
        async with translated_redis_errors():
            job = await self.redis.enqueue_job(
                FINALIZE_DOCUMENT_JOB,
                str(document_id),
                _job_id=self._job_prefix + finalize_job_id(document_id),
                _queue_name=self.queue_name,
                **_ahead_of_chunks(),
            )
        return job is not None

    async def expire_private_queue(self, seconds: int) -> None:
        """A run's private queue, and what is queued in it, goes `seconds` after the last call:
        a run renews it while it runs, so the queue of one that was killed does not stay in
        Redis for ever (its documents' jobs are the fleet's by then, under the shared ids)."""
        if self.run_id is not None:
            async with translated_redis_errors():
                await self.redis.expire(self.queue_name, seconds)

    async def discard_private_queue(self) -> int:
        """Delete a run's private queue and its queued jobs, as the run ends; how many jobs."""
        if self.run_id is None:
            return 0
        async with translated_redis_errors():
            job_ids: list[bytes] = await self.redis.zrange(self.queue_name, 0, -1)
            keys = [job_key_prefix + job_id.decode() for job_id in job_ids]
            await self.redis.delete(self.queue_name, *keys)
        return len(job_ids)

    async def advertise_engines(self, engines: list[str]) -> None:
        """Say that a worker can run these engines (now)."""
        if engines:
            now = str(int(time.time()))
            async with translated_redis_errors():
                await self.redis.hset(ENGINES_KEY, mapping=dict.fromkeys(engines, now))  # type: ignore[misc]

    async def engine_offered(self, engine: str) -> bool | None:
        """Whether a worker said lately that it can run the engine; None when no worker said anything."""
        fresh = await self._fresh(ENGINES_KEY)
        if not fresh:
            return None
        return engine in fresh

    async def advertise_languages(self, languages: list[str]) -> None:
        """Say that a worker's tesseract reads these languages (now)."""
        if languages:
            now = str(int(time.time()))
            async with translated_redis_errors():
                await self.redis.hset(LANGUAGES_KEY, "+".join(sorted(set(languages))), now)  # type: ignore[misc]

    async def worker_languages(self) -> list[frozenset[str]]:
        """The languages each worker that spoke lately reads with tesseract; empty when none said."""
        return [frozenset(field.split("+")) for field in sorted(await self._fresh(LANGUAGES_KEY))]

    async def page_timeouts(self, document_id: UUID) -> int:
        async with translated_redis_errors():
            count = await self.redis.get(PAGE_TIMEOUTS_KEY_PREFIX + str(document_id))
        return int(count or 0)

    async def note_page_timeout(self, document_id: UUID) -> int:
        key = PAGE_TIMEOUTS_KEY_PREFIX + str(document_id)
        async with translated_redis_errors(), self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(key)
            pipe.expire(key, PAGE_TIMEOUTS_TTL_SECONDS)
            count, _ = await pipe.execute()
        return int(count)

    async def _fresh(self, key: str) -> set[str]:
        """The fields of an advertisement hash written within the TTL."""
        async with translated_redis_errors():
            seen: dict[bytes, bytes] = await self.redis.hgetall(key)  # type: ignore[misc]
        fresh_after = time.time() - ENGINE_ADVERTISEMENT_TTL_SECONDS
        return {name.decode() for name, at in seen.items() if float(at) >= fresh_after}


def _ahead_of_chunks() -> dict[str, Any]:
    """arq options that put a finalize job ahead of every chunk job enqueued in the last day.

    arq runs due jobs in order of their score, the time they are due. A merge is a few seconds
    of work that ends a document; behind a large document's thousand queued chunk jobs it would
    wait for all of them, so its score is set a day back (and its expiry a day past that). arq's
    start line then reports `delayed=86400 s` or so for finalize jobs: that is this lead, not a
    wait.
    """
    return {
        "_defer_until": datetime.now(UTC) - FINALIZE_PRIORITY_LEAD,
        "_expires": FINALIZE_PRIORITY_LEAD + timedelta(days=1),
    }


async def enqueue_next_attempts(queue: JobQueue, chunks: Sequence[DocumentOCRChunk]) -> bool:
    """Enqueue the next attempt of each pending chunk, due when its row is (next_attempt_at: now
    for a new or a forced chunk, after its backoff for an automatic retry).

    Due after the row's delay (next_attempt_at less updated_at, both the database's clock), not
    at its next_attempt_at: arq compares a job's time with the clock of the worker that polls,
    and a worker whose clock ran 5 minutes behind the database's left every new chunk queued,
    not due, for those 5 minutes.

    False (logged) when Redis is unavailable: the rows are pending in the
    database, so the sweep enqueues them once it is back. Nothing is lost.
    """
    try:
        for chunk in chunks:
            delay = chunk.next_attempt_at - chunk.updated_at
            defer_by = delay if delay > timedelta(0) else None
            await queue.enqueue_chunk(chunk.id, chunk.attempt_count + 1, defer_by)
    except QueueUnavailableError as exc:
        log.warning(
            "enqueue_deferred_to_sweep",
            document_id=str(chunks[0].document_id),
            chunks=len(chunks),
            error=str(exc),
        )
        return False
    return True


def redis_settings(url: str | None) -> RedisSettings:
    """arq RedisSettings from REDIS_URL, with short runtime retries.

    A command is tried 7 times over about 4 s (a Redis restart or failover) before its error
    surfaces. redis-py retries each connect with the same policy inside every try, so a
    command that has to reconnect to a Redis that stays down fails only after 7 connects of
    about 4.4 s each: about 31 s (measured). The worker's poll loop then waits
    out a longer outage itself (app.worker_loop), and other callers report QueueUnavailableError.
    """
    if not url:
        raise ConfigurationError("REDIS_URL is not set")
    try:
        settings = RedisSettings.from_dsn(url)
    except (RuntimeError, ValueError) as exc:
        raise ConfigurationError(f"REDIS_URL is not a valid Redis URL ({exc})") from None
    settings.conn_timeout = 5
    settings.conn_retries = 30  # at start-up: about 30 s for Redis to come up
    settings.conn_retry_delay = 1
    settings.retry_on_timeout = True
    settings.retry_on_error = [redis_errors.ConnectionError, redis_errors.TimeoutError]
    # redis-py retries only its own ConnectionError by default, but a refused connect reaches the
    # retry loop as a bare OSError: without it here, a Redis that is restarting fails at once.
    settings.retry = Retry(
        ExponentialBackoff(cap=1.0, base=0.1),
        retries=6,
        supported_errors=(redis_errors.ConnectionError, redis_errors.TimeoutError, OSError),  # type: ignore[arg-type]
    )
    return settings


def bound_replies(redis: ArqRedis, seconds: float) -> None:
    """Wait at most `seconds` for each reply on `redis`'s connections, those it has and those it
    will open. arq's RedisSettings has no such option (its pools wait for ever), so it is set on
    the pool arq made."""
    connections = redis.connection_pool
    connections.connection_kwargs["socket_timeout"] = seconds  # the connections it opens from now
    # and those it has (arq's create_pool pinged through one): redis-py keeps them in these sets
    opened = (getattr(connections, name, ()) for name in ("_available_connections", "_in_use_connections"))
    for connection in (c for group in opened for c in group):
        connection.socket_timeout = seconds


async def connect_redis(url: str | None, *, wait: bool = True, reply_timeout: float = 5.0) -> ArqRedis:
    """An arq Redis pool for REDIS_URL; QueueUnavailableError if Redis does not answer (after the
    start-up retries of redis_settings), ConfigurationError if the URL is missing or invalid.

    wait=False (the API): one try; a Redis that does not answer gives a pool that connects on
    its first command instead, so the API serves (uploads left to the sweep, /healthz 503)
    where it waited minutes for Redis before listening at all. reply_timeout: bound_replies."""
    settings = redis_settings(url)
    if not wait:
        settings.conn_retries = 0
    try:
        redis = await create_pool(settings)
    except REDIS_UNAVAILABLE as exc:
        if not wait:
            log.warning("redis_unavailable_at_start", error=_reason(exc))
            redis = _unchecked_pool(settings)
        else:
            raise QueueUnavailableError(f"cannot connect to Redis: {type(exc).__name__}: {exc}") from exc
    bound_replies(redis, reply_timeout)
    return redis


def _unchecked_pool(settings: RedisSettings) -> ArqRedis:
    """The pool arq's create_pool makes, without its ping (redis-py connects on the first command)."""
    return ArqRedis(
        host=settings.host,
        port=settings.port,
        unix_socket_path=settings.unix_socket_path,
        socket_connect_timeout=settings.conn_timeout,
        ssl=settings.ssl,
        ssl_keyfile=settings.ssl_keyfile,
        ssl_certfile=settings.ssl_certfile,
        ssl_cert_reqs=settings.ssl_cert_reqs,
        ssl_ca_certs=settings.ssl_ca_certs,
        ssl_ca_data=settings.ssl_ca_data,
        ssl_check_hostname=settings.ssl_check_hostname,
        retry=settings.retry,
        retry_on_timeout=settings.retry_on_timeout,
        retry_on_error=settings.retry_on_error,
        max_connections=settings.max_connections,
        db=settings.database,
        username=settings.username,
        password=settings.password,
        encoding="utf8",
    )
