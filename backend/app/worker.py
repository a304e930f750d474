"""arq worker: `arq app.worker.WorkerSettings` (or `chunk-ocr worker`).

Job functions are thin: they decode an id and call the pipeline. They do not
raise for business failures (those are written to the chunk row and retried
from the database), so arq's own retry and in-progress lease never decide
anything.
"""

from __future__ import annotations

from typing import Any

from arq import cron, func
from arq.connections import RedisSettings

from app.core.config import get_settings
from app.core.errors import OCRError
from app.core.logging import configure_logging, get_logger
from app.models.document import DocumentStatus
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

log = get_logger(__name__)


async def startup(ctx: dict[str, Any]) -> None:
    settings = get_settings()
    configure_logging(settings.log_level)
    runtime = await build_runtime(settings, ArqJobQueue(ctx["redis"]))
    ctx["runtime"] = runtime
    log.info(
        "worker_started",
        worker_id=runtime.processor.worker_id,
        engine=settings.ocr_engine,
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
    try:
        document = await runtime.finalizer.finalize(document_id)
    except OCRError as exc:
        if exc.retryable:  # the sweep enqueues this document's finalize again
            log.warning("finalize_deferred", document_id=document_id, error_code=exc.code, error=str(exc))
            return "deferred"
        log.error("finalize_failed", document_id=document_id, error_code=exc.code, error=str(exc))
        await runtime.service.set_document_status(document_id, DocumentStatus.FAILED, error_message=str(exc))
        return "failed"
    return document.ocr_status.value if document else "not_ready"


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
    return redis_settings(url) if url else RedisSettings()


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
    health_check_interval = 30
    health_check_key = HEALTH_CHECK_KEY
    poll_delay = 0.05  # arq sleeps this long between queue polls; short chunks must not wait on it
