"""Guards in front of the MCP endpoint: a body size limit, read deadlines and a connection cap.

A body over the limit is refused with 413 before any of it is parsed, with or without a
`Content-Length`. A connection slower than the deadlines to send a request's headers or body is
closed (`deadline_protocol`). A connection opened while `max_connections` are open is answered
503 and closed at once; the connections already open are untouched. The SDK's traceback for a
request whose client left before its body was read is not logged (`quiet_disconnects`).
Design notes: docs/design/serving.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from starlette.requests import ClientDisconnect
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: The default limit on one HTTP request body (bytes).
MAX_BODY_BYTES = 1024 * 1024


class _TooLarge(Exception):
    pass


class BodyLimit:
    """Refuse HTTP request bodies larger than `max_bytes` with 413 Payload Too Large."""

    def __init__(
        self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES, on_refused: Callable[[str], None] | None = None
    ):
        self.app = app
        self.max_bytes = max_bytes
        self.on_refused = on_refused

    def _refusal(self, scope: Scope) -> PlainTextResponse:
        client = scope.get("client")
        if self.on_refused is not None:
            self.on_refused(client[0] if client else "unknown")
        return PlainTextResponse(
            f"Request body too large: the limit is {self.max_bytes:,} bytes.", status_code=413
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers") or []:
            if name == b"content-length":
                try:
                    too_large = int(value) > self.max_bytes
                except ValueError:
                    too_large = False
                if too_large:
                    await self._refusal(scope)(scope, receive, send)
                    return
        seen = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not started:
                await self._refusal(scope)(scope, receive, send)


def body_limit(max_bytes: int, on_refused: Callable[[str], None] | None = None) -> Any:
    """The guard as a Starlette `Middleware` entry; `on_refused(client_host)` hears of each refusal."""
    from starlette.middleware import Middleware

    return Middleware(BodyLimit, max_bytes=max_bytes, on_refused=on_refused)


#: The answer to a connection opened past the cap (before it sent anything), then closed.
_REFUSAL_TEXT = b"The server is at its limit of connections: try again later.\n"
REFUSED_CONNECTION = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_REFUSAL_TEXT), _REFUSAL_TEXT)
)


def deadline_protocol(
    header_seconds: float, body_seconds: float, max_connections: int | None = None
) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol (its `http=` option) with read deadlines: a connection's request
    headers must be complete within `header_seconds` of its first byte (or of the connection, for
    its first request), the body within `body_seconds` of the headers; else the connection is closed.
    An idle keep-alive connection is uvicorn's own `timeout_keep_alive` to close. A connection that
    would be one more than `max_connections` open is answered 503 and closed before it is read."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class DeadlineProtocol(HttpToolsProtocol):
        deadline: asyncio.TimerHandle | None = None
        refused = 0  # connections refused past the cap (counted on the class: one per server)

        def _arm(self, seconds: float) -> None:
            self._disarm()
            self.deadline = self.loop.call_later(seconds, self._expire)

        def _disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def _expire(self) -> None:
            self.deadline = None
            if not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if max_connections is not None and len(self.connections) > max_connections:
                type(self).refused += 1
                transport.write(REFUSED_CONNECTION)
                transport.close()
                return
            self._arm(header_seconds)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self.deadline is None:
                self._arm(header_seconds)

        def on_headers_complete(self) -> None:
            self._arm(body_seconds)
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._disarm()
            super().on_message_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return DeadlineProtocol


class _QuietDisconnects(logging.Filter):
    """Drops the records that carry a `ClientDisconnect` (a client that left mid-request)."""

    def __init__(self) -> None:
        super().__init__()
        self.dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info is not None and isinstance(record.exc_info[1], ClientDisconnect):
            self.dropped += 1
            return False
        return True


#: The SDK's logger that reports a POST whose body never arrived, with a ~10-line traceback each.
SDK_TRANSPORT_LOGGER = "mcp.server.streamable_http"


def quiet_disconnects() -> logging.Filter:
    """Keep the SDK from logging a traceback for each request whose client left before its body was
    read (the body deadline closes such connections: a client can flood the log with them); other
    records pass. Installed once per process; returns the filter (its `dropped` counts them)."""
    logger = logging.getLogger(SDK_TRANSPORT_LOGGER)
    for existing in logger.filters:
        if isinstance(existing, _QuietDisconnects):
            return existing
    quiet = _QuietDisconnects()
    logger.addFilter(quiet)
    return quiet
