"""Bounded episodes: what one agent's arguments can make a session hold, and whose error it is.

Free-text strings get a default `maxLength`; an episode's database has a size limit whose refusal
is the agent's tool error with the state unchanged; names the agent makes up are repeated bounded
in errors and transcripts; arguments nested 3,000 deep, or holding a lone surrogate, are the
agent's tool errors, recorded and replayable, and the session goes on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from scoring import load_domain
from simulator import Domain, ToolError
from simulator.codegen.fastschema import DEFAULT_MAX_LENGTH
from simulator.errors import ErrorKind, InfraError
from simulator.runtime._callargs import MAX_NESTING
from simulator.runtime.budget import Budget
from simulator.runtime.transcript import FileSink
from simulator.serve.labels import read_label
from simulator.serve.server import DomainServer
from tests.conftest import FIXTURES
from tests.helpers import calls_of, records, replay, text


@pytest.fixture(scope="module")
def shop() -> Domain:
    return load_domain(FIXTURES / "shop")


def nested(depth: int) -> list[Any]:
    """A list `depth` lists deep."""
    top: list[Any] = []
    inner = top
    for _ in range(depth - 1):
        inner.append([])
        inner = inner[0]
    return top


def test_free_text_arguments_have_a_default_max_length(shop: Domain) -> None:
    server = DomainServer(shop)

    async def main() -> tuple[Any, Any]:
        async with Client(server.mcp) as client:
            listed = {t.name: t.inputSchema for t in await client.list_tools()}
            long = await client.call_tool(
                "set_note", {"customer_id": "C-0001", "notes": "x" * 900_000}, raise_on_error=False
            )
            return listed, long

    listed, long = asyncio.run(main())
    assert listed["set_note"]["properties"]["notes"]["maxLength"] == DEFAULT_MAX_LENGTH  # agents see it
    assert long.is_error and "is too long" in text(long) and len(text(long)) < 2000


def test_an_episode_database_has_a_size_limit_that_is_the_agents_error(shop: Domain, tmp_path: Path) -> None:
    small = dataclasses.replace(shop, budget=Budget(growth_bytes=256 * 1024))
    sink = FileSink(tmp_path / "t.jsonl")
    with small.episode(transcript=sink) as ep:
        refused = None
        for i in range(200):
            args = {"name": f"n{i}", "email": f"{i}@example.com", "notes": "x" * 9_000}
            before = ep.digest()
            try:
                ep.call("add_customer", args)
            except ToolError as exc:
                refused = exc
                break
        assert refused is not None and not isinstance(refused, InfraError)
        assert "size limit" in str(refused) and refused.kind is ErrorKind.TOOL
        assert ep.digest() == before  # nothing of the refused write stayed
        assert ep.row("customers", "C-0001") is not None  # the session goes on: reads, small writes
        ep.call("set_note", {"customer_id": "C-0001", "notes": "y"})
        ep.end("done")  # the end record (the change log written past the limit) is the server's
    sink.close()
    last_call, end = calls_of(tmp_path / "t.jsonl")[-2], records(tmp_path / "t.jsonl")[-1]
    assert last_call["error_kind"] == "tool" and "size limit" in last_call["error"]
    assert end["type"] == "end" and end["digest"]
    assert Budget().growth_bytes == 16 * 2**20


def test_names_the_agent_makes_up_are_repeated_bounded(shop: Domain, tmp_path: Path) -> None:
    server = DomainServer(shop, runs=tmp_path)
    name = "n" * 900_000

    async def main() -> Any:
        async with Client(server.mcp) as client:
            return await client.call_tool(name, {"a": 1}, raise_on_error=False)

    unknown = asyncio.run(main())
    assert unknown.is_error and "Unknown tool" in text(unknown) and len(text(unknown)) < 2000
    server.sessions.release_all()
    (path,) = tmp_path.glob("*.jsonl")
    (call,) = calls_of(path)
    assert call["tool"].startswith("nnn") and len(call["tool"]) <= 130 and call["error_kind"] == "tool"
    assert path.stat().st_size < 20_000


def test_deeply_nested_arguments_are_a_tool_error_recorded_and_replayable(
    shop: Domain, tmp_path: Path
) -> None:
    server = DomainServer(shop, runs=tmp_path)
    deep = {"customer_id": "C-0001", "items": nested(3000)}  # (in process: no wire limits its depth)
    wire = {"customer_id": "C-0001", "items": nested(MAX_NESTING + 8)}  # (what an MCP client sends)

    async def main() -> list[Any]:
        refused = [await server.call("place_order", deep)]
        async with Client(server.mcp) as client:
            refused.append(await client.call_tool("place_order", wire, raise_on_error=False))
            refused.append(await client.call_tool("get_customer", {"customer_id": "C-0001"}))
        return refused

    *refused, after = asyncio.run(main())
    for result in refused:
        assert result.is_error and f"nested more than {MAX_NESTING} levels" in text(result)
        assert read_label(text(result)) is None  # the agent's error, not the server's
    assert not after.is_error and server.internal_errors == 0  # the session goes on
    server.sessions.release_all()
    for path in tmp_path.glob("*.jsonl"):
        first = calls_of(path)[0]
        assert first["error_kind"] == "tool" and not first["ok"]
        replay(shop, path)  # the record holds a writable copy of the arguments that fails the same way
    with shop.episode() as ep:
        for args in (deep, {"customer_id": "C-0001", "notes": nested(MAX_NESTING + 2)}):
            with pytest.raises(ToolError, match="nested more than"):
                ep.call("set_note", args)


def test_unencodable_text_is_the_agents_tool_error_and_the_session_goes_on(
    shop: Domain, tmp_path: Path
) -> None:
    server = DomainServer(shop, runs=tmp_path)
    bad = {"customer_id": "C-0001", "notes": "a\ud800b"}

    async def main() -> tuple[Any, Any]:
        async with Client(server.mcp) as client:
            refused = await client.call_tool("set_note", bad, raise_on_error=False)
            later = await client.call_tool("set_note", {"customer_id": "C-0001", "notes": "ok"})
            return refused, later

    refused, later = asyncio.run(main())
    assert refused.is_error and "not valid Unicode" in text(refused)
    assert read_label(text(refused)) is None  # no storage label: nothing of the server failed
    assert not later.is_error  # the session goes on
    server.sessions.release_all()
    (path,) = tmp_path.glob("*.jsonl")
    path.read_bytes().decode("utf-8")  # the transcript stays UTF-8
    calls = calls_of(path)
    assert [c["ok"] for c in calls] == [False, True] and calls[0]["error_kind"] == "tool"
    assert calls[0]["arguments"] == bad and records(path)[-1]["type"] == "end"
    replay(shop, path)
    with shop.episode() as ep:
        for args in (bad, {"customer_id": "C-0001\udfff"}):
            with pytest.raises(ToolError, match="not valid Unicode"):
                ep.call("get_customer" if "notes" not in args else "set_note", args)
        with pytest.raises(ToolError, match="not allowed"):  # an unknown argument's name, whatever it holds
            ep.call("get_customer", {"customer_id": "C-0001", "\ud800": 1})
        assert json.dumps(ep.export())  # nothing of them stayed
