"""`chunk-ocr serve` (and `make serve`): the HTTP API under uvicorn, on the services every
other command uses (the embedded servers when nothing is configured)."""

from __future__ import annotations

import signal
import sys

import uvicorn

from app.core.config import Settings
from app.local.dev import with_dev_secret
from app.local.stack import Services, embedded_notice


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
    config = uvicorn.Config(create_app(settings), host=host, port=port, log_config=None, lifespan="on")
    server = uvicorn.Server(config)
    # uvicorn stops gracefully on SIGINT and SIGTERM, then raises the signal again against the
    # handler in place before it started. Being asked to stop is not a failure: with these
    # handlers the process exits 0 (and `make serve` does not report "Error 143").
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, lambda *_: None)
    server.run()
    if not server.started:
        raise SystemExit(1)  # uvicorn logged why (a port in use, the start-up failing)
