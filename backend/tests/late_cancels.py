"""A TCP proxy in front of PostgreSQL that holds back cancel requests until told.

A client cancels a statement in flight by opening a second connection that sends a
CancelRequest (the backend's pid and secret, 16 bytes). On a busy machine that request can
reach the server after the statement has committed, and then it cancels nothing. This proxy
makes that order certain: every other connection is piped through at once, while a cancel
request waits until `release`. Clients must not ask for TLS (sslmode=disable in the URL), so the
first 8 bytes a connection sends say what it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

CANCEL_REQUEST = struct.pack("!ii", 16, 80877102)  # length, then the cancel request code


@dataclass
class LateCancels:
    host: str  # a name or address, or the directory of a Unix socket (an embedded server's)
    port: int
    url: str = ""  # the database's URL through the proxy
    held: int = 0  # cancel requests received and held back so far
    _released: asyncio.Event = field(default_factory=asyncio.Event)

    def release(self) -> None:
        """Let the held cancel requests, and any later ones, through to the server."""
        self._released.set()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readexactly(8)
            if head == CANCEL_REQUEST:
                self.held += 1
                await self._released.wait()
            if self.host.startswith("/"):
                socket = f"{self.host}/.s.PGSQL.{self.port}"
                upstream_reader, upstream_writer = await asyncio.open_unix_connection(socket)
            else:
                upstream_reader, upstream_writer = await asyncio.open_connection(self.host, self.port)
            upstream_writer.write(head)
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while block := await reader.read(65536):
            writer.write(block)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            writer.close()


@contextlib.asynccontextmanager
async def late_cancels(database_url: str) -> AsyncIterator[LateCancels]:
    """A proxy to the database at `database_url`, its own URL in `.url` (TLS off)."""
    parts = urlsplit(database_url)
    options = dict(parse_qsl(parts.query))
    host = options.pop("host", None) or parts.hostname or "127.0.0.1"
    proxy = LateCancels(host, int(options.pop("port", None) or parts.port or 5432))
    server = await asyncio.start_server(proxy._serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    credentials = parts.netloc.rpartition("@")[0]
    netloc = f"{credentials}@127.0.0.1:{port}" if credentials else f"127.0.0.1:{port}"
    query = urlencode(options | {"sslmode": "disable"})
    proxy.url = urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    try:
        yield proxy
    finally:
        proxy.release()
        server.close()
        await server.wait_closed()
