"""The fast paths for `tools/call`: over streamable HTTP in front of the SDK, and in fastmcp.

Both end in the same `DomainServer` methods as the framework's path (the same results, refusals
and transcript records); anything else goes the framework's way. `FastToolCalls` answers an HTTP
POST of one JSON-RPC `tools/call` for an existing session with one JSON answer, and replays every
other request to the SDK unchanged. `DirectToolCalls` is a fastmcp middleware that answers a plain
call itself (in memory, stdio, and HTTP requests left to the SDK), skipping fastmcp's tool lookup
and run. Both use only the public APIs of fastmcp, the SDK and starlette.
Design notes: docs/design/serving.md.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import pydantic_core
from fastmcp.server.middleware import Middleware
from mcp.shared.inbound import (
    MCP_PARAM_HEADER_PREFIX,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from mcp_types import SERVER_INFO_META_KEY, Implementation, JSONRPCRequest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import SessionError, clip_name
from .mcptools import HANDLE_META, SUBMIT_ANSWER, SUBMIT_ANSWER_SCHEMA, error_result
from .resends import CALL_ID_META, CallRef, call_id_of

if TYPE_CHECKING:
    from fastmcp import FastMCP
    from fastmcp.tools.base import ToolResult

    from .server import DomainServer
    from .sessions import Session

logger = logging.getLogger("toolgym.server")

_HANDSHAKE = frozenset(v.encode() for v in HANDSHAKE_PROTOCOL_VERSIONS)
_MODERN = frozenset(v.encode() for v in MODERN_PROTOCOL_VERSIONS)
_PARAM_PREFIX = MCP_PARAM_HEADER_PREFIX.lower()
_PARAMS = frozenset({"name", "arguments", "_meta"})
_JSON_HEADERS = [(b"content-type", b"application/json"), (b"cache-control", b"no-cache, no-transform")]


class _Query:
    """A request's query parameters with the `.get` the server's session checks use."""

    def __init__(self, raw: bytes):
        self.items = dict(parse_qsl(raw.decode("latin-1"), keep_blank_values=True)) if raw else {}

    def get(self, name: str, default: Any = None) -> Any:
        return self.items.get(name, default)


def _accepts(value: bytes) -> bool:
    """Whether an Accept header allows both answers of a POST (the SDK's own rule, wildcards too)."""
    types = {part.split(b";")[0].strip().lower() for part in value.split(b",")}
    if b"*/*" in types:
        return True
    return bool(types & {b"application/json", b"application/*"}) and bool(
        types & {b"text/event-stream", b"text/*"}
    )


class FastToolCalls:
    """ASGI middleware in front of the SDK's endpoint: answers existing sessions' tool calls."""

    def __init__(self, app: ASGIApp, server: DomainServer, path: str):
        self.app = app
        self.server = server
        self.path = path
        self.tools = frozenset(server.domain.tools) | {SUBMIT_ANSWER}
        #: each tool's input schema, exactly as `tools/list` serves it
        self.schemas: dict[str, Any] = {n: t.spec.input_schema for n, t in server.domain.tools.items()}
        self.schemas[SUBMIT_ANSWER] = SUBMIT_ANSWER_SCHEMA
        self.server_info = server_info_stamp(server.mcp)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        sid = version = content_type = accept = None
        repeated = False
        for name, value in scope["headers"]:
            if name == b"mcp-session-id":
                repeated |= sid is not None
                sid = value
            elif name == b"mcp-protocol-version":
                repeated |= version is not None
                version = value
            elif name == b"content-type":
                repeated |= content_type is not None
                content_type = value
            elif name == b"accept":
                repeated |= accept is not None
                accept = value
        # (the SDK reads a repeated header's first value; its Content-Type check is case-sensitive)
        if (
            repeated
            or content_type is None
            or accept is None
            or content_type.split(b";")[0].strip() != b"application/json"
            or not _accepts(accept)
        ):
            await self.app(scope, receive, send)
            return
        if sid is None and version in _MODERN:
            await self._modern(scope, receive, send, version.decode())
            return
        connection = self._connection(scope, sid, version)
        if connection is None:
            await self.app(scope, receive, send)
            return
        body, more = await read_body(receive)
        call = _tool_call(body, self.tools, modern=False) if not more else None
        session = None
        if call is not None:
            query = _Query(scope.get("query_string", b""))
            session = self._session(query, connection, None)
        if call is None or session is None:
            await self.app(scope, replay_body(body, more, receive), send)
            return
        rid, tool, arguments, message = call
        ref = CallRef(message["params"].get("_meta", {}).get(CALL_ID_META), rid)
        # (the connection's idle countdown is held by `HandshakeGuard`, in front of this path)
        result = await self._run(session, tool, arguments, ref)
        await self._send(send, rid, wire_result(result), [(b"mcp-session-id", connection.encode("latin-1"))])

    async def _modern(self, scope: Scope, receive: Receive, send: Send, version: str) -> None:
        """A 2026-07-28 request: answered here when it is a valid call of an existing session."""
        body, more = await read_body(receive)
        call = _tool_call(body, self.tools, modern=True) if not more else None
        session = None
        if call is not None and _passes_the_ladder(scope, call[3], version, self.schemas):
            handle = (call[3]["params"].get("_meta") or {}).get(HANDLE_META)
            query = _Query(scope.get("query_string", b""))
            session = self._session(query, None, handle if isinstance(handle, str) else None)
        if call is None or session is None:
            await self.app(scope, replay_body(body, more, receive), send)
            return
        rid, tool, arguments, message = call
        ref = CallRef(message["params"]["_meta"].get(CALL_ID_META), rid)
        result = wire_result(await self._run(session, tool, arguments, ref))
        result["_meta"] = {**result.get("_meta", {}), SERVER_INFO_META_KEY: self.server_info}
        result["resultType"] = "complete"
        await self._send(send, rid, result, [])

    def _connection(self, scope: Scope, sid: bytes | None, version: bytes | None) -> str | None:
        """The MCP session id of a live, established handshake-era connection, else None.

        The connections are toolgym's own record (`SessionRegistry.handshakes`, kept by
        `simulator.serve._handshakes.HandshakeGuard`): established by the SDK's answer to `initialize`,
        ended by DELETE, by idling past `idle_timeout` (the server closes it) or by the SDK's 404.
        An authenticated request is the SDK's: it binds a session to the credential that made it."""
        if sid is None or (version is not None and version not in _HANDSHAKE):
            return None
        if getattr(scope.get("user"), "is_authenticated", False):
            return None
        key = "s:" + sid.decode("latin-1")
        return key[2:] if key in self.server.sessions.handshakes else None

    def _session(self, query: _Query, connection_id: str | None, handle: str | None) -> Session | None:
        """The toolgym session the request belongs to, if it exists and the request may use it."""
        try:
            key, _ = self.server.key_for(query, connection_id)
            session = self.server.sessions.get(key)
            if session is not None:
                self.server.check_owner(session, query, connection_id, handle)
        except SessionError:
            return None  # the SDK path words the refusal
        return session

    async def _run(self, session: Session, tool: str, arguments: dict[str, Any], ref: CallRef) -> ToolResult:
        try:
            if tool == SUBMIT_ANSWER:
                return await self.server.submit_in(session, tool, arguments, ref)
            return await self.server.call_in(session, tool, arguments, ref)
        except Exception:  # a bug: masked as fastmcp masks it (mask_error_details)
            return masked_error(tool)

    async def _send(
        self, send: Send, rid: Any, result: dict[str, Any], extra: list[tuple[bytes, bytes]]
    ) -> None:
        body = json.dumps(
            {"jsonrpc": "2.0", "id": rid, "result": result}, ensure_ascii=False, separators=(",", ":")
        ).encode()
        self.server.fast_answered += 1
        headers = [*_JSON_HEADERS, (b"content-length", str(len(body)).encode()), *extra]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class DirectToolCalls(Middleware):
    """A fastmcp middleware, the outermost: a plain tool call straight to the server's session logic.

    A call without a multi-round-trip continuation and without a fastmcp component version is
    answered here with what fastmcp's dispatch would end in — `DomainServer.call` or
    `submit` (which open the session, or refuse the request, in the same words) — and the rest of
    the chain (tool lookup, telemetry span, the tool's run) is skipped. Anything else goes on.
    """

    def __init__(self, server: DomainServer):
        self.server = server
        self.answered = 0

    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        params = context.message  # (no task here: the server adds no extension that runs one)
        if (
            params.input_responses is not None
            or params.request_state is not None
            or (params.meta is not None and "fastmcp" in params.meta)  # a component version
        ):
            return await call_next(context)
        name, arguments = params.name, dict(params.arguments or {})
        self.answered += 1
        try:
            if name == SUBMIT_ANSWER:
                return await self.server.submit(name, arguments)
            # a domain tool, or a name the domain lacks (recorded, answered with the tool list)
            return await self.server.call(name, arguments)
        except Exception:  # a bug: masked as fastmcp masks it (mask_error_details)
            return masked_error(name)


def server_info_stamp(mcp: FastMCP) -> dict[str, Any]:
    """The `serverInfo` stamp the SDK puts in a 2026-07-28 result's `_meta`: the server's identity
    (fastmcp's public fields, as fastmcp hands them to the SDK) as the SDK dumps it."""
    info = Implementation(
        name=mcp.name, version=mcp.version or "", website_url=mcp.website_url, icons=mcp.icons or None
    )
    return info.model_dump(by_alias=True, mode="json", exclude_none=True)


def masked_error(tool: str) -> ToolResult:
    """What fastmcp answers (with `mask_error_details`) when a tool raises an unexpected exception:
    the bug is logged with its traceback, the agent sees no detail."""
    logger.exception("internal error in %s", clip_name(tool))
    return error_result(f"Error calling tool {clip_name(tool)!r}")


def wire_result(result: ToolResult) -> dict[str, Any]:
    """A `CallToolResult` as the SDK writes it (by alias, unset fields left out)."""
    out: dict[str, Any] = {}
    if result.meta:
        out["_meta"] = dict(result.meta)
    out["content"] = [block.model_dump(by_alias=True, exclude_none=True) for block in result.content]
    if result.structured_content is not None:
        out["structuredContent"] = result.structured_content
    out["isError"] = bool(result.is_error)
    return out


def _tool_call(
    body: bytes, tools: frozenset[str], modern: bool
) -> tuple[Any, str, dict[str, Any], dict[str, Any]] | None:
    """(id, tool, arguments, message) of a plain single `tools/call` request for a served tool,
    else None. Handshake-era requests with any `_meta` but a call id (progress tokens and the
    like) are left to the SDK; on the 2026-07-28 revision every request carries its `_meta`
    envelope. A malformed call id is the SDK path's to refuse."""
    try:
        message = pydantic_core.from_json(body)  # the SDK's parser: what it refuses, this refuses
    except ValueError:
        return None
    if (
        not isinstance(message, dict)
        or message.get("jsonrpc") != "2.0"
        or message.get("method") != "tools/call"
    ):
        return None
    rid = message.get("id")
    if type(rid) not in (int, str) or len(message) != 4:
        return None
    params = message.get("params")
    if not isinstance(params, dict) or not set(params) <= _PARAMS:
        return None
    meta = params.get("_meta")
    if meta is not None or modern:
        if not isinstance(meta, dict) or not (modern or meta.keys() == {CALL_ID_META}):
            return None
        try:
            call_id_of(meta)
        except ValueError:
            return None
    name = params.get("name")
    arguments = params.get("arguments", {})
    if name not in tools or not isinstance(arguments, dict):
        return None
    return rid, name, arguments, message


def _passes_the_ladder(scope: Scope, message: dict[str, Any], version: str, schemas: dict[str, Any]) -> bool:
    """Whether a 2026-07-28 request passes every rung of the validation ladder the SDK's modern
    entry runs (the SDK's own functions); one that does not is the SDK's to answer."""
    raw = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
    if find_duplicated_routing_header(raw) is not None:
        return False
    try:
        JSONRPCRequest.model_validate(message)
    except ValidationError:
        return False
    headers = Headers(scope=scope)
    verdict = classify_inbound_request(message, headers=dict(headers))
    if not isinstance(verdict, InboundModernRoute) or verdict.protocol_version != version:
        return False
    params = message["params"]
    arguments = params.get("arguments") or {}
    if arguments or any(name.startswith(_PARAM_PREFIX) for name, _ in raw):
        return validate_mcp_param_headers(schemas[params["name"]], arguments, headers) is None
    return True


async def read_body(receive: Receive) -> tuple[bytes, list[Message]]:
    """The request body, and any messages after it that are not body (a disconnect)."""
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(parts), [message]
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts), []


def replay_body(body: bytes, rest: list[Message], receive: Receive) -> Receive:
    """A `receive` that hands the SDK the body already read, then whatever follows."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}, *rest]

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay
