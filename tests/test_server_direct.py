"""The direct `tools/call` middleware (`simulator.serve._fastcall.DirectToolCalls`): fastmcp's answers, cheaper.

In memory (fastmcp's `Client(server)`), over stdio and for the HTTP requests the HTTP fast path
leaves to the SDK, a plain tool call skips fastmcp's tool lookup and run. The same calls go to a
server with it (`fast_calls`, the default) and one without: the answers must be the same wire
results (refusals worded the same: another connection's session, an ended session) and the
transcripts the same records. A call naming a fastmcp component version stays fastmcp's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from hypothesis import given
from hypothesis import strategies as st

from scoring import load_domain
from simulator import Domain
from simulator.runtime.episode import Episode
from simulator.serve.server import DomainServer
from tests.conftest import FIXTURES
from tests.helpers import calls_of, records, replay
from tests.test_server_fastcall import SCRIPT, Raw, serving

pytestmark = pytest.mark.timeout(120)

STRIP = ("duration_us", "at", "session", "signature")


@pytest.fixture(scope="module")
def shop() -> Domain:
    return load_domain(FIXTURES / "shop")


def wire(result: Any) -> dict[str, Any]:
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


def call_records(path: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in c.items() if k not in STRIP} for c in calls_of(path)]


async def script_answers(server: DomainServer, mode: str) -> list[dict[str, Any]]:
    async with Client(server.mcp, mode=mode) as client:
        return [wire(await client.call_tool_mcp(tool, arguments)) for tool, arguments in SCRIPT]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_in_memory_answers_and_transcripts_are_fastmcps(shop: Domain, tmp_path: Path, mode: str) -> None:
    direct = DomainServer(shop, runs=tmp_path / "direct", error_backoff_ms=0)
    plain = DomainServer(shop, runs=tmp_path / "plain", error_backoff_ms=0, fast_calls=False)
    mine, theirs = (asyncio.run(script_answers(s, mode)) for s in (direct, plain))
    assert mine == theirs
    assert [a.get("isError", False) for a in mine] == [
        False, False, True, True, False, False, False, True, False, True
    ]  # fmt: skip
    assert direct.direct is not None and direct.direct.answered == len(SCRIPT) and plain.direct is None
    (a,), (b,) = (tmp_path / "direct").glob("*.jsonl"), (tmp_path / "plain").glob("*.jsonl")
    assert call_records(a) == call_records(b) and len(call_records(a)) == len(SCRIPT) - 2
    assert records(a)[-1]["type"] == "end" and records(a)[-1]["reason"] == "answer submitted"


def test_unknown_tools_are_recorded_and_versions_go_to_fastmcp(shop: Domain, tmp_path: Path) -> None:
    server = DomainServer(shop, runs=tmp_path, error_backoff_ms=0)

    async def main() -> None:
        async with Client(server.mcp, mode="legacy") as client:
            await client.call_tool("get_customer", {"customer_id": "C-0001"})
            assert server.direct is not None and server.direct.answered == 1  # the opening call too
            unknown = await client.call_tool_mcp("no_such_tool", {"x": 1})
            assert unknown.isError and "no_such_tool" in json.dumps(wire(unknown))
            assert server.direct.answered == 2
            # a fastmcp component version is fastmcp's to resolve
            versioned = await client.call_tool_mcp(
                "get_customer", {"customer_id": "C-0001"}, meta={"fastmcp": {"version": "9"}}
            )
            assert server.direct.answered == 2
            assert (versioned.structuredContent or {}).get("customer_id") == "C-0001"

    asyncio.run(main())
    (path,) = tmp_path.glob("*.jsonl")
    assert [c["tool"] for c in calls_of(path)] == ["get_customer", "no_such_tool", "get_customer"]


def test_over_http_what_the_fast_path_leaves_is_answered_as_fastmcp_would(shop: Domain) -> None:
    """Over HTTP the direct handler gets what the HTTP fast path leaves to the SDK: a session's
    opening call, a call with `_meta`, a call on another connection's session (refused)."""
    answers = []
    for fast in (True, False):
        server = DomainServer(shop, error_backoff_ms=0, fast_calls=fast)
        with serving(server) as url:
            owner = Raw(url, "?session=mine")
            owner.open()
            opened = owner.call("get_customer", {"customer_id": "C-0001"})[2]
            intruder = Raw(url)
            intruder.open()
            intruder.path = "/mcp?session=mine"
            refused = intruder.call("get_customer", {"customer_id": "C-0001"})[2]
            params = {
                "name": "get_customer",
                "arguments": {"customer_id": "C-0001"},
                "_meta": {"progressToken": 7},
            }
            progress = owner.request("tools/call", params)[2]
        answers.append((opened, refused, progress))
        assert (server.direct.answered if server.direct is not None else 0) == (3 if fast else 0)
        assert server.fast_answered == 0
    assert answers[0] == answers[1]
    _, refused, progress = answers[0]
    assert refused["result"]["isError"] and "belongs to another connection" in json.dumps(refused)
    assert progress["result"]["structuredContent"]["customer_id"] == "C-0001"


CALLS = st.sampled_from(
    [
        ("get_customer", {"customer_id": "C-0001"}),
        ("get_customer", {"customer_id": "C-9999"}),
        ("set_note", {"customer_id": "C-0001", "notes": "a"}),
        ("set_note", {"customer_id": "C-0001", "notes": "b"}),
        ("set_note", {"customer_id": "C-0001"}),
        ("place_order", {"customer_id": "C-0001", "items": [{"sku": "SKU-001", "quantity": 1}]}),
        ("no_such_tool", {}),
    ]
)


@given(st.lists(st.tuples(st.integers(0, 2), CALLS), min_size=1, max_size=12))
def test_interleaved_sessions_stay_isolated_and_deterministic(
    shop: Domain, tmp_path_factory: pytest.TempPathFactory, script: list[tuple[int, tuple[str, Any]]]
) -> None:
    """Three in-memory connections interleaving calls: the same answers with and without the direct
    handler, and each transcript replays alone to its session's final state."""
    root = tmp_path_factory.mktemp("direct")

    async def run(server: DomainServer) -> tuple[list[dict[str, Any]], list[str]]:
        assert server.sessions.runs is not None
        async with contextlib.AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(Client(server.mcp, mode="legacy")) for _ in range(3)]
            answers = [wire(await clients[i].call_tool_mcp(tool, args)) for i, (tool, args) in script]
            digests = {s.name: s.episode.digest() for s in server.sessions.live.values()}
        return answers, [digests[p.stem] for p in sorted(server.sessions.runs.glob("*.jsonl"))]

    direct = DomainServer(shop, runs=root / "direct", error_backoff_ms=0)
    plain = DomainServer(shop, runs=root / "plain", error_backoff_ms=0, fast_calls=False)
    (mine, digests), (theirs, _) = asyncio.run(run(direct)), asyncio.run(run(plain))
    assert mine == theirs
    assert direct.direct is not None and direct.direct.answered == len(script)
    for path, digest in zip(sorted((root / "direct").glob("*.jsonl")), digests, strict=True):
        assert replay(shop, path) == digest


def test_a_bug_is_masked_as_fastmcp_masks_it(
    shop: Domain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An exception escaping the session logic (here: recording the answer) reaches no agent: both
    fast paths answer what fastmcp's masking answers, and the traceback is logged."""

    def broken(self: Any, text: str) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(Episode, "say", broken)
    call = ("get_customer", {"customer_id": "C-0001"})
    answer = ("submit_answer", {"answer": "done"})
    answers = []
    for fast in (True, False):
        server = DomainServer(shop, runs=tmp_path / str(fast), error_backoff_ms=0, fast_calls=fast)

        async def main(server: DomainServer = server) -> dict[str, Any]:
            async with Client(server.mcp, mode="legacy") as client:
                await client.call_tool_mcp(*call)
                return wire(await client.call_tool_mcp(*answer))

        answers.append(asyncio.run(main()))
        with serving(server) as url:  # over HTTP: the session's second call takes the HTTP fast path
            raw = Raw(url)
            raw.open()
            raw.call(*call)
            answers.append(raw.call(*answer)[2]["result"])
    assert answers[0] == answers[2] and answers[1] == answers[3]
    masked = [{"type": "text", "text": "Error calling tool 'submit_answer'"}]
    assert all(a["content"] == masked and a["isError"] for a in answers)
    assert "secret internals" not in json.dumps(answers) and "secret internals" in caplog.text
