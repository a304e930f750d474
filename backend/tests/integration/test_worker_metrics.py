"""A worker's own /metrics (WORKER_METRICS_PORT): a real worker built by worker_settings(), its
start-up hook and its sweep, scraped over HTTP while it runs, closed with it."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from uuid import UUID

import asyncpg
import httpx
import pytest
from arq.connections import ArqRedis

from app.core.config import Settings, load_settings
from app.core.errors import ConfigurationError
from app.metrics import ChunkMetrics, start_metrics_server
from app.metrics.server import MetricsServer
from app.pdf.samples import make_born_digital_pdf
from app.services.composition import open_queued_core
from app.services.planner import start_document
from app.worker import METRICS_SERVER, worker_settings
from app.worker_loop import ChunkOcrWorker
from tests.e2e.conftest import wait_for
from tests.factories import make_matter
from tests.prometheus import families, value


@pytest.fixture
def worker_own(settings: Settings, tmp_path: Path) -> Settings:
    return settings.model_copy(
        update={
            "local_storage_dir": tmp_path / "storage",
            "ocr_engine": "null",
            "ocr_processes": 1,
            "read_text_at_planning": False,
            "heartbeat_interval_seconds": 0.2,
            "stale_chunk_threshold_seconds": 2.0,
            "worker_metrics_port": 0,  # a free port, read back from the server
            "worker_metrics_host": "127.0.0.1",
        }
    )


async def a_chunk_left_by_a_dead_worker(settings: Settings, pool: asyncpg.Pool, pdf: Path) -> UUID:
    """A planned two-page null-engine chunk, claimed by a worker that then died (no heartbeat for
    a minute)."""
    core = await open_queued_core(settings)
    try:
        started = await start_document(
            core.service,
            core.store,
            core.queue,
            pdf,
            matter_id=await make_matter(pool),
            engine="null",
            chunk_pages=2,
        )
        (chunk,) = started.chunks
        assert await core.service.claim_next_chunk("dead-worker") is not None
    finally:
        await core.close()
    await pool.execute(
        "update document_ocr_chunks set heartbeat_at = now() - interval '60 seconds' where id = $1", chunk.id
    )
    return chunk.id


@pytest.mark.timeout(120)
async def test_a_worker_serves_its_metrics_while_it_runs(
    worker_own: Settings, arq_redis: ArqRedis, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    make_born_digital_pdf(tmp_path / "two.pdf", pages=2, seed=6)
    await a_chunk_left_by_a_dead_worker(worker_own, pool, tmp_path / "two.pdf")
    worker = ChunkOcrWorker(**worker_settings(worker_own), handle_signals=False)
    main = asyncio.create_task(worker.main())
    try:

        async def serving() -> MetricsServer | None:
            assert not main.done(), main.exception() if main.done() else None
            return worker.ctx.get(METRICS_SERVER)

        server = await wait_for(serving, 60, "the worker's metrics server")
        url = f"http://127.0.0.1:{server.port}/metrics"

        async def chunk_completed() -> str | None:
            async with httpx.AsyncClient() as client:
                response = await client.get(url)
            assert response.status_code == 200
            text = response.text
            return text if value(text, "chunk_ocr_chunk_jobs_total", outcome="completed") == 1 else None

        # the sweep at start-up fails the dead worker's chunk and retries it; this worker reads it
        text = await wait_for(chunk_completed, 60, "the swept chunk to be read again")
    finally:
        main.cancel()
        await worker.close()

    assert value(text, "chunk_ocr_sweep_stale_chunks_total") == 1
    assert value(text, "chunk_ocr_chunk_retries_total", code="worker_timeout") == 1
    assert (value(text, "chunk_ocr_sweep_enqueued_jobs_total", job="process_chunk") or 0) >= 1
    assert value(text, "chunk_ocr_chunk_duration_seconds_count", engine="null") == 1
    assert value(text, "chunk_ocr_page_duration_seconds_count", engine="null") == 2
    # the queue's gauges and the fleet's Vision counters are the API's: a worker reads neither
    # the database nor the quota for a scrape (every worker would report the same fleet totals)
    assert value(text, "chunk_ocr_chunks_due") is None
    assert not any(name.startswith("chunk_ocr_vision") for name in families(text))
    # closed with the worker: nothing listens on its port any more
    assert METRICS_SERVER not in worker.ctx
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection(("127.0.0.1", server.port), timeout=2),
    ):
        pass


async def test_a_worker_without_a_metrics_port_serves_nothing(settings: Settings) -> None:
    assert settings.worker_metrics_port is None  # the default: off
    assert worker_settings(settings)["ctx"].keys() == {"settings"}


def test_the_metrics_port_is_validated() -> None:
    with pytest.raises(ConfigurationError, match="WORKER_METRICS_PORT"):
        load_settings(worker_metrics_port=70000)


async def test_a_port_in_use_is_a_configuration_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigurationError, match=f"127.0.0.1:{port}"):
            start_metrics_server(ChunkMetrics().registry, "127.0.0.1", port)
