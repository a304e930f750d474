"""GET /metrics: the queue read from the database at each scrape, and the API process's counters,
parsed with prometheus-client's parser as Prometheus would."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from prometheus_client import CONTENT_TYPE_LATEST
from structlog.testing import capture_logs

from app.core.config import Settings
from app.engines.google_vision import GoogleVisionEngine
from app.engines.vision_quota import quota_scope
from app.main import create_app
from app.pdf.samples import make_born_digital_pdf
from app.services.ocr_chunk_service import OCRChunkService
from tests import servers
from tests.factories import checksum, make_document, make_matter, make_user, ranges
from tests.integration.api.conftest import bearer
from tests.prometheus import families, samples, value
from tests.servers import PrivatePostgres, PrivateRedis
from tests.vision_fake import serve_vision

private_postgres = servers.private_postgres
private_redis = servers.private_redis


async def scrape(client: httpx.AsyncClient) -> str:
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"] == CONTENT_TYPE_LATEST
    return response.text


def queue(text: str) -> dict[str, float | None]:
    return {
        "pending": value(text, "chunk_ocr_chunks", state="pending"),
        "processing": value(text, "chunk_ocr_chunks", state="processing"),
        "failed": value(text, "chunk_ocr_chunks", state="failed"),
        "due": value(text, "chunk_ocr_chunks_due"),
        "overdue": value(text, "chunk_ocr_chunks_overdue"),
    }


async def test_the_gauges_move_as_chunks_finish(
    client: httpx.AsyncClient, service: OCRChunkService, pool: asyncpg.Pool
) -> None:
    text = await scrape(client)
    assert queue(text) == {"pending": 0, "processing": 0, "failed": 0, "due": 0, "overdue": 0}
    assert value(text, "chunk_ocr_queue_up") == 1
    assert value(text, "chunk_ocr_oldest_due_chunk_age_seconds") == 0
    assert families(text) | {
        "chunk_ocr_chunks": "gauge",
        "chunk_ocr_chunks_due": "gauge",
        "chunk_ocr_chunks_overdue": "gauge",
        "chunk_ocr_oldest_due_chunk_age_seconds": "gauge",
        "chunk_ocr_chunk_duration_seconds": "histogram",
        "chunk_ocr_page_duration_seconds": "histogram",
        "chunk_ocr_chunk_retries": "counter",
        "chunk_ocr_lease_losses": "counter",
        "chunk_ocr_sweep_stale_chunks": "counter",
        "chunk_ocr_vision_quota_up": "gauge",
        "chunk_ocr_vision_requests": "counter",
        "chunk_ocr_vision_pages": "counter",
        "chunk_ocr_vision_throttled": "counter",
        "chunk_ocr_vision_quota_wait_seconds": "counter",
        "chunk_ocr_vision_resource_exhausted": "counter",
        "chunk_ocr_vision_backoffs": "counter",
        "chunk_ocr_vision_quota_wait_timeouts": "counter",
        "chunk_ocr_vision_pages_in_flight": "gauge",
        "chunk_ocr_vision_backoff_seconds": "gauge",
    } == families(text)  # every one of them is exported, with its type

    matter_id = await make_matter(pool)
    document_id = await make_document(pool, matter_id, page_count=4)
    chunks = await service.create_chunks_for_document(document_id, ranges(4, 1))
    text = await scrape(client)
    assert queue(text) == {"pending": 4, "processing": 0, "failed": 0, "due": 4, "overdue": 0}
    assert (value(text, "chunk_ocr_oldest_due_chunk_age_seconds") or 0) >= 0

    leases = []
    for chunk in chunks[:3]:
        claimed = await service.claim_chunk(chunk.id, "worker-1")
        assert claimed is not None
        leases.append(claimed.lease)
    await service.complete_chunk(leases[0], "results/0.json", checksum(b"0"))
    await service.fail_chunk(leases[1], error_code="engine_error", error_message="503", retryable=False)
    text = await scrape(client)
    # one completed (counted nowhere), one failed, one still processing, one waiting
    assert queue(text) == {"pending": 1, "processing": 1, "failed": 1, "due": 1, "overdue": 0}

    # waiting longer than the stale threshold (2 s here) makes the waiting chunk overdue
    await pool.execute(
        "update document_ocr_chunks set next_attempt_at = now() - interval '30 seconds' where id = $1",
        chunks[3].id,
    )
    text = await scrape(client)
    assert queue(text)["overdue"] == 1
    assert 30 <= (value(text, "chunk_ocr_oldest_due_chunk_age_seconds") or 0) < 90

    # a member's retry through the API goes through this process: its counter moves
    user = await make_user(pool, matter_id)
    response = await client.post(f"/documents/{document_id}/ocr/retry", headers=bearer(user))
    assert response.status_code == 200, response.text
    text = await scrape(client)
    assert value(text, "chunk_ocr_chunk_retries_total", code="engine_error") == 1
    assert queue(text) == {"pending": 2, "processing": 1, "failed": 0, "due": 2, "overdue": 1}


@pytest.mark.timeout(120)
async def test_a_database_that_does_not_answer_costs_the_queue_gauges_not_the_scrape(
    api_settings: Settings, private_postgres: PrivatePostgres, tmp_path: Path
) -> None:
    settings = api_settings.model_copy(
        update={"database_url": private_postgres.dsn, "local_storage_dir": tmp_path / "storage"}
    )
    app: FastAPI = create_app(settings)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api.test") as client,
    ):
        assert value(await scrape(client), "chunk_ocr_queue_up") == 1
        private_postgres.stop()
        with capture_logs() as logs:
            text = await scrape(client)
        assert value(text, "chunk_ocr_queue_up") == 0
        assert not any(name[0].startswith("chunk_ocr_chunks") for name in samples(text))  # no stale numbers
        assert "chunk_ocr_chunk_duration_seconds" in families(text)  # the process's own metrics stay
        assert [e["error_code"] for e in logs if e["event"] == "metrics_queue_unread"] == [
            "database_unavailable"
        ]
        private_postgres.start()
        assert value(await scrape(client), "chunk_ocr_queue_up") == 1


@pytest.mark.timeout(120)
async def test_the_fleet_s_vision_usage_is_read_from_the_quota_in_redis(
    api_settings: Settings, pool: asyncpg.Pool, tmp_path: Path
) -> None:
    """Requests a worker's engine sent (here, in this process) are counted by the fleet's quota in
    Redis; the API serves those counts, under the quota's name, whoever sent them."""
    pdf = tmp_path / "twelve.pdf"
    make_born_digital_pdf(pdf, pages=12)
    with serve_vision() as vision:
        settings = api_settings.model_copy(
            update={"google_vision_endpoint": f"127.0.0.1:{vision.port}", "google_vision_insecure": True}
        )
        scope = quota_scope(settings)
        app: FastAPI = create_app(settings)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api.test") as client,
        ):
            before = await scrape(client)
            assert value(before, "chunk_ocr_vision_quota_up", quota=scope) == 1
            sent = value(before, "chunk_ocr_vision_requests_total", quota=scope) or 0
            pages = value(before, "chunk_ocr_vision_pages_total", quota=scope) or 0
            read = await GoogleVisionEngine.from_settings(settings).recognize_async(pdf.read_bytes(), 1)
            assert len(read) == 12
            after = await scrape(client)
    assert value(after, "chunk_ocr_vision_requests_total", quota=scope) == sent + 3  # 5 + 5 + 2 pages
    assert value(after, "chunk_ocr_vision_pages_total", quota=scope) == pages + 12
    assert value(after, "chunk_ocr_vision_pages_in_flight", quota=scope) == 0
    assert len(vision.requests) == 3


@pytest.mark.timeout(120)
async def test_a_redis_that_does_not_answer_costs_the_vision_counters_not_the_scrape(
    api_settings: Settings, pool: asyncpg.Pool, private_redis: PrivateRedis
) -> None:
    settings = api_settings.model_copy(update={"redis_url": private_redis.url})
    scope = quota_scope(settings)
    app: FastAPI = create_app(settings)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api.test") as client,
    ):
        assert value(await scrape(client), "chunk_ocr_vision_quota_up", quota=scope) == 1
        private_redis.stop()
        with capture_logs() as logs:
            text = await scrape(client)
        assert value(text, "chunk_ocr_vision_quota_up", quota=scope) == 0
        assert value(text, "chunk_ocr_vision_requests_total", quota=scope) is None  # no stale numbers
        assert value(text, "chunk_ocr_queue_up") == 1  # the database's part of the scrape stands
        assert [e["event"] for e in logs if e["event"] == "metrics_vision_unread"] == [
            "metrics_vision_unread"
        ]
        private_redis.start()
        assert value(await scrape(client), "chunk_ocr_vision_quota_up", quota=scope) == 1
