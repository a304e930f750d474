"""Job queue names and the enqueue side of arq.

Job ids make enqueueing idempotent: one id per chunk attempt and one per
document merge, so the reconciler and a retry can enqueue as often as they
like and arq keeps one job. ``keep_result=0`` frees an id as soon as its job
ends, so the next attempt (or a re-enqueue after Redis lost the queue) can use
it again.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol
from uuid import UUID

from arq.connections import ArqRedis, RedisSettings
from arq.constants import in_progress_key_prefix
from redis import exceptions as redis_errors
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from app.core.errors import ConfigurationError

QUEUE_NAME = "chunk-ocr:queue"  # its own queue, so other arq apps on the same Redis are not mixed in
PROCESS_CHUNK_JOB = "process_chunk"
FINALIZE_DOCUMENT_JOB = "finalize_document"
SWEEP_JOB = "sweep"
HEALTH_CHECK_KEY = "chunk-ocr:health-check"


def chunk_job_id(chunk_id: UUID, attempt: int) -> str:
    """`attempt` is the attempt the job will run: attempt_count + 1 of a pending row."""
    return f"ocr-chunk:{chunk_id}:{attempt}"


def finalize_job_id(document_id: UUID) -> str:
    return f"ocr-finalize:{document_id}"


class JobQueue(Protocol):
    async def enqueue_chunk(self, chunk_id: UUID, attempt: int, defer_until: datetime | None = None) -> bool:
        """Enqueue one chunk attempt; False when that job is already queued."""
        ...

    async def enqueue_finalize(self, document_id: UUID) -> bool: ...

    async def rescue_chunk(self, chunk_id: UUID, attempt: int, generation: int) -> bool:
        """Enqueue again a chunk whose job a dead worker took before it could claim the chunk."""
        ...

    async def rescue_finalize(self, document_id: UUID, generation: int) -> bool: ...


class ArqJobQueue:
    def __init__(self, redis: ArqRedis) -> None:
        self.redis = redis

    async def enqueue_chunk(self, chunk_id: UUID, attempt: int, defer_until: datetime | None = None) -> bool:
        job = await self.redis.enqueue_job(
            PROCESS_CHUNK_JOB,
            str(chunk_id),
            _job_id=chunk_job_id(chunk_id, attempt),
            _queue_name=QUEUE_NAME,
            _defer_until=defer_until,
        )
        return job is not None

    async def rescue_chunk(self, chunk_id: UUID, attempt: int, generation: int) -> bool:
        """arq marks a job in progress when a worker takes it and only frees the id when the
        in-progress key expires (the job timeout + 10 s, an hour here). If that worker died
        before claiming the chunk, the row stays pending behind an id nobody will run. When the
        id is in progress but not queued, enqueue the same attempt under a rescue id; should the
        first worker be alive after all, one of the two deliveries finds nothing to claim.
        """
        return await self._rescue(PROCESS_CHUNK_JOB, chunk_job_id(chunk_id, attempt), chunk_id, generation)

    async def rescue_finalize(self, document_id: UUID, generation: int) -> bool:
        """The same for a finalize job (finalize is idempotent, so a duplicate is harmless)."""
        return await self._rescue(
            FINALIZE_DOCUMENT_JOB, finalize_job_id(document_id), document_id, generation
        )

    async def _rescue(self, function: str, job_id: str, target: UUID, generation: int) -> bool:
        # arq leaves a running job in the queue's sorted set until it ends, so "in progress"
        # must be asked first; "queued and not in progress" is a job that will still run.
        if await self.redis.exists(in_progress_key_prefix + job_id):
            job_id = f"{job_id}:rescue-{generation}"  # held by a worker that is gone
        elif await self.redis.zscore(QUEUE_NAME, job_id) is not None:
            return False
        job = await self.redis.enqueue_job(function, str(target), _job_id=job_id, _queue_name=QUEUE_NAME)
        return job is not None

    async def enqueue_finalize(self, document_id: UUID) -> bool:
        job = await self.redis.enqueue_job(
            FINALIZE_DOCUMENT_JOB,
            str(document_id),
            _job_id=finalize_job_id(document_id),
            _queue_name=QUEUE_NAME,
        )
        return job is not None


def redis_settings(url: str | None) -> RedisSettings:
    """arq RedisSettings from REDIS_URL, with runtime retries so a Redis restart does not kill a worker."""
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
    settings.retry = Retry(ExponentialBackoff(cap=5.0, base=0.2), retries=20)
    return settings
