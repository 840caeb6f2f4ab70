"""An ASGI guard in front of the MCP endpoint: request bodies have a size limit.

A body over the limit is refused with 413 before any of it is parsed, whether it announces its
length (`Content-Length`) or streams it (chunked): one client cannot make the server hold a
multi-megabyte argument list in memory, let alone run a call on it.
"""

from __future__ import annotations

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
