"""What keeps honest sessions served under siege (`benchmarks/siege.py` measures it), checked
without timing anything.

Each mechanism is checked by what it does and in which order: a mass reap closes connections a
batch at a time, and other tasks run between batches; an ended HTTP session is finished (digest,
end record, database) in a worker thread while the server answers others; a digest with pauses is
the same digest; opening requests reach the SDK one at a time, and one whose client left never
does; a refusal, an answer on a reaped connection, and a connection past the cap close their
connection while those within it go on; busy sessions make way for the others and no one else;
the SDK's traceback for a client that left mid-request is not logged.
"""

from __future__ import annotations

import asyncio
import http.client
import logging
import socket
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest
from starlette.requests import ClientDisconnect
from starlette.types import Message, Receive, Scope, Send

from scoring import load_domain
from simulator import Domain
from simulator.runtime.episode import Episode
from simulator.serve._handshakes import HandshakeGuard
from simulator.serve._httpguard import SDK_TRANSPORT_LOGGER, quiet_disconnects
from simulator.serve._turns import Turns
from simulator.serve.server import REAP_BATCH, DomainServer
from tests.conftest import FIXTURES
from tests.helpers import records
from tests.test_server_fastcall import Raw, serving
from tests.test_server_handshakes import serving_as_cli

pytestmark = pytest.mark.timeout(120)

READ = {"customer_id": "C-0001"}
INIT = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'


@pytest.fixture(scope="module")
def shop() -> Domain:
    return load_domain(FIXTURES / "shop")


# -- in process: the guard and the reaper in front of a stub SDK ----------------------------------


def opening(body: bytes = INIT) -> tuple[Scope, Receive]:
    """An opening request (no session id) and its `receive`."""
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "query_string": b"",
        "client": ("127.0.0.1", 5000),
        "headers": [(b"content-type", b"application/json"), (b"mcp-protocol-version", b"2025-11-25")],
    }
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return scope, receive


async def discard(message: Message) -> None:
    return None


class StubSdk:
    """The SDK's endpoint as the guard sees it: an opening request gets a session id, in order;
    a DELETE is counted. `hold` makes each opening request take a few turns of the loop."""

    def __init__(self, hold: int = 0):
        self.hold = hold
        self.inside = self.most = 0
        self.opened: list[int] = []
        self.deleted: list[bytes] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "DELETE":
            self.deleted.append(dict(scope["headers"])[b"mcp-session-id"])
            return
        self.inside += 1
        self.most = max(self.most, self.inside)
        for _ in range(self.hold):
            await asyncio.sleep(0)
        self.inside -= 1
        self.opened.append(len(self.opened))
        sid = f"sid-{len(self.opened)}".encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"mcp-session-id", sid)]})
        await send({"type": "http.response.body", "body": b"{}"})


def test_a_mass_reap_closes_connections_a_batch_at_a_time(shop: Domain) -> None:
    server = DomainServer(shop)
    sdk = StubSdk()
    guard = HandshakeGuard(sdk, server, "/mcp")

    async def main() -> int:
        await guard(*opening(), discard)  # (its scope is the one the reaper's DELETEs are built on)
        server.sessions.closing.extend(f"s:idle-{i}" for i in range(100))
        done_at: list[int] = []

        async def honest() -> None:  # a call needing three turns of the event loop
            for _ in range(3):
                await asyncio.sleep(0)
            done_at.append(len(sdk.deleted))

        await asyncio.gather(server.settle_reaped(), honest())
        return done_at[0]

    closed_before_the_honest_call_was_done = asyncio.run(main())
    assert closed_before_the_honest_call_was_done <= REAP_BATCH  # not all 100 in one go
    assert len(sdk.deleted) == 100 and not server.sessions.closing


def test_opening_requests_reach_the_sdk_one_at_a_time_in_arrival_order(shop: Domain) -> None:
    server = DomainServer(shop, max_sessions=10)
    sdk = StubSdk(hold=3)
    guard = HandshakeGuard(sdk, server, "/mcp")

    async def main() -> None:
        await asyncio.gather(*(guard(*opening(), discard) for _ in range(6)))

    asyncio.run(main())
    assert sdk.most == 1 and sdk.opened == list(range(6))
    assert len(server.sessions.handshakes) == 6  # each one established, holding its slot


def test_an_opening_request_whose_client_left_never_reaches_the_sdk(shop: Domain) -> None:
    server = DomainServer(shop)
    sdk = StubSdk()
    guard = HandshakeGuard(sdk, server, "/mcp")
    scope, _ = opening()

    async def gone() -> Message:
        return {"type": "http.disconnect"}

    asyncio.run(guard(scope, gone, discard))
    assert sdk.opened == [] and server.sessions.in_use == 0  # (its slot given back)


def test_a_paused_digest_is_the_same_digest(shop: Domain) -> None:
    episode = shop.episode(seed=0)
    for i in range(150):
        episode.call("add_customer", {"name": f"N{i}", "email": f"n{i}@x.org", "notes": "x" * 100})
    pauses: list[None] = []
    assert episode.digest(lambda: pauses.append(None)) == episode.digest() == episode.digest(None)
    assert len(pauses) == 150 // 64  # every 64 rows hashed
    episode.close()


# -- busy sessions make way ---------------------------------------------------------------------


def light() -> Any:
    return SimpleNamespace(answered=0.0, served=0.0, cost=0.0)


def busy(served: float = 0.0) -> Any:
    """A session whose previous answer, of a costly call, went out just now."""
    return SimpleNamespace(answered=time.monotonic(), served=served, cost=0.01)


def test_a_loop_of_cheap_calls_is_never_busy() -> None:
    turns = Turns(slots=1)
    release = asyncio.Event()
    entered: list[str] = []

    async def call(name: str, session: Any) -> None:
        async with turns.turn(session):
            entered.append(name)
            await release.wait()

    async def main() -> None:
        async with turns.turn(light()):  # another session is calling ...
            pass
        cheap = [SimpleNamespace(answered=time.monotonic(), served=0.0, cost=0.0002) for _ in range(3)]
        tasks = [asyncio.create_task(call(f"cheap {i}", s)) for i, s in enumerate(cheap)]
        tasks.append(asyncio.create_task(call("costly", busy())))
        tasks.append(asyncio.create_task(call("costly too", busy())))
        for _ in range(3):
            await asyncio.sleep(0)
        assert entered == ["cheap 0", "cheap 1", "cheap 2", "costly"]  # ... only costly loops wait
        release.set()
        await asyncio.gather(*tasks)

    asyncio.run(main())


def test_busy_sessions_wait_their_turn_while_others_call_and_the_others_never_wait() -> None:
    turns = Turns(slots=1)
    order: list[str] = []

    async def call(name: str, session: Any, release: asyncio.Event | None = None) -> None:
        async with turns.turn(session):
            order.append(name)
            if release is not None:
                await release.wait()

    async def main() -> None:
        async with turns.turn(light()):  # another session is calling: busy ones make way
            order.append("light")
        release = asyncio.Event()
        holder = asyncio.create_task(call("busy 1", busy(), release))
        await asyncio.sleep(0)
        late = asyncio.create_task(call("busy, served late", busy(served=time.monotonic())))
        early = asyncio.create_task(call("busy, served early", busy(served=1.0)))
        cancelled = asyncio.create_task(call("busy, cancelled", busy(served=0.5)))
        await asyncio.sleep(0)
        await call("light again", light())  # runs at once, the turn still held
        assert turns.waiting == 3
        cancelled.cancel()
        release.set()
        await asyncio.gather(holder, late, early, return_exceptions=True)

    asyncio.run(main())
    assert order == ["light", "busy 1", "light again", "busy, served early", "busy, served late"]
    assert turns.running == 0 and turns.waiting == 0


def test_busy_sessions_alone_never_wait() -> None:
    turns = Turns(slots=1)  # no call of another kind has arrived for `LIGHT_WINDOW_S`
    release = asyncio.Event()
    entered: list[int] = []

    async def call(i: int) -> None:
        async with turns.turn(busy()):
            entered.append(i)
            await release.wait()

    async def main() -> None:
        tasks = [asyncio.create_task(call(i)) for i in range(4)]
        for _ in range(3):
            await asyncio.sleep(0)
        assert sorted(entered) == [0, 1, 2, 3]  # all four running at once: nobody to make way for
        release.set()
        await asyncio.gather(*tasks)

    asyncio.run(main())


# -- over HTTP ------------------------------------------------------------------------------------


def _on_a_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def test_a_grown_session_ends_in_a_worker_thread_while_others_are_served(
    shop: Domain, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = DomainServer(shop, runs=tmp_path)
    entered, release = threading.Event(), threading.Event()
    on_loop: list[bool] = []
    end = Episode.end

    def slow_end(self: Episode, reason: str = "done", pause: Any = None) -> None:
        if not on_loop:  # (the first end: the grown session's)
            on_loop.append(_on_a_loop())
            entered.set()
            release.wait(30)
        end(self, reason, pause)

    monkeypatch.setattr(Episode, "end", slow_end)
    with serving(server) as url:
        grown, other = Raw(url), Raw(url)
        grown.open()
        other.open()
        for i in range(20):
            assert not grown.call("add_customer", {"name": f"N{i}", "email": f"e{i}", "notes": "x" * 500})[2][
                "result"
            ]["isError"]
        assert not other.call("get_customer", READ)[2]["result"]["isError"]
        ending = threading.Thread(target=_delete, args=(grown,))
        ending.start()
        try:
            assert entered.wait(20)  # its end is being written ...
            status, _, message = other.call("get_customer", READ)  # ... and another call is answered
            assert status == 200 and not message["result"]["isError"]
        finally:
            release.set()
            ending.join(20)
    assert on_loop == [False]  # never on the event loop's thread
    end_record = records(tmp_path / f"{grown.sid}.jsonl")[-1]
    assert end_record["type"] == "end" and end_record["calls"] == 20


def _delete(raw: Raw) -> None:
    raw.conn.request("DELETE", raw.path, headers={"mcp-session-id": raw.sid or ""})
    raw.conn.getresponse().read()


def _post(conn: http.client.HTTPConnection, body: bytes, sid: str | None = None) -> http.client.HTTPResponse:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if sid is not None:
        headers["mcp-session-id"] = sid
    conn.request("POST", "/mcp", body=body, headers=headers)
    response = conn.getresponse()
    response.read()
    return response


def test_refusals_and_answers_on_a_reaped_connection_close_the_connection(shop: Domain) -> None:
    server = DomainServer(shop, max_sessions=1, handshake_timeout=0.3)
    with serving(server) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        server.sessions.handshake_timeout = None  # (no reap until the slot is shown taken)
        idle = Raw(url)
        idle.open()
        refused = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        response = _post(refused, INIT)
        assert response.status == 503 and response.getheader("connection") == "close"
        server.sessions.handshake_timeout = 0.3
        assert refused.sock is None  # (http.client closed its end: the server said it closes)
        deadline = time.monotonic() + 15
        while server.sessions.in_use and time.monotonic() < deadline:  # the idle handshake is reaped
            time.sleep(0.05)
        assert server.sessions.in_use == 0
        call = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_customer","arguments":{"customer_id":"C-0001"}}}'
        response = _post(idle.conn, call, idle.sid)  # the capacity label, and the connection closed
        assert response.status == 200 and response.getheader("connection") == "close"
        response = _post(idle.conn, b'{"jsonrpc":"2.0","id":8,"method":"ping"}', idle.sid)
        assert response.status == 404 and response.getheader("connection") == "close"
        server.sessions.handshake_timeout = None  # (however slow the machine, fresh is not reaped)
        fresh = Raw(url)
        fresh.open()  # a live connection is kept open
        assert not fresh.call("get_customer", READ)[2]["result"]["isError"]
        assert fresh.conn.sock is not None


def _closed(sock: socket.socket) -> bytes:
    """What the server sends on `sock` before closing it (within 5 s)."""
    sock.settimeout(5)
    got = b""
    while chunk := sock.recv(4096):
        got += chunk
    return got


def test_a_connection_past_the_cap_is_answered_503_and_closed(shop: Domain) -> None:
    server = DomainServer(shop, max_connections=3)
    with serving_as_cli(server) as (url, port):
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        time.sleep(0.2)  # (the server has taken them: its three connections)
        extra = socket.create_connection(("127.0.0.1", port))
        try:
            answer = _closed(extra)
            assert answer.startswith(b"HTTP/1.1 503") and b"connection: close" in answer
            # the connections within the cap are served as before
            request = (
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\ncontent-type: application/json\r\n"
                b"accept: application/json, text/event-stream\r\ncontent-length: %d\r\n\r\n%s"
            ) % (port, len(INIT), INIT)
            held[0].sendall(request)
            held[0].settimeout(10)
            assert held[0].recv(4096).startswith(b"HTTP/1.1 200")
        finally:
            for sock in [*held, extra]:
                sock.close()


def test_the_sdk_traceback_of_a_client_that_left_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    quiet = quiet_disconnects()
    assert quiet_disconnects() is quiet  # installed once
    logger = logging.getLogger(SDK_TRANSPORT_LOGGER)
    try:
        raise ClientDisconnect()
    except ClientDisconnect:
        with caplog.at_level(logging.ERROR, logger=SDK_TRANSPORT_LOGGER):
            logger.exception("Error handling POST request")
    try:
        raise ValueError("something else")
    except ValueError:
        with caplog.at_level(logging.ERROR, logger=SDK_TRANSPORT_LOGGER):
            logger.exception("Error handling POST request")
    assert [r.exc_info[0] for r in caplog.records if r.exc_info] == [ValueError]
    assert quiet.dropped >= 1
