"""One agent cannot hijack, lock out or lie to another: the server's hardening, each finding reproduced.

- an explicit session id is bound to the MCP session (or the handle) that opened it;
- Host and Origin are checked (DNS rebinding), request bodies have a size limit;
- one client cannot hold every session slot; capacity refusals carry the server's signed label;
- session ids are matched whole (no trailing newline into a file name);
- a transcript record that cannot be written rolls its call back (no lie after a commit).
"""

from __future__ import annotations

import asyncio
import http.client
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from fastmcp import Client
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from scoring import load_domain
from simulator import Domain
from simulator.errors import SessionError, StorageError
from simulator.serve.labels import read_label
from simulator.serve.server import DomainServer
from simulator.serve.sessions import check_session_id
from tests.conftest import FIXTURES
from tests.helpers import calls_of, records, text
from tests.test_server_e2e import SHOP, http_server

NOTE = {"customer_id": "C-0001", "notes": "x"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def post(url: str, body: dict[str, Any], **headers: str) -> int:
    """POST a JSON-RPC body with extra headers (Host included); the HTTP status."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    try:
        all_headers = {**HEADERS, "host": f"{parts.hostname}:{parts.port}", **headers}
        conn.request("POST", parts.path, body=json.dumps(body).encode(), headers=all_headers)
        return conn.getresponse().status
    finally:
        conn.close()


@pytest.fixture(scope="module")
def shop() -> Domain:
    return load_domain(FIXTURES / "shop")


def test_session_ids_are_matched_whole() -> None:
    assert check_session_id("abc") == "abc"
    for bad in ("abc\n", "abc\r\n", "\nabc", "a" * 129, "-abc", "a/b", ""):
        with pytest.raises(SessionError, match="Invalid session id"):
            check_session_id(bad)


def test_one_client_cannot_hold_every_slot_and_refusals_are_labelled(shop: Domain) -> None:
    server = DomainServer(shop, max_sessions=10, max_sessions_per_client=2)

    async def main() -> Any:
        async with Client(server.mcp, mode="legacy") as a, Client(server.mcp, mode="legacy") as b:
            for client in (a, b):
                assert not (await client.call_tool("set_note", NOTE)).is_error
            async with Client(server.mcp, mode="legacy") as c:
                return await c.call_tool("set_note", NOTE, raise_on_error=False)

    refused = asyncio.run(main())
    assert refused.is_error and "This client already holds 2 live sessions" in text(refused)
    label = read_label(text(refused))  # the server's word: scoring can tell it from a forgery
    assert label is not None and label.kind == "capacity" and label.verify(server.key, "set_note", NOTE)
    assert server.sessions.refused == 1 and not server.sessions.per_client  # all released


class _FailingSink:
    """A transcript sink whose disk fills up after the header."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def write(self, record: dict[str, Any]) -> None:
        if record["type"] == "call":
            raise OSError(28, "No space left on device")
        self.records.append(record)


def test_a_record_that_cannot_be_written_rolls_the_call_back(shop: Domain) -> None:
    sink = _FailingSink()
    with shop.episode(seed=0, transcript=sink) as ep:
        before = ep.digest()
        with pytest.raises(StorageError, match="could not be recorded"):
            ep.call("set_note", NOTE)
        assert ep.digest() == before  # the change did not stay
        assert ep.row("customers", "C-0001")["notes"] != "x"


def test_storage_failure_over_mcp_is_labelled_and_ends_the_session(
    shop: Domain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = DomainServer(shop, runs=tmp_path)

    async def main() -> tuple[Any, Any]:
        async with Client(server.mcp) as client:
            assert not (await client.call_tool("set_note", NOTE)).is_error
            (session,) = server.sessions.live.values()
            assert session.sink is not None

            def full(record: dict[str, Any]) -> None:
                raise OSError(28, "No space left on device")

            monkeypatch.setattr(session.sink.file, "write", full)
            failed = await client.call_tool("set_note", {**NOTE, "notes": "y"}, raise_on_error=False)
            late = await client.call_tool("set_note", NOTE, raise_on_error=False)
            return failed, late

    failed, late = asyncio.run(main())
    assert failed.is_error and "could not be recorded" in text(failed)
    label = read_label(text(failed))
    assert label is not None and label.kind == "storage"
    assert late.is_error and "storage failure" in text(late)
    (path,) = tmp_path.glob("*.jsonl")
    assert [c["arguments"]["notes"] for c in calls_of(path)] == ["x"]  # the failed call left no record


def test_http_sessions_cannot_be_taken_over_and_headers_are_checked(tmp_path: Path) -> None:
    runs = tmp_path / "runs"

    async def main(url: str) -> None:
        # a stateful client names its session: bound to its mcp-session-id
        async with streamable_http_client(f"{url}?session=victim") as (r, w), ClientSession(r, w) as owner:
            await owner.initialize()
            assert not (await owner.call_tool("set_note", NOTE)).is_error
            with pytest.raises(BaseException) as refused:  # another connection is refused at once
                async with (
                    streamable_http_client(f"{url}?session=victim") as (r2, w2),
                    ClientSession(r2, w2) as thief,
                ):
                    await thief.initialize()
                    await thief.call_tool("set_note", {**NOTE, "notes": "stolen"})
            assert "belongs to another connection" in repr(refused.value)
            mine = await owner.call_tool("get_customer", {"customer_id": "C-0001"})
            assert json.loads(text(mine))["notes"] == "x"

        # a bad seed is refused when connecting, not turned into a session whose calls all fail
        with pytest.raises(BaseException) as bad_seed:
            async with streamable_http_client(f"{url}?seed=abc") as (r3, w3), ClientSession(r3, w3) as s3:
                await s3.initialize()
                await s3.call_tool("get_customer", {"customer_id": "C-0001"})
        assert "the seed must be an integer" in repr(bad_seed.value)

        assert post(url, INIT) == 200
        assert post(url, INIT, origin="http://evil.example") == 403  # a page elsewhere
        assert post(url, INIT, host="evil.example") == 421  # DNS rebinding
        assert post(url, INIT, origin="http://localhost:3000") == 200
        huge = {**INIT, "params": {**INIT["params"], "pad": "x" * 2_000_000}}
        assert post(url, huge) == 413

    with http_server(SHOP, runs) as (url, _):
        asyncio.run(main(url))
    victim = records(runs / "victim.jsonl")
    assert [c["arguments"]["notes"] for c in victim if c["type"] == "call" and c["tool"] == "set_note"] == [
        "x"
    ]


def test_a_session_that_keeps_failing_is_slowed_and_its_results_are_unchanged(
    shop: Domain, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After 4 tool errors in a row a session's calls wait, doubling per error (at most 1 s); a
    success clears it; a client's new sessions start from the streak of its failing sessions."""
    import simulator.serve._servercalls as server_module

    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def recorded(delay: float) -> None:
        if 0 < delay <= 1.0:  # the back-off's waits (the idle reaper sleeps 30 s at a time)
            waits.append(delay)
            delay = 0
        await real_sleep(delay)

    monkeypatch.setattr(server_module.asyncio, "sleep", recorded)
    server = DomainServer(shop, error_backoff_ms=10)
    bad = {"customer_id": "C-nobody"}

    async def main() -> None:
        async with Client(server.mcp, mode="legacy") as client:
            results = [await client.call_tool("get_customer", bad, raise_on_error=False) for _ in range(7)]
            assert all(r.is_error and "C-nobody" in text(r) for r in results)  # the same answers
            assert waits == [0.01, 0.02, 0.04]  # calls 5, 6, 7
            async with Client(server.mcp, mode="legacy") as fresh:  # reconnecting: the streak stays
                waits.clear()
                assert not (await fresh.call_tool("get_customer", {"customer_id": "C-0001"})).is_error
                assert waits == [0.08]  # its first call waited; its success clears the client's streak
            waits.clear()
            assert not (await client.call_tool("get_customer", {"customer_id": "C-0001"})).is_error
            assert waits == [0.08]  # the session's own streak still counted
            await client.call_tool("get_customer", bad, raise_on_error=False)
            assert waits == [0.08]  # the success cleared it
        async with Client(server.mcp, mode="legacy") as later:
            waits.clear()
            await later.call_tool("get_customer", {"customer_id": "C-0001"})
            assert waits == []

    asyncio.run(main())
