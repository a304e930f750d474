"""A Supabase Realtime stand-in at the websocket level, for the progress page's Realtime client.

supabase-js's RealtimeClient connects to `{project}/realtime/v1/websocket?apikey=...&vsn=2.0.0`
and speaks the Phoenix channel protocol, each text frame a JSON array
`[join_ref, ref, topic, event, payload]` (vsn 2.0.0 adds binary frames for broadcasts a client
sends, which the page never does). This server answers it as Realtime does: `phx_join` gets a
`phx_reply` (ok, or an error when told to refuse the channel), `heartbeat` on topic `phoenix`
gets an ok reply, `access_token` updates are recorded, and `push` delivers a broadcast to every
client joined to the topic, in the frame Realtime sends for a message of `realtime.messages`.
It can also drop every connection and refuse new ones, as an outage would.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

REFUSED_REASON = "Unauthorized: You do not have permissions to read from this Channel topic"


@dataclass(frozen=True)
class Join:
    """One phx_join as the server received it."""

    topic: str  # realtime:<the channel's name>
    payload: dict[str, Any]  # config (broadcast, presence, private...) and access_token
    path: str  # the websocket URL's path
    query: dict[str, list[str]]  # apikey, vsn


@dataclass
class RealtimeFake:
    refuse_joins: bool = False  # reply error to phx_join, as for a client the policies refuse
    refuse_connections: bool = False  # answer the websocket handshake with 503
    joins: list[Join] = field(default_factory=list)
    access_tokens: list[str] = field(default_factory=list)
    heartbeats: int = 0
    connections: int = 0
    _members: dict[str, set[ServerConnection]] = field(default_factory=dict)
    _joined: asyncio.Condition = field(default_factory=asyncio.Condition)
    _server: Server | None = None

    @property
    def url(self) -> str:
        """The project URL a client is given (Realtime is under /realtime/v1)."""
        assert self._server is not None, "not started"
        host, port = next(iter(self._server.sockets)).getsockname()[:2]
        return f"http://{host}:{port}"

    async def start(self) -> None:
        self._server = await serve(self._serve, "127.0.0.1", 0, process_request=self._handshake)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def wait_for_join(self, count: int = 1) -> Join:
        """The count-th join received (waiting for it: bound it with asyncio.timeout or the test's)."""
        async with self._joined:
            await self._joined.wait_for(lambda: len(self.joins) >= count)
        return self.joins[count - 1]

    async def push(self, channel: str, event: str, payload: dict[str, Any]) -> int:
        """Deliver a broadcast to the clients joined to `channel` (no `realtime:` prefix); how many."""
        topic = f"realtime:{channel}"
        frame = json.dumps(
            [None, None, topic, "broadcast", {"type": "broadcast", "event": event, "payload": payload}]
        )
        members = list(self._members.get(topic, ()))
        for connection in members:
            await connection.send(frame)
        return len(members)

    async def drop_connections(self) -> None:
        """Close every client's connection, as when Realtime goes away."""
        assert self._server is not None
        for connection in list(self._server.connections):
            await connection.close(code=1001, reason="going away")
        self._members.clear()

    def _handshake(self, connection: ServerConnection, request: Request) -> Response | None:
        if self.refuse_connections:
            return connection.respond(HTTPStatus.SERVICE_UNAVAILABLE, "realtime is unavailable\n")
        if not urlsplit(request.path).path.endswith("/realtime/v1/websocket"):
            return connection.respond(HTTPStatus.NOT_FOUND, "not found\n")
        return None

    async def _serve(self, connection: ServerConnection) -> None:
        self.connections += 1
        assert connection.request is not None
        url = urlsplit(connection.request.path)
        try:
            async for frame in connection:
                if isinstance(frame, bytes):
                    continue  # a client's own broadcast (binary in vsn 2.0.0): not used here
                join_ref, ref, topic, event, payload = json.loads(frame)
                await self._handle(
                    connection, url.path, parse_qs(url.query), join_ref, ref, topic, event, payload
                )
        except ConnectionClosed:
            pass
        finally:
            for members in self._members.values():
                members.discard(connection)

    async def _handle(
        self,
        connection: ServerConnection,
        path: str,
        query: dict[str, list[str]],
        join_ref: str | None,
        ref: str | None,
        topic: str,
        event: str,
        payload: dict[str, Any],
    ) -> None:
        def reply(status: str, response: dict[str, Any]) -> str:
            return json.dumps([join_ref, ref, topic, "phx_reply", {"status": status, "response": response}])

        if topic == "phoenix" and event == "heartbeat":
            self.heartbeats += 1
            await connection.send(reply("ok", {}))
        elif event == "phx_join":
            async with self._joined:
                self.joins.append(Join(topic, payload, path, query))
                self._joined.notify_all()
            if self.refuse_joins:
                await connection.send(reply("error", {"reason": f"{REFUSED_REASON}: {topic}"}))
            else:
                self._members.setdefault(topic, set()).add(connection)
                await connection.send(reply("ok", {"postgres_changes": []}))
        elif event == "access_token":
            self.access_tokens.append(payload.get("access_token", ""))
        elif event == "phx_leave":
            self._members.get(topic, set()).discard(connection)
            await connection.send(reply("ok", {}))
