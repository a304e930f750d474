"""ChunkMetrics and the Vision counters, read back in Prometheus' text format."""

from __future__ import annotations

import re
from pathlib import Path

from app.engines.vision_quota import VisionQuotaCounters
from app.metrics import ChunkMetrics, QueueReading, VisionReading, exposition
from app.models.queue import QueueSnapshot
from tests.prometheus import families, value


def text(metrics: ChunkMetrics) -> str:
    return exposition(metrics.registry).decode()


def test_two_processes_worth_of_metrics_count_apart() -> None:
    first, second = ChunkMetrics(), ChunkMetrics()
    first.chunk_read("tesseract", 12.0)
    first.lease_lost("lease_lost")
    assert value(text(first), "chunk_ocr_chunk_duration_seconds_count", engine="tesseract") == 1
    assert value(text(second), "chunk_ocr_chunk_duration_seconds_count", engine="tesseract") is None
    assert value(text(first), "chunk_ocr_lease_losses_total", code="lease_lost") == 1
    assert value(text(second), "chunk_ocr_lease_losses_total", code="lease_lost") is None


def test_a_run_of_pages_observes_each_page_at_the_mean() -> None:
    metrics = ChunkMetrics()
    metrics.pages_read("google-vision", 1.5, 3)  # 0.5 s a page
    metrics.pages_read("google-vision", 1.0, 0)  # nothing read: nothing observed
    exported = text(metrics)
    assert value(exported, "chunk_ocr_page_duration_seconds_count", engine="google-vision") == 3
    assert value(exported, "chunk_ocr_page_duration_seconds_sum", engine="google-vision") == 1.5
    assert value(exported, "chunk_ocr_page_duration_seconds_bucket", engine="google-vision", le="0.5") == 3
    assert value(exported, "chunk_ocr_page_duration_seconds_bucket", engine="google-vision", le="0.25") == 0


def test_the_vision_reading_serves_the_quota_s_counts_under_its_name() -> None:
    counts = VisionQuotaCounters(
        requests=7,
        pages=31,
        throttled=2,
        waited_ms=1500,
        exhausted=1,
        backoffs=1,
        wait_timeouts=0,
        pages_in_flight=5,
        backoff_ms=2500,
    )
    exported = exposition(VisionReading("proj@vision.googleapis.com", counts)).decode()
    quota = {"quota": "proj@vision.googleapis.com"}
    assert value(exported, "chunk_ocr_vision_quota_up", **quota) == 1
    assert value(exported, "chunk_ocr_vision_requests_total", **quota) == 7
    assert value(exported, "chunk_ocr_vision_pages_total", **quota) == 31
    assert value(exported, "chunk_ocr_vision_quota_wait_seconds_total", **quota) == 1.5
    assert value(exported, "chunk_ocr_vision_backoff_seconds", **quota) == 2.5
    assert families(exported)["chunk_ocr_vision_requests"] == "counter"
    unread = exposition(VisionReading("proj@vision.googleapis.com", None)).decode()
    assert value(unread, "chunk_ocr_vision_quota_up", **quota) == 0
    assert set(families(unread)) == {"chunk_ocr_vision_quota_up"}


def test_docs_metrics_md_names_every_metric_served() -> None:
    """The tables of docs/METRICS.md list exactly what the API and the workers export."""
    docs = Path(__file__).resolve().parents[4] / "docs" / "METRICS.md"
    documented = set(re.findall(r"^\| `(chunk_ocr_\w+)`", docs.read_text(encoding="utf-8"), re.M))
    snapshot = QueueSnapshot(pending=1, processing=1, failed=1, due=1, overdue=1, oldest_due_seconds=1)
    vision = VisionQuotaCounters(0, 0, 0, 0, 0, 0, 0, 0, 0)
    exported = exposition(
        ChunkMetrics().registry, QueueReading(snapshot), VisionReading("q", vision)
    ).decode()
    served = {
        f"{name}_total" if kind == "counter" else name
        for name, kind in families(exported).items()
        if not name.endswith("_created")  # prometheus-client's creation times of unlabelled counters
    }
    assert documented == served
