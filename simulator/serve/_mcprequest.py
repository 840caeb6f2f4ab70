"""What the current MCP request says about its session, and the middleware that reads it.

The server's session logic (`simulator.serve.server`) asks these of the request it serves: the HTTP
query (`?session=`, `?task=`, `?seed=`, `&handle=`), the client's address (per-client limits), the
episode handle and the call id in the request's `_meta` (the connection's id is fastmcp's
`Context.session_id`). `SessionMiddleware` is the fastmcp middleware of the server: per-session instructions, the protocol-era steering of
`server/discover`, and unknown tools recorded in the transcript like any other call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastmcp.server.dependencies import fastmcp_request_ctx, get_http_request
from fastmcp.server.middleware import Middleware
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from ..errors import SessionError
from .mcptools import HANDLE_META, SUBMIT_ANSWER
from .resends import CallRef, call_id_of
from .serving import TaskView
from .sessions import check_session_id

if TYPE_CHECKING:
    from .server import DomainServer

#: Query parameters that name a session explicitly.
SESSION_PARAMS = ("session", "episode")


def http_query() -> Any | None:
    """The current HTTP request's query parameters, or None over stdio / in memory."""
    try:
        return get_http_request().query_params
    except RuntimeError:
        return None


def request_client() -> str:
    """Who is calling, for per-client limits: the HTTP peer's address, else the local process."""
    try:
        peer = get_http_request().client
    except RuntimeError:
        return "local"
    return peer.host if peer is not None else "unknown"


def request_handle() -> str | None:
    """The episode handle the current request carries in its `_meta`, if any."""
    rctx = fastmcp_request_ctx.get()
    meta = getattr(rctx, "meta", None) if rctx is not None else None
    value = meta.get(HANDLE_META) if isinstance(meta, dict) else None
    return value if isinstance(value, str) else None


def request_call() -> CallRef:
    """What names the current request's call across resends: its `_meta` call id and its JSON-RPC
    id (as fastmcp passes it on, a string). ValueError for a malformed call id."""
    rctx = fastmcp_request_ctx.get()
    if rctx is None:
        return CallRef(None)
    return CallRef(call_id_of(rctx.meta), rctx.request_id)


def explicit_session(query: Any) -> str | None:
    """The session id a request's query names (`?session=`), checked; None when it names none."""
    for name in SESSION_PARAMS:
        value = query.get(name)
        if value:
            return check_session_id(value)
    return None


class SessionMiddleware(Middleware):
    """Per-session instructions, the era steering of `server/discover`, unknown tools recorded."""

    def __init__(self, server: DomainServer):
        self.server = server

    def _task_or_error(self) -> TaskView | None:
        try:
            return self.server.request_task()
        except SessionError as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None

    async def on_initialize(self, context: Any, call_next: Any) -> Any:
        await self.server.back_off(self.server._failing.get(request_client(), 0))  # a churning failer waits
        query = http_query()
        task = self._task_or_error() if query is not None else None
        result = await call_next(context)
        if result is not None and query is not None:
            result.instructions = self.server.instructions(task)
        return result

    async def on_discover(self, context: Any, call_next: Any) -> Any:
        query = http_query()
        task = self._task_or_error() if query is not None else None
        result = await call_next(context)
        if query is None or isinstance(result, dict):
            return result
        result.instructions = self.server.instructions(task)
        try:
            explicit = explicit_session(query)
        except SessionError as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None
        if explicit is None:
            # No session id in the URL: advertise only handshake-era versions so that the client
            # falls back to `initialize` and gets an mcp-session-id for its whole connection.
            result.supported_versions = list(HANDSHAKE_PROTOCOL_VERSIONS)
        return result

    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        name = context.message.name
        if name not in self.server.domain.tools and name != SUBMIT_ANSWER:  # recorded, with the tool list
            return await self.server.call(name, dict(context.message.arguments or {}))
        return await call_next(context)
