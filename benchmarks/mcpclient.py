"""A lightweight MCP client for load: raw JSON-RPC posts over keep-alive HTTP/1.1 (asyncio streams).

The official SDK client costs several milliseconds of CPU per call of its own; on a shared
2-core machine that cost competes with the server and hides what the server can do. This client
speaks just enough of streamable HTTP to drive tool calls — the initialize handshake
(`mcp-session-id`, `notifications/initialized`), or a 2026-07-28 per-request envelope with an
explicit `?session=` id and the episode handle in `_meta` — and parses either answer the
protocol allows (`application/json`, or an SSE stream of `event: message` frames). It checks
every answer is the JSON-RPC response to its own request id.

    async with await McpHttp.connect("127.0.0.1", port, "/mcp?task=bank-001") as client:
        await client.initialize()
        result = await client.call_tool("get_customer", {"customer_id": "CUS-1"})

Used by `sessions.py`, `mcp.py` and `attack.py` (whose requests `post` sends as they are, from the
client address `source`); not a general client (no server-to-client requests).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

HANDSHAKE_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
PROTOCOL_META = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_META = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
HANDLE_META = "toolgym/handle"


class McpHttpError(RuntimeError):
    pass


class McpHttp:
    """One keep-alive HTTP/1.1 connection to an MCP endpoint, one request at a time."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        host: str,
        path: str,
        source: str | None = None,
    ):
        self.reader = reader
        self.writer = writer
        self.host = host
        self.path = path
        self.source = source  # the local address connections are made from (None: any)
        self.session_id: str | None = None
        self.protocol = HANDSHAKE_VERSION
        self.handle: str | None = None
        self.ids = itertools.count(1)
        self.reconnects = 0

    @classmethod
    async def connect(cls, host: str, port: int, path: str, source: str | None = None) -> McpHttp:
        """A connection to host:port, from the local address `source` if given (on loopback any
        127.x.y.z: the server then sees that address as the client's)."""
        reader, writer = await _open(host, port, source)
        return cls(reader, writer, f"{host}:{port}", path, source)

    async def __aenter__(self) -> McpHttp:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self.session_id is not None and not self.writer.is_closing():
            try:  # end the MCP session (the server ends its episode)
                await self._send(b"DELETE", b"", {})
                await self._response()
            except (OSError, McpHttpError, asyncio.IncompleteReadError):
                pass
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except OSError:
            pass

    # -- the protocol -------------------------------------------------------------------------

    async def initialize(self) -> dict[str, Any]:
        result = await self.request(
            "initialize",
            {
                "protocolVersion": HANDSHAKE_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "toolgym-bench", "version": "1"},
            },
        )
        self.protocol = result["protocolVersion"]
        await self.notify("notifications/initialized")
        return result

    def modern(self) -> None:
        """Speak the 2026-07-28 revision: no handshake, every request carries its envelope."""
        self.protocol = MODERN_VERSION

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        result = await self.request("tools/call", params)
        meta = result.get("_meta") or {}
        if HANDLE_META in meta:
            self.handle = meta[HANDLE_META]
        return result

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        rid = next(self.ids)
        if self.protocol == MODERN_VERSION:
            meta = {
                PROTOCOL_META: MODERN_VERSION,
                CLIENT_INFO_META: {"name": "toolgym-bench", "version": "1"},
                CLIENT_CAPABILITIES_META: {},
            }
            if self.handle is not None:
                meta[HANDLE_META] = self.handle
            params = {**params, "_meta": meta}
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()
        extra = {}
        if self.protocol == MODERN_VERSION:
            extra[b"mcp-method"] = method.encode()
            if method == "tools/call":
                extra[b"mcp-name"] = params["name"].encode()
        status, headers, payload = await self._exchange(body, extra)
        if b"mcp-session-id" in headers and self.session_id is None:
            self.session_id = headers[b"mcp-session-id"].decode()
        message = _message(headers, payload, rid)
        if "error" in message:
            raise McpHttpError(f"{method}: HTTP {status}: {message['error']}")
        return message["result"]

    async def notify(self, method: str) -> None:
        body = json.dumps({"jsonrpc": "2.0", "method": method}).encode()
        await self._send(b"POST", body, {})
        await self._response()

    # -- HTTP/1.1 -------------------------------------------------------------------------------

    async def _exchange(
        self, body: bytes, extra: dict[bytes, bytes]
    ) -> tuple[int, dict[bytes, bytes], bytes]:
        """POST `body`; when the server had closed the idle keep-alive connection before reading
        it (no byte of an answer came back), reconnect and send it again, once."""
        try:
            await self._send(b"POST", body, extra)
            return await self._response()
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                raise
        except (ConnectionResetError, BrokenPipeError):
            pass  # the idle connection was closed as the request went out: the server never read it
        host, port = self.host.rsplit(":", 1)
        self.writer.close()
        self.reader, self.writer = await _open(host, int(port), self.source)
        self.reconnects += 1
        await self._send(b"POST", body, extra)
        return await self._response()

    async def post(
        self, body: bytes, headers: list[tuple[bytes, bytes]]
    ) -> tuple[int, dict[bytes, bytes], bytes]:
        """POST `body` as it is, with exactly `headers` besides the request line, Host and
        Content-Length (plus the session id once there is one): for requests this client would
        never build. (status, headers, payload); no reconnect."""
        lines = [
            b"POST " + self.path.encode() + b" HTTP/1.1",
            b"host: " + self.host.encode(),
            b"content-length: " + str(len(body)).encode(),
            *(k + b": " + v for k, v in headers),
        ]
        if self.session_id is not None:
            lines.append(b"mcp-session-id: " + self.session_id.encode())
        self.writer.write(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        await self.writer.drain()
        return await self._response()

    async def _send(self, verb: bytes, body: bytes, extra: dict[bytes, bytes]) -> None:
        lines = [
            verb + b" " + self.path.encode() + b" HTTP/1.1",
            b"host: " + self.host.encode(),
            b"accept: application/json, text/event-stream",
            b"content-type: application/json",
            b"content-length: " + str(len(body)).encode(),
            b"mcp-protocol-version: " + self.protocol.encode(),
        ]
        if self.session_id is not None:
            lines.append(b"mcp-session-id: " + self.session_id.encode())
        lines.extend(k + b": " + v for k, v in extra.items())
        self.writer.write(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        await self.writer.drain()

    async def _response(self) -> tuple[int, dict[bytes, bytes], bytes]:
        head = await self.reader.readuntil(b"\r\n\r\n")
        first, *rest = head[:-4].split(b"\r\n")
        status = int(first.split(b" ", 2)[1])
        headers: dict[bytes, bytes] = {}
        for line in rest:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        if b"content-length" in headers:
            payload = await self.reader.readexactly(int(headers[b"content-length"]))
        elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n"))[:-2].split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                parts.append(chunk[:-2])
            payload = b"".join(parts)
        else:
            payload = b""
        return status, headers, payload


async def _open(
    host: str, port: int, source: str | None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    local = (source, 0) if source is not None else None
    return await asyncio.open_connection(host, port, limit=1 << 22, local_addr=local)


def _message(headers: dict[bytes, bytes], payload: bytes, rid: int) -> dict[str, Any]:
    """The JSON-RPC response with id `rid`, from a JSON body or an SSE stream."""
    kind = headers.get(b"content-type", b"")
    if kind.startswith(b"text/event-stream"):
        for frame in payload.split(b"\n\n"):
            data = b"\n".join(line[5:].lstrip() for line in frame.splitlines() if line.startswith(b"data:"))
            if data:
                message = json.loads(data)
                if message.get("id") == rid:
                    return message
        raise McpHttpError(f"no response to request {rid} in the event stream")
    if not payload:
        raise McpHttpError(f"empty answer to request {rid}")
    message = json.loads(payload)
    if message.get("id") != rid:
        raise McpHttpError(f"answer to request {message.get('id')}, not {rid}")
    return message
