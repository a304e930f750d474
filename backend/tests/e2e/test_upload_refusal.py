"""Uploads are refused early, over a real socket to uvicorn: the answer comes while the client is
still sending, long before the body it announced has arrived."""

from __future__ import annotations

import asyncio
import select
import socket
from urllib.parse import urlsplit
from uuid import UUID

import asyncpg
import pytest

from tests.integration.api.conftest import token

MIB = 1024 * 1024
BOUNDARY = "chunk-ocr-test-boundary"


async def _member(database_url: str, role: str = "member") -> tuple[UUID, UUID]:
    conn = await asyncpg.connect(database_url)
    try:
        matter: UUID = await conn.fetchval("insert into matters (name) values ('uploads') returning id")
        user: UUID = await conn.fetchval(
            "insert into auth.users (email) values (gen_random_uuid()::text) returning id"
        )
        await conn.execute(
            "insert into matter_members (matter_id, user_id, role) values ($1, $2, $3)", matter, user, role
        )
        return matter, user
    finally:
        await conn.close()


def _send_until_answered(
    server: str, head: str, body_start: bytes, *, block: bytes, chunked: bool, budget: int
) -> tuple[int, int]:
    """Send the request head, then body blocks until the server answers (or `budget` bytes went
    out); the status code, and the body bytes sent before the answer came. The client waits a
    moment for an answer before each block, as a streaming client reading its socket would, so
    what it counts as sent is what the server had the chance to read (not what sits in kernel
    buffers)."""
    parts = urlsplit(server)
    sent = 0
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as conn:
        conn.sendall(head.encode())
        pending = [body_start] if body_start else []
        while sent < budget:
            readable, _, _ = select.select([conn], [], [], 0.2)
            if readable:
                break
            data = pending.pop() if pending else block
            framed = f"{len(data):x}\r\n".encode() + data + b"\r\n" if chunked else data
            try:
                conn.sendall(framed)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(data)
        answer = conn.recv(4096)
        return int(answer.split(b" ", 2)[1]), sent


def _head(path: str, *, length: int | None, authorization: str | None) -> str:
    lines = [
        f"POST {path} HTTP/1.1",
        "Host: 127.0.0.1",
        f"Content-Type: multipart/form-data; boundary={BOUNDARY}",
    ]
    lines.append(f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked")
    if authorization:
        lines.append(f"Authorization: Bearer {authorization}")
    return "\r\n".join(lines) + "\r\n\r\n"


def _file_part_start() -> bytes:
    return (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n%PDF-1.7\n"
    ).encode()


@pytest.mark.timeout(120)
def test_a_gigabyte_without_a_token_is_refused_before_64_mib(server: str, database_url: str) -> None:
    matter, _ = asyncio.run(_member(database_url))
    status, sent = _send_until_answered(
        server,
        _head(f"/matters/{matter}/documents", length=1024 * MIB, authorization=None),
        _file_part_start(),
        block=b"\0" * MIB,
        chunked=False,
        budget=64 * MIB,
    )
    assert status == 401
    assert sent < 64 * MIB


@pytest.mark.timeout(120)
def test_over_the_limit_is_413_before_the_limit_plus_a_block(server: str, database_url: str) -> None:
    """No Content-Length (chunked): the limit (2 MiB in these settings) is enforced as bytes arrive."""
    matter, user = asyncio.run(_member(database_url))
    status, sent = _send_until_answered(
        server,
        _head(f"/matters/{matter}/documents", length=None, authorization=token(user)),
        _file_part_start(),
        block=b"\0" * (256 * 1024),
        chunked=True,
        budget=64 * MIB,
    )
    assert status == 413
    assert sent < 2 * MIB + MIB


@pytest.mark.timeout(120)
def test_a_declared_length_over_the_limit_is_413_before_the_body(server: str, database_url: str) -> None:
    matter, user = asyncio.run(_member(database_url))
    status, sent = _send_until_answered(
        server,
        _head(f"/matters/{matter}/documents", length=512 * MIB, authorization=token(user)),
        b"",
        block=b"\0" * MIB,
        chunked=False,
        budget=64 * MIB,
    )
    assert status == 413
    assert sent <= MIB


@pytest.mark.parametrize(("role", "expected"), [("viewer", 403), (None, 404)])
@pytest.mark.timeout(120)
def test_a_viewer_or_stranger_is_refused_before_the_body(
    server: str, database_url: str, role: str | None, expected: int
) -> None:
    matter, user = asyncio.run(_member(database_url, role or "member"))
    if role is None:
        _, user = asyncio.run(_member(database_url))  # a member of another matter
    status, sent = _send_until_answered(
        server,
        _head(f"/matters/{matter}/documents", length=1024 * MIB, authorization=token(user)),
        _file_part_start(),
        block=b"\0" * MIB,
        chunked=False,
        budget=64 * MIB,
    )
    assert status == expected
    assert sent < 64 * MIB


@pytest.mark.timeout(120)
def test_the_older_route_checks_a_leading_matter_id_before_the_file(server: str, database_url: str) -> None:
    matter, _ = asyncio.run(_member(database_url))
    _, stranger = asyncio.run(_member(database_url))
    matter_part = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="matterId"\r\n\r\n{matter}\r\n'.encode()
    )
    status, sent = _send_until_answered(
        server,
        _head("/documents", length=None, authorization=token(stranger)),
        matter_part + _file_part_start(),
        block=b"\0" * (256 * 1024),
        chunked=True,
        budget=64 * MIB,
    )
    assert status == 404
    assert sent < 2 * MIB  # well before the 2 MiB limit would have stopped it
