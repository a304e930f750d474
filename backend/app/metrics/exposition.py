"""Prometheus' text format of several collectors at once."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

__all__ = ["CONTENT_TYPE_LATEST", "exposition"]


class _Together:
    def __init__(self, collectors: tuple[Collector, ...]) -> None:
        self.collectors = collectors

    def collect(self) -> Iterator[Metric]:
        for collector in self.collectors:
            yield from collector.collect()


def exposition(*collectors: Collector) -> bytes:
    """Every metric of the collectors (registries or single collectors), in the text format
    CONTENT_TYPE_LATEST names."""
    return generate_latest(_Together(collectors))
