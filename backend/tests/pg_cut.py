"""A TCP proxy in front of PostgreSQL that can lose the answer to one statement.

Armed with a piece of SQL, it lets the next statement whose text contains it
reach the server and run (and, outside a transaction block, commit), then
closes the client's connection before any of the server's answer is passed on:
what a restart, a failover or a network cut does to a caller at the worst
moment. It reads the frontend protocol's framing (startup, then typed
messages) to know when the statement was sent in full: the Sync that follows
its Bind (extended protocol, what asyncpg uses) or its simple Query.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

_UNTYPED_REQUESTS = {80877103, 80877104}  # SSLRequest, GSSENCRequest: the startup comes after


@dataclass
class PgCut:
    upstream_host: str
    upstream_port: int
    armed: bytes | None = None
    cuts: int = 0
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def arm(self, sql: str) -> None:
        """Lose the answer to the next statement whose text contains sql."""
        self.armed = sql.encode()

    def dsn(self, upstream_dsn: str) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        parts = urlsplit(upstream_dsn)
        netloc = parts.netloc.rsplit("@", 1)
        host = f"127.0.0.1:{port}"
        return urlunsplit(parts._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) == 2 else host))

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _accept(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            server_reader, server_writer = await asyncio.open_connection(
                self.upstream_host, self.upstream_port
            )
        except OSError:
            client_writer.close()
            return
        cut = asyncio.Event()
        upward = asyncio.create_task(self._client_to_server(client_reader, server_writer, cut))
        downward = asyncio.create_task(self._server_to_client(server_reader, client_writer, cut))
        try:
            await asyncio.wait({upward, downward}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pipe in (upward, downward):
                pipe.cancel()
            await asyncio.gather(upward, downward, return_exceptions=True)
            for writer in (client_writer, server_writer):
                writer.close()
            self._tasks.discard(task)

    async def _client_to_server(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, cut: asyncio.Event
    ) -> None:
        named: set[bytes] = set()  # prepared statements whose text holds the armed SQL
        bound = False  # a Bind of one of them was sent; its Sync ends the statement
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            async for kind, message in _frontend_messages(reader):
                writer.write(message)
                await writer.drain()
                if self.armed is None:
                    continue
                body = message[5:] if kind else b""
                if kind == b"P":
                    name, _, rest = body.partition(b"\0")
                    if self.armed in rest:
                        named.add(name)
                elif kind == b"B":
                    _portal, _, rest = body.partition(b"\0")
                    bound = bound or rest.partition(b"\0")[0] in named
                elif (kind == b"S" and bound) or (kind == b"Q" and self.armed in body):
                    self.armed = None
                    self.cuts += 1
                    cut.set()
                    await asyncio.Event().wait()  # the other direction ends the connection

    @staticmethod
    async def _server_to_client(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, cut: asyncio.Event
    ) -> None:
        while data := await reader.read(65536):
            if cut.is_set():  # the server answers a Sync once the statement ran and committed
                return  # the answer is dropped with the connection
            writer.write(data)
            await writer.drain()


async def _frontend_messages(reader: asyncio.StreamReader) -> AsyncIterator[tuple[bytes, bytes]]:
    """(type, whole message) for each frontend message; type b"" for the untyped startup ones."""
    while True:
        head = await reader.readexactly(8)
        length, code = struct.unpack("!ii", head)
        message = head + await reader.readexactly(length - 8)
        yield b"", message
        if code not in _UNTYPED_REQUESTS:
            break
    while True:
        head = await reader.readexactly(5)
        (length,) = struct.unpack("!i", head[1:])
        yield head[:1], head + await reader.readexactly(length - 4)
