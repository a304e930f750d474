"""arq worker: `arq app.worker.WorkerSettings` (or `chunk-ocr worker`; both run ChunkOcrWorker).

Job functions are thin: they decode an id and call the pipeline. They do not
raise for business failures (those are written to the chunk row and retried
from the database), so arq's own retry and in-progress lease never decide
anything.

Both entry points refuse to start, in one line, without REDIS_URL and a
database: a worker that guessed localhost would wait forever on a Redis nobody
enqueues to. (`chunk-ocr worker` with neither set uses the embedded servers
that `chunk-ocr submit` uses, and says so.)
"""

from __future__ import annotations

import sys
from typing import Any

from arq import cron, func
from arq.connections import RedisSettings
from arq.worker import get_kwargs

from app.core.config import Settings, get_settings
from app.core.errors import ConfigurationError, OCRError
from app.core.health import DependencyHealth
from app.core.logging import configure_logging, get_logger
from app.services.queue import (
    FINALIZE_DOCUMENT_JOB,
    HEALTH_CHECK_KEY,
    PROCESS_CHUNK_JOB,
    QUEUE_NAME,
    SWEEP_JOB,
    ArqJobQueue,
    redis_settings,
)
from app.services.recovery import sweep
from app.services.runtime import Runtime, build_runtime
from app.worker_loop import ChunkOcrWorker, adopt_running_worker

log = get_logger(__name__)


async def startup(ctx: dict[str, Any]) -> None:
    if "runtime" in ctx:  # ChunkOcrWorker runs arq's main again after a Redis error at start-up
        return
    settings = get_settings()
    configure_logging(settings.log_level)
    adopt_running_worker()  # under `arq app.worker.WorkerSettings`, arq built its own Worker
    health = ctx.get("health") or DependencyHealth()
    runtime = await build_runtime(settings, ArqJobQueue(ctx["redis"]), health=health)
    ctx["runtime"] = runtime
    log.info(
        "worker_started",
        worker_id=runtime.processor.worker_id,
        default_engine=settings.ocr_engine,
        ocr_processes=settings.ocr_process_count,
    )


async def shutdown(ctx: dict[str, Any]) -> None:
    runtime: Runtime | None = ctx.get("runtime")
    if runtime is not None:
        await runtime.close()
        log.info("worker_stopped", worker_id=runtime.processor.worker_id)


async def process_chunk(ctx: dict[str, Any], chunk_id: str) -> str:
    runtime: Runtime = ctx["runtime"]
    outcome = await runtime.processor.process(chunk_id)
    return outcome.value


async def finalize_document(ctx: dict[str, Any], document_id: str) -> str:
    runtime: Runtime = ctx["runtime"]
    outcome = await runtime.finalizer.finalize(document_id)
    return outcome.value


async def sweep_job(ctx: dict[str, Any]) -> None:
    runtime: Runtime = ctx["runtime"]
    try:
        await sweep(runtime.service, ArqJobQueue(ctx["redis"]))
    except OCRError as exc:  # the next tick tries again
        log.warning("sweep_failed", error_code=exc.code, error=str(exc))


def _sweep_seconds() -> set[int]:
    interval = get_settings().sweep_interval_seconds
    return set(range(0, 60, interval))


def _redis_settings() -> RedisSettings:
    url = get_settings().redis_url
    # Without REDIS_URL a worker refuses to start (require_services); arq's default stands in so
    # that importing this module (tests build workers with their own Redis) does not fail.
    settings = redis_settings(url) if url else RedisSettings()
    # A worker started while Redis is down waits for it (arq logs each try), under arq's CLI too,
    # where arq connects before our start-up hook runs: a week of tries, 2 s apart.
    settings.conn_retries = 7 * 24 * 3600 // 2
    settings.conn_retry_delay = 2
    return settings


def require_services(settings: Settings) -> None:
    """What a worker cannot start without, as one-line configuration errors."""
    if settings.redis_url is None:
        raise ConfigurationError(
            "REDIS_URL is not set: a worker must use the Redis the API and `chunk-ocr submit` enqueue to "
            "(`chunk-ocr worker` with neither REDIS_URL nor DATABASE_URL set uses the embedded servers)"
        )
    if settings.database_url is None and not settings.supabase_configured:
        raise ConfigurationError("DATABASE_URL is not set (nor SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY)")


def run() -> None:
    """`chunk-ocr worker`: a ChunkOcrWorker with the options `arq app.worker.WorkerSettings` has."""
    require_services(get_settings())
    ChunkOcrWorker(**get_kwargs(WorkerSettings)).run()  # type: ignore[arg-type]  # arq's own settings type


def _check_under_arq_cli() -> None:
    """Under `arq app.worker.WorkerSettings`, a configuration error is one line and exit code 2, as
    with `chunk-ocr worker`, rather than a traceback from inside arq (or a wait on a guessed Redis)."""
    try:
        require_services(get_settings())
    except ConfigurationError as exc:
        print(f"arq app.worker.WorkerSettings: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


if "arq.cli" in sys.modules:  # loaded by arq's command line, which imports us before it runs anything
    _check_under_arq_cli()


def _max_jobs() -> int:
    settings = get_settings()
    # one job per OCR process, plus one so a finalize or a quick no-op never waits behind OCR
    return settings.worker_max_jobs or settings.ocr_process_count + 1


class WorkerSettings:
    functions = [
        func(
            process_chunk,
            name=PROCESS_CHUNK_JOB,
            keep_result=0,
            max_tries=3,
            timeout=get_settings().chunk_job_timeout_seconds,
        ),
        func(
            finalize_document,
            name=FINALIZE_DOCUMENT_JOB,
            keep_result=0,
            max_tries=3,
            timeout=get_settings().chunk_job_timeout_seconds,
        ),
    ]
    cron_jobs = [
        cron(
            sweep_job, name=SWEEP_JOB, second=_sweep_seconds(), run_at_startup=True, keep_result=0, timeout=60
        ),
    ]
    on_startup = startup
    on_shutdown = shutdown
    redis_settings = _redis_settings()
    queue_name = QUEUE_NAME
    max_jobs = _max_jobs()
    job_completion_wait = get_settings().worker_grace_seconds
    health_check_interval = 10  # also how often the database is checked and engines advertised
    health_check_key = HEALTH_CHECK_KEY
    poll_delay = 0.05  # arq sleeps this long between queue polls; short chunks must not wait on it
