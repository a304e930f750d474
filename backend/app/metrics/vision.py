"""The fleet's Google Vision usage: the quota's own counters, read from Redis at scrape time.

The google-vision engine runs in the workers' OCR processes and takes a permit of the fleet's
quota (app.engines.vision_quota, docs/VISION_QUOTA.md) for every request; the quota counts them
in Redis, for the whole fleet, which is what a project's quota is about. The API reads those
counters at each scrape (the route passes them in) and serves them here. Workers do not: each
would report the same fleet-wide totals.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric


class VisionCounts(Protocol):
    """What the quota counts (app.engines.vision_quota.read_counters answers one)."""

    @property
    def requests(self) -> int: ...
    @property
    def pages(self) -> int: ...
    @property
    def throttled(self) -> int: ...
    @property
    def waited_ms(self) -> int: ...
    @property
    def exhausted(self) -> int: ...
    @property
    def backoffs(self) -> int: ...
    @property
    def wait_timeouts(self) -> int: ...
    @property
    def pages_in_flight(self) -> int: ...
    @property
    def backoff_ms(self) -> int: ...


# name (without _total), help, attribute, scale
_COUNTERS = (
    (
        "chunk_ocr_vision_requests",
        "Google Vision requests the fleet sent (up to 5 pages each).",
        "requests",
        1,
    ),
    ("chunk_ocr_vision_pages", "Pages the fleet sent to Google Vision.", "pages", 1),
    (
        "chunk_ocr_vision_throttled",
        "Vision requests the fleet's quota made wait (its rates, pages in flight, or a back-off).",
        "throttled",
        1,
    ),
    (
        "chunk_ocr_vision_quota_wait_seconds",
        "Seconds Vision requests spent waiting for the fleet's quota.",
        "waited_ms",
        0.001,
    ),
    (
        "chunk_ocr_vision_resource_exhausted",
        "RESOURCE_EXHAUSTED (429) answers from Google Vision.",
        "exhausted",
        1,
    ),
    ("chunk_ocr_vision_backoffs", "Fleet-wide back-offs started after a RESOURCE_EXHAUSTED.", "backoffs", 1),
    (
        "chunk_ocr_vision_quota_wait_timeouts",
        "Vision requests that waited for the quota past GOOGLE_VISION_QUOTA_MAX_WAIT_SECONDS "
        "(their chunks failed retryable vision_quota_wait).",
        "wait_timeouts",
        1,
    ),
)


class VisionReading:
    """A collector of one reading of the quota named `quota`; None when Redis could not be read
    (then only chunk_ocr_vision_quota_up, at 0, is exported)."""

    def __init__(self, quota: str, counts: VisionCounts | None) -> None:
        self.quota = quota
        self.counts = counts

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "chunk_ocr_vision_quota_up",
            "1 when this scrape read the fleet's Vision quota counters from Redis, 0 when it could not.",
            labels=["quota"],
        )
        up.add_metric([self.quota], 0 if self.counts is None else 1)
        yield up
        counts = self.counts
        if counts is None:
            return
        for name, documentation, attribute, scale in _COUNTERS:
            family = CounterMetricFamily(name, documentation, labels=["quota"])
            family.add_metric([self.quota], getattr(counts, attribute) * scale)
            yield family
        in_flight = GaugeMetricFamily(
            "chunk_ocr_vision_pages_in_flight",
            "Pages sent to Vision and not yet answered, fleet-wide (a dead process's until its lease ends).",
            labels=["quota"],
        )
        in_flight.add_metric([self.quota], counts.pages_in_flight)
        yield in_flight
        backoff = GaugeMetricFamily(
            "chunk_ocr_vision_backoff_seconds",
            "Seconds left of the fleet's back-off after a RESOURCE_EXHAUSTED; 0 when none.",
            labels=["quota"],
        )
        backoff.add_metric([self.quota], counts.backoff_ms / 1000)
        yield backoff
