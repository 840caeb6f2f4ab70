"""Exactly once under retries (`simulator.serve.resends`): a resent call gets the first answer and runs once.

A write resent with the same `_meta["toolgym/call-id"]` — through fastmcp's in-memory client in
both protocol eras, the official client over HTTP (stateful and 2026-07-28), and raw HTTP posting
one request twice as a client does when an answer is lost — is carried out once: the state is
that of one call, the transcript holds one `call` record and `resend` records, and the resend's
answer is the first one. Without a key, only a stateful session's exact repeat (JSON-RPC id, tool
and arguments) is a resend; the same key for another call is a tool error; scoring a transcript
with resends gives what it gives without them.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp
import pytest
from fastmcp import Client
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from scoring import load_domain, load_transcript, parse_transcript, score_rollout
from scoring.validation.gold import replay_gold
from simulator import Domain
from simulator.serve.mcptools import HANDLE_META, ok_result
from simulator.serve.server import DomainServer
from tests.conftest import FIXTURES
from tests.helpers import calls_of, records, text
from tests.test_server_fastcall import MODERN, Raw, serving

pytestmark = pytest.mark.timeout(120)

CALL_ID_META = "toolgym/call-id"  # the documented wire name (`simulator.serve.resends.CALL_ID_META`)
KEEP_ANSWERS = 64
ORDER = {"customer_id": "C-0020", "items": [{"sku": "SKU-006", "quantity": 1}]}
READ = {"customer_id": "C-0001"}


@pytest.fixture(scope="module")
def shop() -> Domain:
    return load_domain(FIXTURES / "shop")


def one_order_digest(shop: Domain) -> str:
    """The state after one `place_order` (a second one would add another order)."""
    with shop.episode(seed=0) as episode:
        episode.call("place_order", ORDER)
        return episode.digest()


def resends(path: Path) -> list[dict[str, Any]]:
    return [r for r in records(path) if r["type"] == "resend"]


def final_digest(server: DomainServer, path: Path) -> str:
    """The session's state: its end record's digest, or its live episode's."""
    last = records(path)[-1]
    if last["type"] == "end":
        digest: str = last["digest"]
        return digest
    (session,) = [s for s in server.sessions.live.values() if s.transcript == path]
    return session.episode.digest()


@pytest.mark.parametrize("mode", ["legacy", MODERN])
def test_a_write_resent_with_its_key_runs_once_in_memory(shop: Domain, tmp_path: Path, mode: str) -> None:
    server = DomainServer(shop, runs=tmp_path, error_backoff_ms=0)

    async def main() -> list[Any]:
        async with Client(server.mcp, mode=mode) as client:
            meta = {CALL_ID_META: "order-1"}
            first = await client.call_tool_mcp("place_order", ORDER, meta=meta)
            again = await client.call_tool_mcp("place_order", ORDER, meta=meta)
            assert not first.is_error, text(first)
            read = await client.call_tool_mcp("get_customer", READ, meta={CALL_ID_META: "read-1"})
            assert not read.is_error
            # the last call ends the session: its answer, asked for again, is the same
            end = {CALL_ID_META: "end"}
            done = await client.call_tool_mcp("submit_answer", {"answer": "ordered"}, meta=end)
            assert not done.is_error, text(done)
            resent = await client.call_tool_mcp("submit_answer", {"answer": "ordered"}, meta=end)
            assert resent.model_dump() == done.model_dump()
            return [first, again]

    first, again = asyncio.run(main())
    assert again.model_dump() == first.model_dump()
    (path,) = tmp_path.glob("*.jsonl")
    assert [c["tool"] for c in calls_of(path)] == ["place_order", "get_customer"]
    (resend,) = resends(path)
    assert resend["of"] == 0 and resend["call_id"] == "order-1" and resend["outcome"] == "replayed"
    assert final_digest(server, path) == one_order_digest(shop)


def test_the_official_client_over_http_resends_run_once(shop: Domain, tmp_path: Path) -> None:
    """Stateful (`mcp-session-id`) and 2026-07-28 (`?session=` and the handle) official clients: the
    session's first call (the SDK path) and a later write (the fast path) each resent once."""
    server = DomainServer(shop, runs=tmp_path, error_backoff_ms=0)

    async def stateful(url: str) -> None:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            opening = {CALL_ID_META: "open"}
            first = await session.call_tool("get_customer", READ, meta=opening)
            assert (
                await session.call_tool("get_customer", READ, meta=opening)
            ).model_dump() == first.model_dump()
            meta = {CALL_ID_META: "order-http"}
            order = await session.call_tool("place_order", ORDER, meta=meta)
            assert not order.is_error, text(order)
            assert (
                await session.call_tool("place_order", ORDER, meta=meta)
            ).model_dump() == order.model_dump()

    async def stateless(url: str) -> None:
        async with mcp.Client(f"{url}?session=modern-1", mode=MODERN) as client:
            first = await client.call_tool("get_customer", READ, meta={CALL_ID_META: "open"})
            handle = {HANDLE_META: (first.meta or {})[HANDLE_META]}
            meta = {**handle, CALL_ID_META: "order-modern"}
            order = await client.call_tool("place_order", ORDER, meta=meta)
            assert not order.is_error, text(order)
            again = await client.call_tool("place_order", ORDER, meta=meta)
            assert again.model_dump() == order.model_dump()

    with serving(server) as url:
        asyncio.run(stateful(url))
        answered = server.fast_answered
        asyncio.run(stateless(url))
    assert answered >= 3 and server.fast_answered >= answered + 2  # resends took the fast path too
    modern = tmp_path / "modern-1.jsonl"
    (stateful_path,) = set(tmp_path.glob("*.jsonl")) - {modern}
    for path in (stateful_path, modern):
        assert [c["tool"] for c in calls_of(path)] == ["get_customer", "place_order"]
        assert final_digest(server, path) == one_order_digest(shop)
    assert [(r["of"], r["call_id"]) for r in resends(stateful_path)] == [(0, "open"), (1, "order-http")]
    assert [(r["of"], r["call_id"]) for r in resends(modern)] == [(1, "order-modern")]


def _post_twice(raw: Raw, body: dict[str, Any], **headers: str) -> Any:
    """The same request sent again, as a client does whose answer was lost: the same answer."""
    status, _, first = raw.post(body, **headers)
    again = raw.post(body, **headers)
    assert status == 200 and (again[0], again[2]) == (status, first), (first, again)
    return first


def test_the_same_request_sent_twice_over_raw_http_runs_once(shop: Domain, tmp_path: Path) -> None:
    server = DomainServer(shop, runs=tmp_path / "runs", error_backoff_ms=0)
    with serving(server) as url:
        raw = Raw(url)
        raw.open()

        def call(rid: int, tool: str, arguments: Any, meta: dict[str, Any] | None = None) -> dict[str, Any]:
            params: dict[str, Any] = {"name": tool, "arguments": arguments}
            if meta is not None:
                params["_meta"] = meta
            return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}

        _post_twice(raw, call(40, "get_customer", READ))  # the session's first call (the SDK path), keyless
        fast = server.fast_answered
        keyed = _post_twice(raw, call(41, "place_order", ORDER, {CALL_ID_META: "k-41"}))
        keyless = _post_twice(raw, call(42, "place_order", ORDER))  # same id, tool, arguments: a resend
        assert server.fast_answered == fast + 4
        # a new id for the same tool and arguments is a new call: it runs
        _, _, other = raw.post(call(43, "place_order", ORDER))
        assert other["result"]["structuredContent"] != keyless["result"]["structuredContent"]
        # the SDK path (a progress token keeps the request from the fast path) recognises them too
        sdk = _post_twice(raw, call(44, "place_order", ORDER, {"progressToken": 7}))
        assert server.fast_answered == fast + 5
        orders = {m["result"]["structuredContent"]["order_id"] for m in (keyed, keyless, other, sdk)}
        assert len(orders) == 4
        # the last call ends the session; its answer, lost and asked for again, is the same
        done = _post_twice(raw, call(45, "submit_answer", {"answer": "done"}, {CALL_ID_META: "end"}))
        assert not done["result"]["isError"]

        # the 2026-07-28 revision: every request its own connection, the handle and the key in `_meta`
        modern = Raw(url, "?session=modern-raw")
        envelope = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call"}
        _, _, opened = modern.post(
            call(1, "get_customer", READ, envelope), **headers, **{"mcp-name": "get_customer"}
        )
        handle = opened["result"]["_meta"][HANDLE_META]
        meta = {**envelope, HANDLE_META: handle, CALL_ID_META: "m-1"}
        before = server.fast_answered
        _post_twice(modern, call(1, "place_order", ORDER, meta), **headers, **{"mcp-name": "place_order"})
        assert server.fast_answered == before + 2
        # keyless: its ids restart, so the same id, tool and arguments are a new call
        plain = {**envelope, HANDLE_META: handle}
        _, _, a = modern.post(call(1, "place_order", ORDER, plain), **headers, **{"mcp-name": "place_order"})
        _, _, b = modern.post(call(1, "place_order", ORDER, plain), **headers, **{"mcp-name": "place_order"})
        assert a["result"]["structuredContent"] != b["result"]["structuredContent"]

    stateful = next(p for p in (tmp_path / "runs").glob("*.jsonl") if p.stem != "modern-raw")
    assert [c["tool"] for c in calls_of(stateful)] == ["get_customer", *["place_order"] * 4]
    assert [(r["of"], r["call_id"], r["request_id"]) for r in resends(stateful)] == [
        (0, None, "40"),
        (1, "k-41", "41"),
        (2, None, "42"),
        (4, None, "44"),
    ]  # (the resent submit_answer came after the end: answered, not recorded)
    assert records(stateful)[-1]["type"] == "end" and records(stateful)[-1]["calls"] == 5
    modern_path = tmp_path / "runs" / "modern-raw.jsonl"
    assert [c["tool"] for c in calls_of(modern_path)] == ["get_customer", *["place_order"] * 3]
    assert [r["call_id"] for r in resends(modern_path)] == ["m-1"]


def test_the_same_key_for_another_call_is_a_tool_error_and_runs_nothing(shop: Domain, tmp_path: Path) -> None:
    server = DomainServer(shop, runs=tmp_path, error_backoff_ms=0)

    async def main() -> None:
        async with Client(server.mcp, mode="legacy") as client:
            meta = {CALL_ID_META: "k"}
            assert not (await client.call_tool_mcp("place_order", ORDER, meta=meta)).is_error
            other = {"customer_id": "C-0001", "items": [{"sku": "SKU-002", "quantity": 3}]}
            for tool, arguments in (("place_order", other), ("get_customer", READ)):
                refused = await client.call_tool_mcp(tool, arguments, meta=meta)
                assert refused.is_error and "already used in this session for another call" in text(refused)
            bad = await client.call_tool_mcp("place_order", ORDER, meta={CALL_ID_META: 7})
            assert bad.is_error and CALL_ID_META in text(bad)

    asyncio.run(main())
    (path,) = tmp_path.glob("*.jsonl")
    assert [c["tool"] for c in calls_of(path)] == ["place_order"]
    assert [r["outcome"] for r in resends(path)] == ["conflict", "conflict"]
    assert final_digest(server, path) == one_order_digest(shop)


def test_a_session_keeps_a_bounded_memory_and_never_reruns_a_forgotten_answer(
    shop: Domain, tmp_path: Path
) -> None:
    server = DomainServer(shop, runs=tmp_path, error_backoff_ms=0)

    async def main() -> None:
        async with Client(server.mcp, mode="legacy") as client:
            assert not (await client.call_tool_mcp("place_order", ORDER, meta={CALL_ID_META: "w"})).is_error
            for k in range(KEEP_ANSWERS + 5):
                await client.call_tool_mcp("get_customer", READ, meta={CALL_ID_META: f"r{k}"})
            (session,) = server.sessions.live.values()
            assert len(session.calls.answered) == KEEP_ANSWERS
            late = await client.call_tool_mcp("place_order", ORDER, meta={CALL_ID_META: "w"})
            assert late.is_error and "no longer kept" in text(late) and "not run again" in text(late)

    asyncio.run(main())
    (path,) = tmp_path.glob("*.jsonl")
    assert [c["tool"] for c in calls_of(path)].count("place_order") == 1
    assert resends(path)[-1]["outcome"] == "expired"
    assert final_digest(server, path) == one_order_digest(shop)

    from simulator.serve.resends import ANSWER_CHARS, KEEP_KEYS, CallMemory
    from simulator.serve.resends import CALL_ID_META as WIRE_NAME

    assert WIRE_NAME == CALL_ID_META
    memory = CallMemory()
    for k in range(KEEP_KEYS + 100):
        memory.keep(f"k{k}", bytes(16), k, ok_result({"text": "x" * 9000, "k": k}))
    assert len(memory) == KEEP_KEYS and len(memory.answered) <= KEEP_ANSWERS
    assert memory.chars <= ANSWER_CHARS
    memory.trim(0)
    assert memory.chars == 0 and not memory.answered and len(memory) == KEEP_KEYS  # keys outlive answers
    by_id = CallMemory()  # calls named by their JSON-RPC id are kept only with their answers
    for k in range(KEEP_KEYS + 100):
        by_id.keep(f"r{k}", "digest", k, ok_result({"k": k}))
    assert len(by_id) == len(by_id.answered) == KEEP_ANSWERS


def _gold_run(bank: Domain, runs: Path, resend: bool) -> Path:
    """bank-007's gold calls and its answer through an in-memory client, each resent when `resend`."""
    task = bank.task("bank-007")
    with bank.episode(seed=task.seed) as episode:
        gold = [(o.name, o.arguments) for o in replay_gold(episode, task)]
    answer = "; ".join(str(f) for f in task.answer_facts)
    server = DomainServer(bank, runs=runs, task=task.id, error_backoff_ms=0)

    async def main() -> None:
        async with Client(server.mcp, mode="legacy") as client:
            for n, (tool, arguments) in enumerate([*gold, ("submit_answer", {"answer": answer})]):
                meta = {CALL_ID_META: f"gold-{n}"}
                first = await client.call_tool_mcp(tool, arguments, meta=meta)
                if resend:
                    assert (
                        await client.call_tool_mcp(tool, arguments, meta=meta)
                    ).model_dump() == first.model_dump()

    asyncio.run(main())
    (path,) = runs.glob("*.jsonl")
    return path


def test_scoring_a_transcript_with_resends_gives_the_same_reward(tmp_path: Path) -> None:
    bank = load_domain("bank")
    plain, resent = _gold_run(bank, tmp_path / "plain", False), _gold_run(bank, tmp_path / "resent", True)
    assert not resends(plain) and len(resends(resent)) == len(
        calls_of(resent)
    )  # (the resent answer: after the end)
    reports = [score_rollout(bank, load_transcript(p)) for p in (plain, resent)]
    assert reports[1].reward == reports[0].reward == 1.0, reports[1].explanation
    assert (reports[1].partial, reports[1].status) == (reports[0].partial, reports[0].status)
    assert len(load_transcript(resent).calls) == len(load_transcript(plain).calls)

    # an MCP JSON-RPC log with a resent request: the resend is not a call
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    params = {
        "name": "get_customer",
        "arguments": {"customer_id": "CUS-21f9ccba"},
        "_meta": {CALL_ID_META: "a"},
    }
    answer = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": "{}"}], "isError": False},
    }
    log = [
        {**call, "params": params},
        {**call, "id": 2, "params": params},  # the first answer lost: sent again
        {**answer, "id": 2},
        {"domain": "bank"},
    ]
    rollout = parse_transcript("\n".join(json.dumps(m) for m in [log[-1], *log[:-1]]), format="mcp")
    assert len(rollout.calls) == 1 and rollout.calls[0].outcome == "ok"
