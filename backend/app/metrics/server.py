"""A worker's /metrics: prometheus-client's HTTP server on a thread of the worker's process."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

from prometheus_client import start_http_server
from prometheus_client.registry import Collector

from app.core.errors import ConfigurationError


@dataclass
class MetricsServer:
    httpd: WSGIServer
    thread: threading.Thread

    @property
    def port(self) -> int:
        """The port it listens on (the one the system chose when asked for port 0)."""
        return self.httpd.server_port

    async def close(self) -> None:
        """Stop serving, close the socket and wait for the thread (shutdown waits up to its 0.5 s poll)."""
        await asyncio.to_thread(self.httpd.shutdown)
        self.httpd.server_close()
        await asyncio.to_thread(self.thread.join)


def start_metrics_server(registry: Collector, host: str, port: int) -> MetricsServer:
    """Serve `registry` at http://host:port/metrics (any path answers) until close()."""
    try:
        httpd, thread = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        raise ConfigurationError(
            f"cannot serve metrics on {host}:{port} (WORKER_METRICS_HOST, WORKER_METRICS_PORT): "
            f"{exc.strerror or exc}"
        ) from None
    return MetricsServer(httpd, thread)
