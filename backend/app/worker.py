"""arq worker: `arq app.worker.WorkerSettings` (or `chunk-ocr worker`; both run ChunkOcrWorker).

Job functions are thin: they decode an id and call the pipeline. They do not
raise for business failures (those are written to the chunk row and retried
from the database), so arq's own retry and in-progress lease never decide
anything.

A worker's options are data built from one Settings by worker_settings(), which
also puts that Settings in arq's ctx for the start-up hook: `chunk-ocr worker`
builds them from the settings it was given (with the embedded servers' URLs
when it started them), and `WorkerSettings`, what arq's command line reads, is
built from the environment's settings when arq asks for it. Importing this
module reads no settings.

Both entry points refuse to start, in one line, without REDIS_URL and a
database: a worker that guessed localhost would wait forever on a Redis nobody
enqueues to. (`chunk-ocr worker` with neither set uses the embedded servers
that `chunk-ocr submit` uses, and says so.)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from arq import cron, func
from arq.connections import RedisSettings

from app.core.config import Settings, get_settings
from app.core.errors import ConfigurationError, OCRError
from app.core.health import DependencyHealth
from app.core.logging import configure_logging, get_logger
from app.metrics import MetricsServer, start_metrics_server
from app.services.queue import (
    FINALIZE_DOCUMENT_JOB,
    HEALTH_CHECK_KEY,
    PROCESS_CHUNK_JOB,
    SWEEP_JOB,
    ArqJobQueue,
    bound_replies,
    queue_name,
    redis_settings,
)
from app.services.recovery import sweep
from app.services.runtime import Runtime, build_runtime
from app.worker_loop import REVIVERS, ChunkOcrWorker, adopt_running_worker

log = get_logger(__name__)

SETTINGS = "settings"  # the ctx key of the Settings the worker was built with
METRICS_SERVER = "metrics_server"  # the ctx key of the /metrics server, when WORKER_METRICS_PORT is set
# False: no engine probe at start-up (`chunk-ocr run`'s worker: nobody else reads what it advertises)
PROBE_ENGINES = "probe_engines"
RUN_ID = "run_id"  # the ctx key of the `chunk-ocr run` whose private queue the worker reads, if any


async def startup(ctx: dict[str, Any]) -> None:
    settings = ctx.get(SETTINGS)
    if not isinstance(settings, Settings):
        raise ConfigurationError(
            "the worker's ctx carries no Settings: build its options with worker_settings()"
        )
    bound_replies(ctx["redis"], settings.redis_timeout_seconds)  # a pool arq's main made, maybe again
    if "runtime" in ctx:  # ChunkOcrWorker runs arq's main again after a Redis error at start-up
        return
    configure_logging(settings.log_level, file=settings.log_file)
    adopt_running_worker()  # under `arq app.worker.WorkerSettings`, arq built its own Worker
    health = ctx.get("health") or DependencyHealth()
    queue = ArqJobQueue(ctx["redis"], run_id=ctx.get(RUN_ID))
    runtime = await build_runtime(settings, queue, health=health, probe=ctx.get(PROBE_ENGINES, True))
    ctx["runtime"] = runtime
    if settings.worker_metrics_port is not None:
        try:
            server = start_metrics_server(
                runtime.service.metrics.registry, settings.worker_metrics_host, settings.worker_metrics_port
            )
        except ConfigurationError:
            del ctx["runtime"]
            await runtime.close()
            raise
        ctx[METRICS_SERVER] = server
        log.info(
            "worker_metrics_listening",
            worker_id=runtime.processor.worker_id,
            host=settings.worker_metrics_host,
            port=server.port,
        )
    log.info(
        "worker_started",
        worker_id=runtime.processor.worker_id,
        default_engine=settings.ocr_engine,
        ocr_processes=settings.ocr_process_count,
    )


async def shutdown(ctx: dict[str, Any]) -> None:
    runtime: Runtime | None = ctx.get("runtime")
    server: MetricsServer | None = ctx.pop(METRICS_SERVER, None)
    try:
        if runtime is not None:
            await runtime.close()
            log.info("worker_stopped", worker_id=runtime.processor.worker_id)
    finally:
        if server is not None:
            await server.close()


async def process_chunk(ctx: dict[str, Any], chunk_id: str) -> str:
    runtime: Runtime = ctx["runtime"]
    outcome = await runtime.processor.process(chunk_id)
    return outcome.value


async def finalize_document(ctx: dict[str, Any], document_id: str) -> str:
    runtime: Runtime = ctx["runtime"]
    outcome = await runtime.finalizer.finalize(document_id)
    return outcome.value


async def sweep_job(ctx: dict[str, Any]) -> None:
    """The periodic sweep, unless a later one is already due.

    Sweeps are cron jobs, one per tick for the fleet. While the database does not answer, the
    ticks' jobs queue up behind the worker's job slots, which wait on it too: once it answers,
    a sweep that is late by more than a tick is skipped (the newest does the work; they are all
    the same query), not run one after another. A sweep during the outage fails after
    DATABASE_TIMEOUT_SECONDS, and the next tick tries again.
    """
    runtime: Runtime = ctx["runtime"]
    settings: Settings = runtime.settings
    late = time.time() - ctx["score"] / 1000
    if late > settings.sweep_interval_seconds:
        log.info("sweep_skipped", reason="late", late_seconds=round(late, 1))
        return
    try:
        await sweep(runtime.service, runtime.processor.queue)
    except OCRError as exc:  # the next tick tries again
        log.warning("sweep_failed", error_code=exc.code, error=str(exc))


def _redis_settings(url: str | None) -> RedisSettings:
    # Without REDIS_URL a worker refuses to start (require_services); arq's default stands in so
    # that options can be built without one (tests build workers with their own Redis).
    settings = redis_settings(url) if url else RedisSettings()
    # A worker started while Redis is down waits for it (arq logs each try), under arq's CLI too,
    # where arq connects before our start-up hook runs: a week of tries, 2 s apart.
    settings.conn_retries = 7 * 24 * 3600 // 2
    settings.conn_retry_delay = 2
    return settings


def worker_settings(settings: Settings, *, run_id: str | None = None) -> dict[str, Any]:
    """arq's Worker options for a worker run with `settings` (arq takes them as a dict, see
    arq.worker.create_worker); the start-up hook finds `settings` in ctx.

    run_id: the worker of that `chunk-ocr run`, which reads the run's private queue and claims
    and sweeps only the run's documents. Its sweep's cron job has a name of its own too: arq
    gives a tick's cron job one id on a Redis, and the fleet's would take the run's tick."""
    timeout = settings.chunk_job_timeout_seconds
    private = "" if run_id is None else f":{run_id}"
    return {
        "functions": [
            func(process_chunk, name=PROCESS_CHUNK_JOB, keep_result=0, max_tries=3, timeout=timeout),
            func(finalize_document, name=FINALIZE_DOCUMENT_JOB, keep_result=0, max_tries=3, timeout=timeout),
        ],
        "cron_jobs": [
            cron(
                sweep_job,
                name=SWEEP_JOB + private,
                second=set(range(0, 60, settings.sweep_interval_seconds)),
                run_at_startup=True,
                keep_result=0,
                timeout=60,
            ),
        ],
        "on_startup": startup,
        "on_shutdown": shutdown,
        "redis_settings": _redis_settings(settings.redis_url),
        "queue_name": queue_name(run_id),
        # one job per OCR process, plus one so a finalize or a quick no-op never waits behind OCR
        "max_jobs": settings.worker_max_jobs or settings.ocr_process_count + 1,
        "job_completion_wait": settings.worker_grace_seconds,
        "health_check_interval": 10,  # also how often the database is checked and engines advertised
        "health_check_key": HEALTH_CHECK_KEY + private,
        "poll_delay": 0.05,  # arq sleeps this long between queue polls; short chunks must not wait on it
        "ctx": {SETTINGS: settings} | ({RUN_ID: run_id} if run_id is not None else {}),
    }


def require_services(settings: Settings) -> None:
    """What a worker cannot start without, as one-line configuration errors."""
    if settings.redis_url is None:
        raise ConfigurationError(
            "REDIS_URL is not set: a worker must use the Redis the API and `chunk-ocr submit` enqueue to "
            "(`chunk-ocr worker` with neither REDIS_URL nor DATABASE_URL set uses the embedded servers)"
        )
    if settings.database_url is None and not settings.supabase_configured:
        raise ConfigurationError("DATABASE_URL is not set (nor SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY)")


def run(settings: Settings, *, revivers: Mapping[str, Callable[[], None]] | None = None) -> None:
    """`chunk-ocr worker`: a ChunkOcrWorker run with `settings`, with the options
    `arq app.worker.WorkerSettings` has; revivers: what starts its Redis or database again, by
    dependency, when it is an embedded server that went away (run in an outage)."""
    require_services(settings)
    options = worker_settings(settings)
    options["ctx"][REVIVERS] = dict(revivers or {})
    ChunkOcrWorker(**options).run()


def _environment_settings() -> Settings:
    """The environment's settings. Under `arq app.worker.WorkerSettings`, a configuration error is
    one line and exit code 2, as with `chunk-ocr worker`, rather than a traceback from inside arq
    (or a wait on a guessed Redis)."""
    if "arq.cli" not in sys.modules:  # a test, or a program building its own worker
        return get_settings()
    try:
        settings = get_settings()
        require_services(settings)
    except ConfigurationError as exc:
        print(f"arq app.worker.WorkerSettings: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    return settings


def __getattr__(name: str) -> Any:
    """`WorkerSettings`: worker_settings() of the environment's settings, built when it is asked for
    (arq's command line imports this module, then reads the attribute). A class, whose options
    read as attributes; arq takes its __dict__ as it would a dict."""
    if name == "WorkerSettings":
        return type(
            "WorkerSettings", (), {"__module__": __name__, **worker_settings(_environment_settings())}
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
