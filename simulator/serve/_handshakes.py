"""Handshakes are sessions: the ASGI guard that counts HTTP connections from their first request.

A request that would open an MCP connection takes a slot of every session cap
(`SessionRegistry.admit`) before the SDK sees it, and is refused with 503 when there is none.
The guard is the server's record of live connections: established by the SDK's answer to
`initialize`, ended by DELETE or the SDK's 404, idle while no request is in flight. A connection
the registry reaps is closed by sending the SDK the DELETE a client would send.
Opening requests reach the SDK one at a time, paced by `HANDSHAKE_PAUSE`, so a burst of
handshakes cannot starve established sessions. A refusal closes the connection.
Design notes: docs/design/serving.md.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import pydantic_core
from mcp_types import INTERNAL_ERROR
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import CapacityError, clip_name
from ._fastcall import read_body, replay_body, wire_result
from .sessions import HANDSHAKE_CLOSED

if TYPE_CHECKING:
    from .server import DomainServer

logger = logging.getLogger("toolgym.server")

_HANDSHAKE = frozenset(v.encode() for v in HANDSHAKE_PROTOCOL_VERSIONS)

#: After a handshake, the next waits this many times as long as it took (at most `MAX_PAUSE_S`).
HANDSHAKE_PAUSE = 3.0
MAX_PAUSE_S = 0.05


class HandshakeGuard:
    """ASGI middleware in front of the SDK's endpoint: connections take session slots."""

    def __init__(self, app: ASGIApp, server: DomainServer, path: str):
        self.app = app
        self.server = server
        self.registry = server.sessions
        self.path = path
        self._pending = itertools.count()
        self._scope: Scope | None = None  # a request's scope: the base of the DELETEs it sends
        self._turn = asyncio.Lock()  # opening requests in the SDK: one at a time, in arrival order
        self._next = 0.0  # when the next may start (the event loop's clock)
        server.handshake_guard = self

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        sid = version = None
        for name, value in scope["headers"]:  # (the first value, as the SDK reads them)
            if name == b"mcp-session-id":
                sid = value if sid is None else sid
            elif name == b"mcp-protocol-version":
                version = value if version is None else version
        if version is not None and version not in _HANDSHAKE:
            await self.app(scope, receive, send)  # the 2026-07-28 revision: no connection to count
        elif sid is None:
            await self._open(scope, receive, send)
        else:
            key = "s:" + sid.decode("latin-1")
            handshake = self.registry.handshakes.get(key)
            if handshake is None:  # a connection whose MCP session is gone, or another's
                send = _closing_on_404(send)
                if scope["method"] == "POST" and key in self.registry.closed:
                    await self._closed(key[2:], scope, receive, send)
                else:
                    await self.app(scope, receive, send)
                return
            handshake.in_flight += 1  # a request in flight (an open GET stream too) holds it
            try:
                status = await _status_of(self.app, scope, receive, send)
            finally:
                handshake.in_flight -= 1
                handshake.active = time.monotonic()
            # ended by its client, or unknown to the SDK (its session ended there): it ends here too
            if status == 404 or (status == 200 and scope["method"] == "DELETE"):
                await self.server.end_connection(key)

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request that opens a connection: counted from now, until the connection ends."""
        client = scope["client"][0] if scope.get("client") else "unknown"
        pending = f"p:{next(self._pending)}"
        try:
            self.registry.admit(pending, client)
        except CapacityError as exc:
            error = {"jsonrpc": "2.0", "id": None, "error": _error(str(exc))}
            await _send_json(send, 503, error, close=True)
            return
        if self._scope is None:
            self._scope = scope
        established: str | None = None

        async def watch(message: Message) -> None:
            nonlocal established
            if message["type"] == "http.response.start" and message["status"] < 400:
                for name, value in message.get("headers") or ():
                    if name.lower() == b"mcp-session-id":
                        established = "s:" + value.decode("latin-1")
                        self.registry.established(pending, established)
                        break
            await send(message)

        try:
            body, rest = await read_body(receive)
            if rest:  # the client left before its request arrived: nothing for the SDK to do
                return
            async with self._turn:
                loop = asyncio.get_running_loop()
                if (wait := self._next - loop.time()) > 0:
                    await asyncio.sleep(wait)
                started = loop.time()
                try:
                    await self.app(scope, replay_body(body, rest, receive), watch)
                finally:
                    took = loop.time() - started
                    self._next = loop.time() + min(MAX_PAUSE_S, took * HANDSHAKE_PAUSE)
        finally:
            if established is None:
                self.registry.end_handshake(pending)

    async def _closed(self, sid: str, scope: Scope, receive: Receive, send: Send) -> None:
        """A POST on a connection closed unused: a tool call gets the server's capacity label, as
        the first call of the session it would have opened."""
        body, rest = await read_body(receive)
        call = _tool_call(body)
        if call is None:
            await self.app(scope, replay_body(body, rest, receive), send)
            return
        rid, name, arguments = call
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        default = self.server.default_task
        task = query.get("task") or (default.id if default is not None else None)
        session = query.get("session") or query.get("episode") or sid
        message = HANDSHAKE_CLOSED.format(seconds=self.registry.handshake_timeout or 0)
        result = self.server.capacity_refusal(message, clip_name(name), arguments, session=session, task=task)
        answer = {"jsonrpc": "2.0", "id": rid, "result": wire_result(result)}
        await _send_json(send, 200, answer, close=True)

    async def close_reaped(self, batch: int = 0, pause: float = 0.0) -> None:
        """Close the connections of the handshakes the registry reaped; with `batch`, that many at a
        time, sleeping `pause` seconds between batches (the event loop serves others meanwhile)."""
        closing = self.registry.closing
        while closing:
            turn = closing[:batch] if batch > 0 else list(closing)
            del closing[: len(turn)]
            for key in turn:
                logger.info("connection %s closed: idle", key)
                await self.close(key)
            if closing:
                await asyncio.sleep(pause)

    async def close(self, key: str) -> None:
        """Close the connection `key` (`s:<mcp-session-id>`) as its client would: DELETE. Its
        sessions end with it."""
        await self.server.end_connection(key)
        if self._scope is None:
            return
        scope = {
            **self._scope,
            "method": "DELETE",
            "headers": [(b"mcp-session-id", key[2:].encode("latin-1"))],
            "query_string": b"",
        }
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: Message) -> None:
            return None

        try:
            await self.app(scope, receive, discard)
        except Exception:  # never let one connection's teardown stop the reaper
            logger.exception("error while closing connection %s", key)


def _error(message: str) -> dict[str, Any]:
    return {"code": INTERNAL_ERROR, "message": message}


def _tool_call(body: bytes) -> tuple[Any, str, Any] | None:
    """(id, tool name, arguments) of a single JSON-RPC `tools/call` request, else None."""
    try:
        message = pydantic_core.from_json(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params, rid = message.get("params"), message.get("id")
    if type(rid) not in (int, str) or not isinstance(params, dict) or not isinstance(params.get("name"), str):
        return None
    arguments = params.get("arguments")
    return rid, params["name"], arguments if isinstance(arguments, dict) else {}


async def _status_of(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> int | None:
    status: int | None = None

    async def watch(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        await send(message)

    await app(scope, receive, watch)
    return status


def _closing_on_404(send: Send) -> Send:
    """`send`, with `Connection: close` added to a 404 answer (the SDK's for an unknown session)."""

    async def closing(message: Message) -> None:
        if message["type"] == "http.response.start" and message["status"] == 404:
            message = {**message, "headers": [*message.get("headers", ()), _CLOSE]}
        await send(message)

    return closing


_CLOSE = (b"connection", b"close")


async def _send_json(send: Send, status: int, payload: dict[str, Any], close: bool = False) -> None:
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:  # (uvicorn closes the connection after this answer)
        headers.append(_CLOSE)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
