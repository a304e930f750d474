"""Prometheus metrics (docs/METRICS.md): what a process counts, what the queue holds, and how
they are served.

Every process keeps its own ChunkMetrics on a registry of its own (never prometheus-client's
global default), so two workers or two apps in one process, as in the tests, count apart.
"""

from app.metrics.chunks import ChunkMetrics
from app.metrics.exposition import exposition
from app.metrics.queue import QueueReading
from app.metrics.server import MetricsServer, start_metrics_server
from app.metrics.vision import VisionCounts, VisionReading

__all__ = [
    "ChunkMetrics",
    "MetricsServer",
    "QueueReading",
    "VisionCounts",
    "VisionReading",
    "exposition",
    "start_metrics_server",
]
