"""What a process counts about the chunks it runs, retries and sweeps (docs/METRICS.md)."""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter, Histogram

from app.models.ocr_chunk import DocumentOCRChunk

# A chunk is a few pages to a few hundred: from a second (a text layer, Vision) to an hour (the
# job timeout) of tesseract on a long chunk.
CHUNK_SECONDS_BUCKETS = (0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600)
# A page: milliseconds from a text layer, about a second from Vision, tens of seconds from
# tesseract on a dense 300 DPI scan.
PAGE_SECONDS_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120)


class ChunkMetrics:
    """One process's chunk metrics, on a registry of its own (`registry`, served at /metrics)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        self.chunk_duration = Histogram(
            "chunk_ocr_chunk_duration_seconds",
            "Seconds from claim to completion of chunks this process read with OCR, by engine.",
            ["engine"],
            buckets=CHUNK_SECONDS_BUCKETS,
            registry=self.registry,
        )
        self.page_duration = Histogram(
            "chunk_ocr_page_duration_seconds",
            "Engine seconds per page: each OCR run's duration divided by its pages, once per page.",
            ["engine"],
            buckets=PAGE_SECONDS_BUCKETS,
            registry=self.registry,
        )
        self.chunk_jobs = Counter(
            "chunk_ocr_chunk_jobs",
            "Chunk jobs this process ran, by outcome (completed, reused, failed, lease_lost, ...).",
            ["outcome"],
            registry=self.registry,
        )
        self.retries = Counter(
            "chunk_ocr_chunk_retries",
            "Failed chunks sent back to pending (automatically or on request), by their error code.",
            ["code"],
            registry=self.registry,
        )
        self.lease_losses = Counter(
            "chunk_ocr_lease_losses",
            "Chunk attempts that found their lease taken, by the code the attempt was ending with.",
            ["code"],
            registry=self.registry,
        )
        self.sweep_stale = Counter(
            "chunk_ocr_sweep_stale_chunks",
            "Processing chunks the stale sweep failed with worker_timeout (no heartbeat in time).",
            registry=self.registry,
        )
        self.sweep_enqueued = Counter(
            "chunk_ocr_sweep_enqueued_jobs",
            "Jobs the sweep enqueued again because the queue may have lost them, by job.",
            ["job"],
            registry=self.registry,
        )

    def chunk_read(self, engine: str, seconds: float) -> None:
        """A chunk this process claimed was read with OCR and completed, `seconds` after its claim."""
        self.chunk_duration.labels(engine=engine).observe(seconds)

    def pages_read(self, engine: str, seconds: float, pages: int) -> None:
        """One OCR run of `pages` pages took `seconds`: each page is observed at the mean."""
        if pages <= 0:
            return
        histogram = self.page_duration.labels(engine=engine)
        for _ in range(pages):
            histogram.observe(seconds / pages)

    def job_done(self, outcome: str) -> None:
        self.chunk_jobs.labels(outcome=outcome).inc()

    def retried(self, chunks: Iterable[DocumentOCRChunk]) -> None:
        """Chunks sent back to pending; each counted under the code of the failure it retries."""
        for code, count in Tally(c.error_code or "unknown" for c in chunks).items():
            self.retries.labels(code=code).inc(count)

    def lease_lost(self, code: str) -> None:
        self.lease_losses.labels(code=code).inc()

    def swept(self, stale: int) -> None:
        self.sweep_stale.inc(stale)

    def enqueued_again(self, job: str, count: int) -> None:
        if count:
            self.sweep_enqueued.labels(job=job).inc(count)
