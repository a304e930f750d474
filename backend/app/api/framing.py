"""Requests whose body length is said two ways are refused, and their connection closed.

A request with both Transfer-Encoding and Content-Length (or two Content-Lengths that differ) is
read one way by this server and may be read the other way by a proxy in front of it: what one
takes for the rest of the body, the other takes for a second request, smuggled past the proxy's
rules (RFC 9112 6.1, 6.3). uvicorn went by Transfer-Encoding and kept the connection, answering
the smuggled request too. Such a request is answered 400 `ambiguous_length`, with
`Connection: close`, before anything reads its body.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.errors import error_body

_BODY = json.dumps(
    error_body(
        "ambiguous_length",
        "the request says its length two ways (Transfer-Encoding and Content-Length, or two "
        "Content-Lengths): send one",
    )
).encode()


class AmbiguousLengthRefused:
    """ASGI middleware: 400 and a closed connection for a request whose body length is ambiguous."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _ambiguous(scope["headers"]):
            await self.app(scope, receive, send)
            return
        await send(
            {
                "type": "http.response.start",
                "status": 400,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(_BODY)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": _BODY})


def _ambiguous(headers: list[tuple[bytes, bytes]]) -> bool:
    lengths = {value.strip() for name, value in headers if name.lower() == b"content-length"}
    chunked = any(name.lower() == b"transfer-encoding" for name, _ in headers)
    return len(lengths) > 1 or (chunked and bool(lengths))
