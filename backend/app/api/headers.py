"""Headers every answer of the API carries.

`X-Content-Type-Options: nosniff`: a browser takes each answer for the type it says (JSON, a
PDF to download, the progress page's HTML) and never for what its bytes look like. An upload is
a PDF by its first kilobyte only, as readers accept it, so the bytes before its `%PDF` may be
anything, HTML included, and a searchable PDF keeps them at its start.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

COMMON_HEADERS = ((b"x-content-type-options", b"nosniff"),)


class CommonHeaders:
    """ASGI middleware: COMMON_HEADERS on every HTTP answer that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in COMMON_HEADERS if name not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)
