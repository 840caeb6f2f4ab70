"""Guards in front of the MCP endpoint: request bodies have a size limit, and a read deadline.

A body over the limit is refused with 413 before any of it is parsed, whether it announces its
length (`Content-Length`) or streams it (chunked): one client cannot make the server hold a
multi-megabyte argument list in memory, let alone run a call on it. A connection that takes longer
than the deadlines to send a request's headers, or its body, is closed (`deadline_protocol`): a
half-sent request holds no socket for long.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

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


def deadline_protocol(header_seconds: float, body_seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol (its `http=` option) with read deadlines: a connection's request
    headers must be complete within `header_seconds` of its first byte (or of the connection, for
    its first request), the body within `body_seconds` of the headers; else the connection is closed.
    An idle keep-alive connection is uvicorn's own `timeout_keep_alive` to close."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class DeadlineProtocol(HttpToolsProtocol):
        deadline: asyncio.TimerHandle | None = None

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
