"""A request whose body length is said two ways, over a real socket to uvicorn: refused, and the
connection closed, so what follows on it is never served (request smuggling, RFC 9112 6.1)."""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import pytest

SMUGGLED = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"


def _exchange(server: str, request: bytes) -> bytes:
    """Everything the server sends back on one connection until it closes it (or 5 s pass)."""
    url = urlsplit(server)
    received = b""
    with socket.create_connection((url.hostname, url.port), timeout=5) as conn:
        conn.sendall(request)
        try:
            while chunk := conn.recv(65536):
                received += chunk
        except TimeoutError:  # the connection stayed open
            received += b"<still open>"
    return received


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: 40\r\nTransfer-Encoding: chunked\r\n",
        b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
        b"Content-Length: 5\r\nContent-Length: 40\r\n",
    ],
    ids=["cl-then-te", "te-then-cl", "two-lengths"],
)
def test_a_length_said_two_ways_is_refused_and_the_connection_closed(server: str, framing: bytes) -> None:
    head = b"POST /healthz HTTP/1.1\r\nHost: x\r\n" + framing + b"\r\n"
    received = _exchange(server, head + b"0\r\n\r\n" + SMUGGLED)
    statuses = [line for line in received.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]
    assert b"<still open>" not in received
    assert statuses == [b"HTTP/1.1 400 Bad Request"], received  # one answer: the smuggled GET is not served
    if framing != b"Content-Length: 5\r\nContent-Length: 40\r\n":  # uvicorn refuses that one itself
        body = received.split(b"\r\n\r\n", 1)[1]
        assert json.loads(body)["error"]["code"] == "ambiguous_length"


def test_a_request_framed_one_way_is_served_on_a_kept_connection(server: str) -> None:
    received = _exchange(
        server,
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        + b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    assert received.count(b"HTTP/1.1 ") == 2
