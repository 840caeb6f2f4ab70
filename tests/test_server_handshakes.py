"""HTTP connections count from their first byte: handshakes are sessions, half-sent requests are closed.

A real server (uvicorn in this process, on a free 127.0.0.1 port; the deadlines with the
configuration `toolgym serve` gives uvicorn) and raw HTTP: handshakes that never call a tool take slots of `--max-sessions` and of the
per-client cap, and are refused past them; a handshake idle past `handshake_timeout` is closed and
a call on it gets the server's signed capacity label; the per-client cap is an eighth of the global
one on a non-loopback address; a half-sent request (headers or body) is closed after its deadline.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from typer.testing import CliRunner

import simulator.serve.server
from scoring import load_domain
from simulator import Domain
from simulator.serve.labels import read_label
from simulator.serve.server import DomainServer
from simulator.serve.serving import CONNECTION_MARGIN, connection_limit
from tests.conftest import FIXTURES
from tests.test_server_fastcall import Raw, serving
from toolgym.cli import app

pytestmark = pytest.mark.timeout(120)

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
READ = {"customer_id": "C-0001"}


@pytest.fixture(scope="module")
def shop() -> Domain:
    return load_domain(FIXTURES / "shop")


@contextlib.contextmanager
def serving_as_cli(server: DomainServer) -> Iterator[tuple[str, int]]:
    """`server` over HTTP as `toolgym serve` configures uvicorn, on a free port; (URL, port)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    uv = uvicorn.Server(server.uvicorn_config("127.0.0.1", port))
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not uv.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp", port
    finally:
        uv.should_exit = True
        thread.join(20)


def handshake(url: str) -> tuple[int, Any, Raw]:
    """A new connection's initialize: (status, JSON-RPC message, the connection)."""
    raw = Raw(url)
    status, _, message = raw.request("initialize", INIT)
    return status, message, raw


def delete(raw: Raw) -> int:
    assert raw.sid is not None
    raw.conn.request("DELETE", raw.path, headers={"mcp-session-id": raw.sid})
    response = raw.conn.getresponse()
    response.read()
    return response.status


def test_handshakes_take_slots_of_the_global_cap(shop: Domain) -> None:
    server = DomainServer(shop, max_sessions=3, error_backoff_ms=0)
    with serving(server) as url:
        opened = [Raw(url) for _ in range(3)]
        for raw in opened:
            raw.open()  # handshakes only: no tool call yet
        status, message, _ = handshake(url)
        assert status == 503 and "limit of 3 live sessions" in message["error"]["message"]
        # their first calls use their connections' slots
        for raw in opened:
            assert not raw.call("get_customer", READ)[2]["result"]["isError"]
        assert len(server.sessions.live) == 3 and server.sessions.in_use == 3
        assert handshake(url)[0] == 503
        # a session that ended leaves its connection holding the slot; the connection's end frees it
        assert not opened[0].call("submit_answer", {"answer": "done"})[2]["result"]["isError"]
        assert handshake(url)[0] == 503
        assert delete(opened[0]) == 200
        status, message, fresh = handshake(url)
        assert status == 200 and "result" in message
        assert server.sessions.in_use == 3 and server.sessions.refused == 3


def test_handshakes_take_slots_of_the_per_client_cap(shop: Domain) -> None:
    server = DomainServer(shop, max_sessions=10, max_sessions_per_client=2)
    with serving(server) as url:
        for _ in range(2):
            Raw(url).open()
        status, message, _ = handshake(url)
        assert status == 503 and "This client already holds 2 live sessions" in message["error"]["message"]
        assert server.sessions.per_client == {"127.0.0.1": 2}


def test_an_idle_handshake_is_closed_and_a_call_on_it_gets_a_signed_capacity_label(shop: Domain) -> None:
    server = DomainServer(shop, max_sessions=1, handshake_timeout=0.3)
    with serving(server) as url:
        server.sessions.handshake_timeout = None  # (no reap until the slot is shown taken)
        idle = Raw(url)
        idle.open()
        assert handshake(url)[0] == 503  # its slot is taken
        server.sessions.handshake_timeout = 0.3
        deadline = time.monotonic() + 15
        while (status := handshake(url)[0]) == 503 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status == 200  # the idle handshake was closed: its slot is free again
        status, _, message = idle.call("get_customer", READ)
        text = message["result"]["content"][0]["text"]
        assert status == 200 and message["result"]["isError"] and "no tool call within 0.3 s" in text
        label = read_label(text)  # the server's word: the agent did nothing wrong
        assert label is not None and label.kind == "capacity" and label.session == idle.sid
        assert label.verify(server.key, "get_customer", READ)
        assert idle.request("tools/list", {})[0] == 404  # the connection itself is gone


def test_the_per_client_cap_is_a_share_of_the_global_one_off_loopback(shop: Domain) -> None:
    for host, expected in (
        ("127.0.0.1", 64),
        ("::1", 64),
        ("localhost", 64),
        ("0.0.0.0", 8),
        ("10.1.2.3", 8),
    ):
        server = DomainServer(shop, max_sessions=64)
        server.uvicorn_config(host, 0)  # (nothing is bound)
        assert server.sessions.max_per_client == expected, host
    tiny = DomainServer(shop, max_sessions=5)
    tiny.uvicorn_config("0.0.0.0", 0)
    assert tiny.sessions.max_per_client == 1
    chosen = DomainServer(shop, max_sessions=64, max_sessions_per_client=50)
    chosen.uvicorn_config("0.0.0.0", 0)
    assert chosen.sessions.max_per_client == 50


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes `sock` within `seconds` (whatever it sends first)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def test_half_sent_requests_are_closed_after_their_deadlines(shop: Domain) -> None:
    server = DomainServer(shop, header_timeout=0.3, body_timeout=0.3)
    with serving_as_cli(server) as (url, port):
        host = f"Host: 127.0.0.1:{port}\r\n".encode()
        silent = socket.create_connection(("127.0.0.1", port))
        headers = socket.create_connection(("127.0.0.1", port))
        headers.sendall(b"POST /mcp HTTP/1.1\r\n" + host + b"Content-Type: appl")
        body = socket.create_connection(("127.0.0.1", port))
        body.sendall(
            b"POST /mcp HTTP/1.1\r\n" + host + b"Content-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nContent-Length: 200\r\n\r\n"
            b'{"jsonrpc": "2.0", "id": 1, "method": "initi'
        )
        try:
            for sock in (silent, headers, body):
                assert _closed_within(sock, 5.0)
        finally:
            for sock in (silent, headers, body):
                sock.close()
        # a prompt client is not touched by the deadlines; its idle connection stays kept alive
        raw = Raw(url)
        raw.open()
        time.sleep(0.6)
        assert not raw.call("get_customer", READ)[2]["result"]["isError"]
        assert server.sessions.in_use == 1  # the half-sent opening request held no slot


def test_the_serve_command_passes_the_new_limits_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    made = DomainServer.uvicorn_config

    def uvicorn_config(self: DomainServer, *args: Any) -> Any:
        seen.append(self.config)
        seen.append(made(self, *args))
        return seen[-1]

    async def serve(self: uvicorn.Server) -> None:
        return None

    monkeypatch.setattr(DomainServer, "uvicorn_config", uvicorn_config)
    monkeypatch.setattr(uvicorn.Server, "serve", serve)
    monkeypatch.setattr(simulator.serve.server, "settle_heap", lambda: None)  # (this process is pytest's)
    args = ["serve", "bank", "--transport", "http", "--port", "0", "--max-sessions", "16"]
    args += ["--handshake-timeout", "7", "--header-timeout", "2", "--body-timeout", "3"]
    result = CliRunner().invoke(app, [*args, "--max-connections", "20"])
    assert result.exit_code == 0, result.output
    config, served = seen
    assert (config.handshake_timeout, config.header_timeout, config.body_timeout) == (7, 2, 3)
    assert config.max_connections == 20
    assert served.http.__name__ == "DeadlineProtocol"  # uvicorn's httptools protocol with the deadlines
    assert (
        served.backlog == simulator.serve.server.BACKLOG
    )  # (connections past the cap: refused a batch at a time)
    seen.clear()
    assert CliRunner().invoke(app, args).exit_code == 0
    assert seen[0].max_connections is None  # the default: --max-sessions + CONNECTION_MARGIN
    assert connection_limit(seen[0]) == 16 + CONNECTION_MARGIN
