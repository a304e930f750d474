"""Everything a worker process (or the CLI) needs, built once from the settings."""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from concurrent.futures import Executor
from dataclasses import dataclass

from app.core.config import Settings
from app.engines.pool import make_ocr_pool, warm_up
from app.services.chunk_processor import ChunkProcessor
from app.services.finalize import Finalizer
from app.services.ocr_chunk_service import OCRChunkService, build_repository
from app.services.queue import JobQueue
from app.storage.base import BlobStore
from app.storage.factory import build_blob_store


def new_worker_id() -> str:
    """host:pid:random: unique per process start, readable in the chunk rows."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


@dataclass
class Runtime:
    settings: Settings
    service: OCRChunkService
    store: BlobStore
    executor: Executor
    processor: ChunkProcessor
    finalizer: Finalizer

    async def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        await self.store.close()
        await self.service.close()


async def build_runtime(settings: Settings, queue: JobQueue, *, worker_id: str | None = None) -> Runtime:
    service = OCRChunkService(await build_repository(settings), settings)
    store = await build_blob_store(settings)
    executor = make_ocr_pool(settings.ocr_process_count)
    # Start every OCR process now (and fail now if the engine cannot run), not on the first chunk.
    loop = asyncio.get_running_loop()
    await asyncio.gather(
        *(
            loop.run_in_executor(executor, warm_up, settings.ocr_engine)
            for _ in range(settings.ocr_process_count)
        )
    )
    processor = ChunkProcessor(
        service=service,
        store=store,
        queue=queue,
        executor=executor,
        engine=settings.ocr_engine,
        worker_id=worker_id or new_worker_id(),
    )
    finalizer = Finalizer(
        service=service,
        store=store,
        processor=processor,
        low_confidence_threshold=settings.ocr_low_confidence_threshold,
    )
    return Runtime(settings, service, store, executor, processor, finalizer)
