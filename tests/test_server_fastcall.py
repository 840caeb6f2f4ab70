"""The HTTP fast path for `tools/call` (`simulator.serve._fastcall`): the same answers as the SDK path.

Two servers of the same domain run in this process (uvicorn on free 127.0.0.1 ports), one with
the fast path and one without; the same raw JSON-RPC requests go to both and their answers must
be the same JSON, while the fast path must have answered them. The official client's calls take
the fast path too, and what the fast path must not answer (another session's explicit id, an
ended session, a request with `_meta`, a tool the server does not have, a bad body) still gets
the SDK's answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from scoring import load_domain
from simulator import Domain
from simulator.serve.mcptools import HANDLE_META
from simulator.serve.server import DomainServer
from tests.conftest import FIXTURES
from tests.helpers import calls_of, records, text

pytestmark = pytest.mark.timeout(60)

ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def shop() -> Domain:
    return load_domain(FIXTURES / "shop")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(server: DomainServer) -> Iterator[str]:
    """`server`'s HTTP app on a free port in a background thread; its URL."""
    port = _free_port()
    config = uvicorn.Config(server.http_app("/mcp"), host="127.0.0.1", port=port, log_level="warning")
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not uv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        uv.should_exit = True
        thread.join(20)


class Raw:
    """Raw JSON-RPC over one keep-alive HTTP connection: what a wire sees, byte for byte."""

    def __init__(self, url: str, query: str = ""):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.path = "/mcp" + query
        self.sid: str | None = None
        self.next_id = 0

    def post(self, body: Any, **headers: str) -> tuple[int, str, Any]:
        """(status, content type, the JSON-RPC message or None) of one POST."""
        all_headers = {"accept": ACCEPT, "content-type": "application/json", **headers}
        if self.sid is not None:
            all_headers.setdefault("mcp-session-id", self.sid)
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.conn.request("POST", self.path, body=raw, headers=all_headers)
        response = self.conn.getresponse()
        payload = response.read()
        kind = response.getheader("content-type") or ""
        self.sid = self.sid or response.getheader("mcp-session-id")
        if kind.startswith("text/event-stream"):
            frames = [line[5:].strip() for line in payload.decode().splitlines() if line.startswith("data:")]
            messages = [json.loads(f) for f in frames if f]
            return response.status, kind, next((m for m in messages if "id" in m), None)
        return response.status, kind, json.loads(payload) if payload else None

    def request(self, method: str, params: dict[str, Any], **headers: str) -> tuple[int, str, Any]:
        self.next_id += 1
        return self.post(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}, **headers
        )

    def open(self) -> None:
        init = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        status, _, message = self.request("initialize", init)
        assert status == 200 and "result" in message, message
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})[0] == 202

    def call(self, tool: str, arguments: Any, **headers: str) -> tuple[int, str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": arguments}, **headers)


SCRIPT: list[tuple[str, Any]] = [
    ("get_customer", {"customer_id": "C-0001"}),  # the first call opens the episode (SDK path)
    ("get_customer", {"customer_id": "C-0001"}),  # a read
    ("get_customer", {"customer_id": "C-9999"}),  # a tool error: not found
    ("set_note", {"customer_id": "C-0001"}),  # a tool error: a missing argument
    ("set_note", {"customer_id": "C-0001", "notes": "ünïcode ✓"}),  # a write
    ("get_customer", {"customer_id": "C-0001"}),  # sees the write
    ("place_order", {"customer_id": "C-0001", "items": [{"sku": "SKU-001", "quantity": 1}]}),
    ("set_note", {"customer_id": "C-0001", "notes": 5}),  # a tool error: a wrong type
    ("submit_answer", {"answer": "done"}),  # ends the session
    ("get_customer", {"customer_id": "C-0001"}),  # after the end: refused
]


def test_the_fast_path_answers_exactly_as_the_sdk(shop: Domain, tmp_path: Path) -> None:
    fast = DomainServer(shop, runs=tmp_path / "fast", error_backoff_ms=0)
    slow = DomainServer(shop, runs=tmp_path / "slow", error_backoff_ms=0, fast_calls=False)
    with serving(fast) as fast_url, serving(slow) as slow_url:
        answers = []
        for url in (fast_url, slow_url):
            raw = Raw(url)
            raw.open()
            answers.append([raw.call(tool, arguments) for tool, arguments in SCRIPT])
    for (status, _kind, got), (sdk_status, _, expected), (tool, _) in zip(*answers, SCRIPT, strict=True):
        assert (status, got) == (sdk_status, expected), tool
    # the fast path answered all but the call that opened the episode and the refusal after the end
    assert fast.fast_answered == len(SCRIPT) - 2 and slow.fast_answered == 0
    assert [kind for _, kind, _ in answers[0][1:-1]] == ["application/json"] * (len(SCRIPT) - 2)
    errors = [message["result"]["isError"] for _, _, message in answers[0]]
    assert errors == [False, False, True, True, False, False, False, True, False, True]
    # the same transcripts: every call recorded, the end with the answer
    (mine,), (theirs,) = (tmp_path / "fast").glob("*.jsonl"), (tmp_path / "slow").glob("*.jsonl")
    strip = ("duration_us", "at", "session", "signature")
    assert [{k: v for k, v in c.items() if k not in strip} for c in calls_of(mine)] == [
        {k: v for k, v in c.items() if k not in strip} for c in calls_of(theirs)
    ]
    assert records(mine)[-1]["type"] == "end" and records(mine)[-1]["reason"] == "answer submitted"


MODERN = "2026-07-28"


def modern_call(raw: Raw, tool: str, arguments: Any, handle: str | None) -> tuple[int, str, Any]:
    """A 2026-07-28 request: no handshake, the envelope in `_meta`, the routing headers."""
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    if handle is not None:
        meta[HANDLE_META] = handle
    params = {"name": tool, "arguments": arguments, "_meta": meta}
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": tool}
    return raw.request("tools/call", params, **headers)


def test_the_fast_path_answers_the_newest_revision_exactly_as_the_sdk(shop: Domain, tmp_path: Path) -> None:
    fast = DomainServer(shop, runs=tmp_path / "fast", error_backoff_ms=0)
    slow = DomainServer(shop, runs=tmp_path / "slow", error_backoff_ms=0, fast_calls=False)
    with serving(fast) as fast_url, serving(slow) as slow_url:
        answers = []
        for url in (fast_url, slow_url):
            raw = Raw(url, "?session=modern-1")
            handle = None
            out = []
            for i, (tool, arguments) in enumerate(SCRIPT):
                status, _, message = modern_call(raw, tool, arguments, handle)
                meta = message.get("result", {}).get("_meta") or {}
                if HANDLE_META in meta:
                    handle = meta[HANDLE_META]
                    meta[HANDLE_META] = "<handle>"  # the servers' handles differ
                out.append((status, message))
                if i == 1:  # the handle is the key: without it, or with a forged one, refused
                    for other in (None, "x" * 24):
                        refused = modern_call(raw, *SCRIPT[1], other)[2]
                        assert "belongs to another" in json.dumps(refused)
            answers.append(out)
    assert answers[0] == answers[1]
    assert answers[0][1][1]["result"]["resultType"] == "complete"
    # the serverInfo stamp, made from fastmcp's public fields, is the SDK's own
    assert answers[0][1][1]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "shop"
    # all but the opening call and the refusal after the end; the refusals above went to the SDK
    assert fast.fast_answered == len(SCRIPT) - 2 and slow.fast_answered == 0
    (mine,), (theirs,) = (tmp_path / "fast").glob("*.jsonl"), (tmp_path / "slow").glob("*.jsonl")
    strip = ("duration_us", "at", "session", "signature")
    assert [{k: v for k, v in c.items() if k not in strip} for c in calls_of(mine)] == [
        {k: v for k, v in c.items() if k not in strip} for c in calls_of(theirs)
    ]


def test_the_official_client_takes_the_fast_path_and_sessions_stay_isolated(shop: Domain) -> None:
    server = DomainServer(shop, error_backoff_ms=0)

    async def main(url: str) -> None:
        async with (
            streamable_http_client(url) as (r1, w1),
            ClientSession(r1, w1) as one,
            streamable_http_client(url) as (r2, w2),
            ClientSession(r2, w2) as two,
        ):
            await one.initialize()
            await two.initialize()
            for session, tag in ((one, "one"), (two, "two")):
                wrote = await session.call_tool("set_note", {"customer_id": "C-0001", "notes": tag})
                assert not wrote.is_error, text(wrote)
            for session, tag in ((one, "one"), (two, "two")):
                for _ in range(3):
                    read = await session.call_tool("get_customer", {"customer_id": "C-0001"})
                    assert json.loads(text(read))["notes"] == tag
            bad = await one.call_tool("get_customer", {"customer_id": "C-9999"})
            assert bad.is_error and "C-9999" in text(bad)

    with serving(server) as url:
        asyncio.run(main(url))
    assert server.fast_answered == 7  # every call but the two that opened the episodes


def test_what_the_fast_path_must_not_answer_gets_the_sdks_answer(shop: Domain) -> None:
    server = DomainServer(shop, error_backoff_ms=0)
    with serving(server) as url:
        owner = Raw(url, "?session=mine")
        owner.open()
        assert not owner.call("get_customer", {"customer_id": "C-0001"})[2]["result"]["isError"]
        answered = server.fast_answered  # the opening call went through the SDK

        # another MCP session naming the same explicit id: refused, as the SDK path words it
        intruder = Raw(url)
        intruder.open()
        intruder.path = "/mcp?session=mine"  # its own MCP session, then another's explicit id
        _, _, message = intruder.call("get_customer", {"customer_id": "C-0001"})
        assert (
            message["result"]["isError"]
            and "belongs to another connection" in message["result"]["content"][0]["text"]
        )
        # a tool the server does not have, `_meta` on the request, a batch, a bad body: the SDK's
        _, _, unknown = owner.call("no_such_tool", {})
        assert unknown["result"]["isError"] and "no_such_tool" in json.dumps(unknown)
        meta = {"name": "get_customer", "arguments": {"customer_id": "C-0001"}, "_meta": {"progressToken": 7}}
        assert "result" in owner.request("tools/call", meta)[2]
        assert owner.post(b"{not json")[0] == 400
        # an unknown session id and a modern protocol header are the SDK's to answer
        assert owner.call("get_customer", {"customer_id": "C-0001"}, **{"mcp-session-id": "0" * 32})[0] == 404
        assert server.fast_answered == answered
        # the owner's own calls still take the fast path
        assert not owner.call("get_customer", {"customer_id": "C-0001"})[2]["result"]["isError"]
        assert server.fast_answered == answered + 1


def test_the_server_closes_an_idle_connection_and_ends_its_sessions(shop: Domain, tmp_path: Path) -> None:
    """The SDK runs without an idle timeout: the server ends a connection with no request in flight
    for `idle_timeout` (its sessions end with it) and closes it in the SDK as its client would, so
    a later request on it gets the SDK's 404. Until then its calls take the fast path."""
    server = DomainServer(shop, runs=tmp_path, error_backoff_ms=0, idle_timeout=0.6, handshake_timeout=None)
    with serving(server) as url:
        raw, other = Raw(url), Raw(url, "?session=bound")
        raw.open()
        other.open()
        raw.call("get_customer", {"customer_id": "C-0001"})  # opens the episode
        other.call("get_customer", {"customer_id": "C-0001"})  # an explicit id, bound to its connection
        key = "s:" + str(raw.sid)
        for _ in range(4):  # calls closer together than the timeout keep it (the fast path's too)
            time.sleep(0.3)
            assert not raw.call("get_customer", {"customer_id": "C-0001"})[2]["result"]["isError"]
        assert server.fast_answered == 4 and key in server.sessions.handshakes
        deadline = time.monotonic() + 10
        while len(list(tmp_path.glob("*.jsonl"))) < 2 or any(
            records(p)[-1]["type"] != "end" for p in tmp_path.glob("*.jsonl")
        ):
            assert time.monotonic() < deadline, "the idle connections were not closed"
            time.sleep(0.05)
        assert key not in server.sessions.handshakes and not server.sessions.live
        while (answer := raw.call("get_customer", {"customer_id": "C-0001"}))[0] != 404:  # closed in the SDK
            # until the server's DELETE is through: the session's end, or a stream the DELETE cut
            assert "has ended" in json.dumps(answer[2]) or answer[1:] == ("text/event-stream", None), answer
            assert time.monotonic() < deadline, "the idle connection was not closed in the SDK"
            time.sleep(0.05)
        assert server.fast_answered == 4
    for path in tmp_path.glob("*.jsonl"):
        assert "idle" in records(path)[-1]["reason"]


def test_a_connection_ends_with_its_delete_and_takes_its_bound_sessions(shop: Domain, tmp_path: Path) -> None:
    """A client's DELETE ends its connection: the sessions bound to it end ("session ended") and a
    call on it is no longer the fast path's."""
    server = DomainServer(shop, runs=tmp_path, error_backoff_ms=0)
    with serving(server) as url:
        raw = Raw(url, "?session=mine")
        raw.open()
        raw.call("get_customer", {"customer_id": "C-0001"})
        assert raw.call("get_customer", {"customer_id": "C-0001"})[0] == 200 and server.fast_answered == 1
        raw.conn.request("DELETE", raw.path, headers={"mcp-session-id": str(raw.sid)})
        assert raw.conn.getresponse().status == 200
        raw.conn.close()
        deadline = time.monotonic() + 10
        while server.sessions.live:
            assert time.monotonic() < deadline, "the session did not end with its connection"
            time.sleep(0.02)
        assert not server.sessions.handshakes and not server.sessions.bound
        assert raw.call("get_customer", {"customer_id": "C-0001"})[0] == 404
        assert server.fast_answered == 1
    (path,) = tmp_path.glob("*.jsonl")
    assert records(path)[-1]["reason"] == "session ended"
