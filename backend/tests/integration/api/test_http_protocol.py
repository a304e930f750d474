"""What uvicorn refuses before the app sees it: a request it cannot parse. It answered 400 in
text/plain, the one refusal without the API's error shape; `chunk-ocr serve` runs it with
JsonRefusalsH11Protocol (app.local.serve.server_config)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
import uvicorn

from app.core.config import Settings
from app.local.serve import server_config
from app.main import create_app
from tests.servers import free_port


@pytest.fixture
async def served(pipeline_settings: Settings) -> AsyncIterator[int]:
    """The API under uvicorn as `chunk-ocr serve` runs it, on a free port."""
    port = free_port()
    server = uvicorn.Server(server_config(create_app(pipeline_settings), "127.0.0.1", port))
    running = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not running.done(), running.exception() if running.done() else None
            await asyncio.sleep(0.05)
        yield port
    finally:
        server.should_exit = True
        await running


async def exchange(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes; the answer's status, headers (lower-case names) and body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 10)  # the server closes after a refusal
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"NOT HTTP AT ALL\r\n\r\n",
        # still arriving past h11's limit for a request's head (16 KiB), all of it read
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40_000,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nbad header line\r\n\r\n",
    ],
    ids=["request-line", "header-too-large", "header-without-colon"],
)
async def test_a_request_uvicorn_cannot_parse_is_refused_in_the_api_error_shape(
    served: int, request_bytes: bytes
) -> None:
    status, headers, body = await exchange(served, request_bytes)
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert headers["x-content-type-options"] == "nosniff"
    error = json.loads(body)["error"]
    assert error["code"] == "malformed_request"
    assert error["message"]


async def test_a_request_it_can_parse_is_the_apps(served: int) -> None:
    status, headers, body = await exchange(
        served, b"GET /no/such/route HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    assert status == 404
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["error"]["code"] == "not_found"
