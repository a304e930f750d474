"""The queue's gauges, from one reading of the database taken at scrape time."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.metrics_core import GaugeMetricFamily, Metric

from app.models.queue import QueueSnapshot


class QueueReading:
    """A collector of one QueueSnapshot; None when the database could not be read (then only
    chunk_ocr_queue_up, at 0, is exported: a stale number would look like a live one)."""

    def __init__(self, snapshot: QueueSnapshot | None) -> None:
        self.snapshot = snapshot

    def collect(self) -> Iterator[Metric]:
        snapshot = self.snapshot
        yield GaugeMetricFamily(
            "chunk_ocr_queue_up",
            "1 when this scrape read the queue from the database, 0 when it could not.",
            value=0 if snapshot is None else 1,
        )
        if snapshot is None:
            return
        by_state = GaugeMetricFamily(
            "chunk_ocr_chunks",
            "Chunks of the live queue by state: pending, processing, failed (completed are not counted).",
            labels=["state"],
        )
        for state, count in (
            ("pending", snapshot.pending),
            ("processing", snapshot.processing),
            ("failed", snapshot.failed),
        ):
            by_state.add_metric([state], count)
        yield by_state
        yield GaugeMetricFamily(
            "chunk_ocr_chunks_due",
            "Pending chunks claimable now (their next attempt is due).",
            value=snapshot.due,
        )
        yield GaugeMetricFamily(
            "chunk_ocr_chunks_overdue",
            "Chunks due for longer than STALE_CHUNK_THRESHOLD_SECONDS, and retryable failures "
            "waiting that long to be sent back to pending.",
            value=snapshot.overdue,
        )
        yield GaugeMetricFamily(
            "chunk_ocr_oldest_due_chunk_age_seconds",
            "Seconds the longest-waiting due chunk has been due; 0 when none is due.",
            value=snapshot.oldest_due_seconds,
        )
