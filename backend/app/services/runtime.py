"""Everything a worker process (or the CLI) needs, built once from the settings."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pickle
import socket
import sys
import time
import uuid
from concurrent.futures import Executor
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

from app.core.backoff import Backoff, retry_transient
from app.core.config import Settings
from app.core.errors import RepositoryUnavailableError
from app.core.health import DATABASE, DependencyHealth
from app.core.logging import get_logger
from app.db.repository import ChunkRepository
from app.engines.errors import EngineError
from app.engines.pool import make_ocr_pool, stop_ocr_pool, warm_up
from app.engines.probe import SETTINGS_ON_STDIN
from app.services.chunk_processor import ChunkProcessor
from app.services.composition import open_core
from app.services.finalize import Finalizer
from app.services.ocr_chunk_service import OCRChunkService, build_repository
from app.services.queue import JobQueue
from app.storage.base import BlobStore

log = get_logger(__name__)


def new_worker_id() -> str:
    """host:pid:random: unique per process start, readable in the chunk rows."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


@dataclass
class EngineCatalog:
    """The engines this worker's OCR processes can build, known shortly after start-up."""

    versions: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)  # engine -> why it cannot run here
    languages: list[str] = field(default_factory=list)  # what tesseract reads here (not osd)
    # Every engine was asked (the probe answered). Only a complete catalog is advertised: the API
    # takes an engine no fresh advertisement names for one no worker can run.
    complete: bool = False

    @property
    def available(self) -> list[str]:
        return sorted(self.versions)


@dataclass
class Runtime:
    settings: Settings
    service: OCRChunkService
    store: BlobStore
    executor: Executor
    processor: ChunkProcessor
    finalizer: Finalizer
    health: DependencyHealth
    engines: EngineCatalog
    exit: AsyncExitStack  # the composition root's: closes the probe, the OCR processes, storage, database
    probe: asyncio.Task[None]  # fills `engines` shortly after start-up

    async def close(self) -> None:
        await self.exit.aclose()


async def build_runtime(
    settings: Settings,
    queue: JobQueue,
    *,
    worker_id: str | None = None,
    health: DependencyHealth | None = None,
    probe: bool = True,
) -> Runtime:
    """probe: learn every engine the OCR processes can build from a probe process (what a worker
    advertises); without it, only the default engine, which the OCR processes' warm-up built."""
    worker_id = worker_id or new_worker_id()
    health = health or DependencyHealth()
    health.bind(worker_id=worker_id)
    core = await open_core(settings, repository=lambda s: _connect_repository(s, health))
    try:
        executor, default_version = await _start_ocr_pool(settings, core.exit)
        processor = ChunkProcessor(
            service=core.service,
            store=core.store,
            queue=queue,
            executor=executor,
            worker_id=worker_id,
            health=health,
        )
        # Closed first: the hand-backs of cancelled jobs are written before the OCR processes
        # and the database go.
        core.exit.push_async_callback(processor.settle)
        finalizer = Finalizer(
            service=core.service,
            store=core.store,
            processor=processor,
            low_confidence_threshold=settings.ocr_low_confidence_threshold,
        )
        engines = EngineCatalog()
        probing = asyncio.create_task(
            _probe_engines(engines, worker_id, settings)
            if probe
            else _default_engine_only(engines, settings.ocr_engine, default_version)
        )
        core.exit.push_async_callback(_cancelled, probing)
    except BaseException:
        await core.close()
        raise
    return Runtime(
        settings,
        core.service,
        core.store,
        executor,
        processor,
        finalizer,
        health,
        engines,
        core.exit,
        probing,
    )


async def _start_ocr_pool(settings: Settings, exit: AsyncExitStack) -> tuple[Executor, str | None]:
    """The OCR processes, every one started now with the default engine built in it (not on the
    first chunk), their stop registered on `exit`, and that engine's version (None: it cannot be
    built here). A worker that cannot build the default engine still runs chunks of the engines
    it can build. The processes build engines with `settings`."""
    executor = make_ocr_pool(settings.ocr_process_count, settings=settings)
    exit.push_async_callback(asyncio.to_thread, stop_ocr_pool, executor)  # up to its timeout when busy
    loop = asyncio.get_running_loop()
    warmed = await asyncio.gather(
        *(
            loop.run_in_executor(executor, warm_up, settings.ocr_engine, settings.ocr_language)
            for _ in range(settings.ocr_process_count)
        ),
        return_exceptions=True,
    )
    for outcome in warmed:
        if isinstance(outcome, EngineError):
            log.warning(
                "default_engine_unavailable",
                engine=settings.ocr_engine,
                language=settings.ocr_language,
                error=str(outcome),
            )
            break
        if isinstance(outcome, BaseException):
            raise outcome
    version = warmed[0] if warmed and isinstance(warmed[0], str) else None
    return executor, version


async def _cancelled(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _connect_repository(settings: Settings, health: DependencyHealth) -> ChunkRepository:
    """The chunk repository, waiting (with capped backoff, for as long as it takes) for a
    database that does not answer yet; a misconfiguration (bad URL, refused password) raises."""

    def waiting(error: BaseException, wait: float) -> None:
        health.failed(DATABASE, error)

    repository = await retry_transient(
        lambda: build_repository(settings),
        transient=(RepositoryUnavailableError,),
        backoff=Backoff(base=0.5, cap=10.0),
        on_failure=waiting,
    )
    health.restored(DATABASE)
    return repository


async def _default_engine_only(catalog: EngineCatalog, engine: str, version: str | None) -> None:
    """The catalog of a worker that probes nothing: the default engine, when it could be built.
    Not complete: the worker may run others, and says nothing of them (advertising this one
    alone had the API refuse every other engine for ENGINE_ADVERTISEMENT_TTL_SECONDS)."""
    if version is not None:
        catalog.versions[engine] = version


async def _probe_engines(catalog: EngineCatalog, worker_id: str, settings: Settings) -> None:
    """The engines the OCR processes can build, built with the same settings in a probe process."""
    started = time.perf_counter()
    probe = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.engines.probe",
        SETTINGS_ON_STDIN,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await probe.communicate(pickle.dumps(settings))
    except asyncio.CancelledError:  # the worker is stopping: the answer is no longer wanted
        with contextlib.suppress(ProcessLookupError):
            probe.kill()
        await probe.communicate()  # reap it and close its pipes
        raise
    if probe.returncode != 0:
        log.warning("worker_engines_unknown", worker_id=worker_id, error=err.decode()[-2000:])
        return
    found = json.loads(out)
    catalog.versions.update(found["versions"])
    catalog.reasons.update(found["reasons"])
    catalog.languages[:] = found["languages"]
    catalog.complete = True
    log.info(
        "worker_engines",
        worker_id=worker_id,
        engines=catalog.available,
        unavailable=catalog.reasons,
        languages=catalog.languages,
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )
