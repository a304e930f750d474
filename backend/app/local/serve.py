"""`chunk-ocr serve` (and `make serve`): the HTTP API under uvicorn, on the services every
other command uses (the embedded servers when nothing is configured).

On embedded servers, a thread starts a server that went away (killed, or stopped by a process
that did not count this one) again every REVIVE_SECONDS, as a worker does in an outage: with no
worker running, the API answered 503 until it was restarted."""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping

import uvicorn
from starlette.types import ASGIApp

from app.core.config import Settings
from app.core.logging import get_logger
from app.local.dev import with_dev_secret
from app.local.stack import Services, embedded_notice

log = get_logger(__name__)

REVIVE_SECONDS = 5.0


def serve(services: Services, host: str, port: int) -> None:
    settings: Settings = with_dev_secret(services.settings)
    from app.main import create_app

    notice = embedded_notice(services)
    minted = settings.supabase_jwt_secret is not None and services.settings.supabase_jwt_secret is None
    print(
        f"chunk-ocr serve: http://{host}:{port}"
        + (f"; {notice}" if notice else "")
        + ("; tokens from `chunk-ocr dev-user`" if minted else ""),
        file=sys.stderr,
    )
    keep_reviving(services.revivers())
    server = uvicorn.Server(server_config(create_app(settings), host, port))
    # uvicorn stops gracefully on SIGINT and SIGTERM, then raises the signal again against the
    # handler in place before it started. Being asked to stop is not a failure: with these
    # handlers the process exits 0 (and `make serve` does not report "Error 143").
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, lambda *_: None)
    server.run()
    if not server.started:
        raise SystemExit(1)  # uvicorn logged why (a port in use, the start-up failing)


def server_config(app: ASGIApp, host: str, port: int) -> uvicorn.Config:
    """uvicorn's configuration for the API: our logging, and a request it cannot parse refused
    in the API's error shape (JsonRefusalsH11Protocol)."""
    from app.api.http_protocol import JsonRefusalsH11Protocol

    return uvicorn.Config(
        app, host=host, port=port, log_config=None, lifespan="on", http=JsonRefusalsH11Protocol
    )


def keep_reviving(revivers: Mapping[str, Callable[[], None]], every: float = REVIVE_SECONDS) -> None:
    """Run each embedded server's reviver every `every` seconds in a daemon thread (each returns
    at once while its server answers). A failure is logged when it first happens, not each time."""
    if not revivers:
        return

    def keep() -> None:
        failing: dict[str, str] = {}
        while True:
            time.sleep(every)
            for dependency, revive in revivers.items():
                try:
                    revive()
                except Exception as exc:  # logged, and tried again; the API says 503 meanwhile
                    if failing.get(dependency) != str(exc):
                        log.warning(
                            "dependency_revive_failed",
                            dependency=dependency,
                            error_type=type(exc).__name__,
                            error=str(exc)[:300],
                        )
                    failing[dependency] = str(exc)
                else:
                    failing.pop(dependency, None)

    threading.Thread(target=keep, name="embedded-reviver", daemon=True).start()
