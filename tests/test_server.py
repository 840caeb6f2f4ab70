"""The MCP server through fastmcp's in-memory client: tools, errors, sessions, faults, transcripts.

The end-to-end tests with the official `mcp` client in a subprocess are in test_server_e2e.py.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import json
import logging
import types
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client

from scoring import load_domain
from scoring.curation.metrics import collect
from scoring.tasks import Call, Task
from scoring.validation.gold import replay_gold
from simulator import Domain
from simulator.errors import INJECTED_FAULT, INTERNAL_ERROR, SessionError
from simulator.serve._serversessions import NO_SESSION
from simulator.serve.labels import call_fields, read_label, runs_key
from simulator.serve.mcptools import SUBMIT_ANSWER_SCHEMA, tool_annotations
from simulator.serve.server import NO_TASK, DomainServer
from simulator.serve.serving import ServeConfig, TaskCatalog, TaskView
from simulator.serve.sessions import check_session_id, resolve_task
from tests.conftest import FIXTURES
from tests.helpers import calls_of, records, replay, text
from toolgym.cli import app

BUNDLED = ("bank", "office", "logistics")


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def bank() -> Domain:
    return load_domain("bank")


# ---------------------------------------------------------------------------------------------
# tools


@pytest.mark.parametrize("name", [*BUNDLED, str(FIXTURES / "shop")])
def test_tools_are_exactly_the_domain_tools(name: str) -> None:
    domain = load_domain(name)
    server = DomainServer(domain)

    async def main() -> list[Any]:
        async with Client(server.mcp) as client:
            return await client.list_tools()

    *tools, answer = run(main())
    assert [t.name for t in tools] == [t.name for t in domain.tool_specs()]
    # plus the answer channel, one required string argument
    assert answer.name == "submit_answer" and answer.inputSchema["required"] == ["answer"]
    for tool, spec in zip(tools, domain.tool_specs(), strict=True):
        wire = tool.model_dump(by_alias=True, exclude_none=True)
        assert set(wire) == {"name", "description", "inputSchema", "annotations"}
        assert wire["description"] == spec.description
        assert wire["inputSchema"] == spec.input_schema  # verbatim: no dereferencing, no title
        hints = wire["annotations"]
        assert hints["readOnlyHint"] is (spec.kind == "read")
        assert hints["openWorldHint"] is False
        if spec.kind == "read":
            assert hints["destructiveHint"] is False and hints["idempotentHint"] is True


def test_destructive_hint_follows_the_operation(bank: Domain) -> None:
    tools = bank.tools
    assert tool_annotations(tools["remove_beneficiary"]).destructive_hint is True  # delete
    assert tool_annotations(tools["freeze_card"]).destructive_hint is True  # update
    assert tool_annotations(tools["add_beneficiary"]).destructive_hint is False  # create only
    assert tool_annotations(tools["get_customer"]).read_only_hint is True


def test_read_write_and_tool_errors(shop: Domain, tmp_path: Path) -> None:
    server = DomainServer(shop, runs=tmp_path)

    async def main() -> None:
        async with Client(server.mcp) as client:
            read = await client.call_tool("get_customer", {"customer_id": "C-0001"}, raise_on_error=False)
            assert not read.is_error and read.data["name"] == "Customer 1"
            write = await client.call_tool(
                "set_note", {"customer_id": "C-0001", "notes": "hello"}, raise_on_error=False
            )
            assert not write.is_error
            again = await client.call_tool("get_customer", {"customer_id": "C-0001"}, raise_on_error=False)
            assert again.data["notes"] == "hello"
            listed = await client.call_tool("search_products", {"query": "mug"}, raise_on_error=False)
            assert not listed.is_error and isinstance(json.loads(text(listed)), list)

            bad_args = await client.call_tool("get_customer", {"customer_id": 1}, raise_on_error=False)
            assert bad_args.is_error and "1 is not of type 'string'" in text(bad_args)
            missing = await client.call_tool("get_customer", {"customer_id": "C-404"}, raise_on_error=False)
            assert missing.is_error and text(missing) == "No customer C-404."
            unknown = await client.call_tool("drop_tables", {}, raise_on_error=False)
            assert unknown.is_error and "Unknown tool 'drop_tables'" in text(unknown)
            assert "get_customer" in text(unknown)  # the agent learns what exists
            cancel = await client.call_tool("cancel_order", {"order_id": "O-0001"}, raise_on_error=False)
            assert cancel.is_error and "only pending orders can be cancelled" in text(cancel)

    run(main())
    (path,) = tmp_path.glob("*.jsonl")
    kinds = [(c["tool"], c["ok"], c["error_kind"]) for c in calls_of(path)]
    assert kinds == [
        ("get_customer", True, None),
        ("set_note", True, None),
        ("get_customer", True, None),
        ("search_products", True, None),
        ("get_customer", False, "tool"),
        ("get_customer", False, "tool"),
        ("drop_tables", False, "tool"),
        ("cancel_order", False, "tool"),
    ]


def test_raise_on_error_gives_the_message(shop: Domain) -> None:
    from fastmcp.exceptions import ToolError as ClientToolError

    async def main() -> None:
        async with Client(DomainServer(shop).mcp) as client:
            with pytest.raises(ClientToolError, match=r"^No customer C-404\.$"):
                await client.call_tool("get_customer", {"customer_id": "C-404"})

    run(main())


# ---------------------------------------------------------------------------------------------
# sessions


def test_sessions_are_isolated(shop: Domain, tmp_path: Path) -> None:
    """Two handshake-era connections to one server: each its own episode and transcript."""
    server = DomainServer(shop, runs=tmp_path)

    async def main() -> None:
        async with Client(server.mcp, mode="legacy") as a, Client(server.mcp, mode="legacy") as b:
            await a.call_tool("set_note", {"customer_id": "C-0002", "notes": "from a"})
            await b.call_tool("set_note", {"customer_id": "C-0002", "notes": "from b"})
            seen_a = await a.call_tool("get_customer", {"customer_id": "C-0002"})
            seen_b = await b.call_tool("get_customer", {"customer_id": "C-0002"})
            assert (seen_a.data["notes"], seen_b.data["notes"]) == ("from a", "from b")
            assert len(server.sessions) == 2
        assert len(server.sessions) == 0  # released when the connections ended

    run(main())
    files = sorted(tmp_path.glob("*.jsonl"))
    assert len(files) == 2
    notes = sorted(calls_of(f)[0]["arguments"]["notes"] for f in files)
    assert notes == ["from a", "from b"]
    for f in files:
        assert records(f)[-1]["type"] == "end" and records(f)[-1]["reason"] == "session ended"


def test_modern_requests_share_the_process_episode(shop: Domain) -> None:
    """In memory / stdio in the 2026-07-28 era every request is a connection: one episode per server."""
    server = DomainServer(shop)

    async def main() -> None:
        async with Client(server.mcp) as client:
            await client.call_tool("set_note", {"customer_id": "C-0003", "notes": "kept"})
            seen = await client.call_tool("get_customer", {"customer_id": "C-0003"})
            assert seen.data["notes"] == "kept"
            assert list(server.sessions.live) == ["local"]

    run(main())
    assert len(server.sessions) == 0  # released with the server's lifespan


def test_session_limit_is_a_clear_error(shop: Domain) -> None:
    server = DomainServer(shop, max_sessions=1)

    async def main() -> None:
        async with Client(server.mcp, mode="legacy") as a, Client(server.mcp, mode="legacy") as b:
            assert not (await a.call_tool("get_customer", {"customer_id": "C-0001"})).is_error
            refused = await b.call_tool("get_customer", {"customer_id": "C-0001"}, raise_on_error=False)
            assert refused.is_error and "limit of 1 live sessions" in text(refused)
        async with Client(server.mcp, mode="legacy") as c:  # room again once `a` ended
            assert not (await c.call_tool("get_customer", {"customer_id": "C-0001"})).is_error

    run(main())
    assert server.sessions.refused == 1


def test_idle_sessions_are_reaped_and_not_restarted(shop: Domain, tmp_path: Path) -> None:
    server = DomainServer(shop, runs=tmp_path, idle_timeout=60)
    registry = server.sessions
    session = registry.open("q:abc", "abc", None, 0, transport="streamable-http")
    session.episode.call("set_note", {"customer_id": "C-0001", "notes": "x"})
    assert registry.reap(now=session.last_used + 30) == []
    assert registry.reap(now=session.last_used + 61) == ["q:abc"]
    with pytest.raises(SessionError, match="has ended"):
        registry.get("q:abc")
    end = records(tmp_path / "abc.jsonl")[-1]
    assert end["type"] == "end" and "idle" in end["reason"] and len(end["digest"]) == 64
    # the same name never starts afresh, not even after a restart: its transcript exists
    with pytest.raises(SessionError, match="was used before"):
        registry.open("q:abc2", "abc", None, 0)
    restarted = DomainServer(shop, runs=tmp_path).sessions
    with pytest.raises(SessionError, match="was used before"):
        restarted.open("q:abc", "abc", None, 0)
    assert [p.name for p in tmp_path.glob("*.jsonl")] == ["abc.jsonl"]
    registry.release_all()


def test_an_idle_connection_ends_with_its_sessions_and_a_request_in_flight_holds_it(
    shop: Domain, tmp_path: Path
) -> None:
    """The server's own idle expiry of HTTP connections (the SDK runs without one): a connection
    with no request in flight for `idle_timeout` ends, the sessions bound to it end with it, and
    it goes to `closing` (the server then closes it in the SDK); one with a request in flight, or
    a recent one, stays."""
    server = DomainServer(shop, runs=tmp_path, idle_timeout=60, handshake_timeout=None)
    registry = server.sessions
    registry.admit("p:0", "local")
    registry.established("p:0", "s:a")
    registry.admit("p:1", "local")
    registry.established("p:1", "s:b")
    a, b = registry.handshakes["s:a"], registry.handshakes["s:b"]
    rider = registry.open("s:a", "a", None, 0, transport="streamable-http", handshake="s:a", connection="s:a")
    rider.reapable = False  # (so that only the connection's end can end it)
    bound = registry.open("q:x", "x", None, 0, transport="streamable-http", connection="s:a")
    bound.reapable = False
    assert registry.bound == {"s:a": {"s:a", "q:x"}} and registry.in_use == 3  # the rider uses a's slot
    a.in_flight = 1  # a long request (an open GET stream, say) holds it
    now = max(a.active, b.active)
    assert registry.reap(now=now + 61) == [] and list(registry.handshakes) == ["s:a"]
    assert registry.closing == ["s:b"] and len(registry.live) == 2
    a.in_flight, a.active = 0, now + 30
    registry.reap(now=now + 61)
    assert "s:a" in registry.handshakes and len(registry.live) == 2  # its last request ended 31 s ago
    registry.reap(now=now + 91)
    assert registry.closing == ["s:b", "s:a"] and not registry.handshakes and not registry.live
    assert not registry.bound and registry.in_use == 0 and not registry.per_client
    for name in ("a", "x"):
        end = records(tmp_path / f"{name}.jsonl")[-1]
        assert end["type"] == "end" and end["reason"] == "session ended"
    with pytest.raises(SessionError, match=r"has ended \(session ended\)"):
        registry.get("q:x")


def test_task_and_seed_resolution(bank: Domain) -> None:
    task = bank.tasks[0]
    tasks = TaskCatalog(bank)
    view = TaskView.of(task)
    assert resolve_task(tasks, None, None) == (None, 0)
    assert resolve_task(tasks, task.id, "7") == (view, 7)
    assert resolve_task(tasks, None, None, default_task=view, default_seed=3) == (view, 3)
    with pytest.raises(SessionError, match="no task 'nope'"):
        resolve_task(tasks, "nope", None)
    with pytest.raises(SessionError, match="must be an integer"):
        resolve_task(tasks, None, "x")
    with pytest.raises(SessionError, match="Invalid session id"):
        check_session_id("../etc/passwd")


def test_instruction_resource_prompt_and_instructions(bank: Domain) -> None:
    task = bank.task("bank-007")
    server = DomainServer(bank, task=task.id)

    async def main() -> None:
        async with Client(server.mcp) as client:
            assert client.instructions is not None
            assert client.instructions.startswith(bank.policy.strip()[:50])
            assert task.instruction in client.instructions
            (resource,) = await client.read_resource("task://instruction")
            assert resource.text == task.instruction
            (policy,) = await client.read_resource("domain://policy")
            assert policy.text == bank.policy
            prompt = await client.get_prompt("task")
            assert prompt.messages[0].content.text == task.instruction

        async with Client(DomainServer(bank).mcp) as client:  # no task: policy only
            (resource,) = await client.read_resource("task://instruction")
            assert resource.text == NO_TASK
            assert "## Your task" not in (client.instructions or "")

    run(main())


# ---------------------------------------------------------------------------------------------
# faults, internal errors, transcripts


def r_args(i: int) -> dict[str, Any]:
    return {"customer_id": f"C-{1 + i % 20:04d}", "notes": f"n{i}"}


def test_fault_injection_is_seeded_labelled_and_harmless(shop: Domain, tmp_path: Path) -> None:
    server = DomainServer(shop, runs=tmp_path, fault_rate=0.3, fault_seed=5)

    async def main() -> int:
        failed = 0
        async with Client(server.mcp) as client:
            for i in range(60):
                r = await client.call_tool("set_note", r_args(i), raise_on_error=False)
                if r.is_error:
                    assert text(r).startswith(INJECTED_FAULT + " [toolgym-label kind=injected ")
                    label = read_label(text(r))
                    assert label is not None and label.verify(server.key, "set_note", r_args(i))
                    failed += 1
        return failed

    failed = run(main())
    assert 5 <= failed <= 35
    (path,) = tmp_path.glob("*.jsonl")
    calls = calls_of(path)
    assert sum(c["error_kind"] == "injected" for c in calls) == failed
    for c in calls:  # each injected fault is signed with the server's key, kept beside the transcripts
        if c["error_kind"] == "injected":
            fields = call_fields(path.stem, c["index"], c["tool"], c["arguments"], "injected")
            assert runs_key(tmp_path) == server.key and server.key.verify(fields, c["signature"])
        else:
            assert "signature" not in c
    assert records(path)[-1]["digest"] == replay(shop, path)  # faults changed nothing
    # the same session name, fault seed and server key give the same faults; the schedule depends
    # on the key (a secret), so a client cannot pick a name whose faults suit it
    other = DomainServer(shop, fault_rate=0.3, fault_seed=5).sessions
    s0 = other.open("q:t0", "twin-name", None, 0)
    seq0 = [other.inject_fault(s0) for _ in range(50)]
    other.release_all()
    registry = server.sessions
    s1 = registry.open("q:t1", "twin-name", None, 0)
    seq1 = [registry.inject_fault(s1) for _ in range(50)]
    registry.release_all()
    twin = DomainServer(shop, key=server.key, fault_rate=0.3, fault_seed=5).sessions
    s2 = twin.open("q:t2", "twin-name", None, 0)
    seq2 = [twin.inject_fault(s2) for _ in range(50)]
    twin.release_all()
    assert seq1 == seq2 and any(seq1) and not all(seq1)
    assert seq0 != seq1
    registry.release_all()


def test_unexpected_exceptions_are_the_agents_masked_logged_and_counted(
    shop: Domain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An exception no precise check caught, raised while running an operation on the agent's
    arguments, is the agent's tool error (never infrastructure), revealing nothing, logged."""
    domain = load_domain(FIXTURES / "shop")  # a private copy: its tool is patched below
    tool = domain.tools["get_customer"]

    def broken(rt: Any, args: dict[str, Any]) -> Any:
        raise RuntimeError("secret detail /srv/db.sqlite")

    monkeypatch.setattr(tool, "execute", broken)
    server = DomainServer(domain, runs=tmp_path)

    async def main() -> Any:
        async with Client(server.mcp) as client:
            return await client.call_tool("get_customer", {"customer_id": "C-0001"}, raise_on_error=False)

    with caplog.at_level(logging.WARNING, logger="toolgym.server"):
        result = run(main())
    assert result.is_error and text(result).startswith("get_customer could not run on these arguments")
    assert "secret" not in text(result) and "toolgym-label" not in text(result)
    assert server.unguarded_errors == 1 and server.internal_errors == 0
    assert any(r.exc_info for r in caplog.records)
    (path,) = tmp_path.glob("*.jsonl")
    (call,) = calls_of(path)
    assert call["error_kind"] == "tool" and "signature" not in call


def test_transcript_header_calls_and_end(shop: Domain, tmp_path: Path) -> None:
    server = DomainServer(shop, runs=tmp_path, seed=4)

    async def main() -> None:
        async with Client(server.mcp, mode="legacy") as client:
            await client.call_tool("add_customer", {"name": "N", "email": "n@example.com"})
            await client.call_tool("get_customer", {"customer_id": "nope"}, raise_on_error=False)

    run(main())
    (path,) = tmp_path.glob("*.jsonl")
    header, first, second, end = records(path)
    assert header["type"] == "header" and header["domain"] == "shop" and header["version"] == shop.version
    assert header["fingerprint"] == shop.fingerprint() and header["seed"] == 4 and header["task"] is None
    assert header["session"] == path.stem and header["transport"] == "memory" and header["started_at"]
    assert first["ok"] and first["result"]["customer_id"].startswith("C-")
    assert not second["ok"] and second["error_kind"] == "tool"
    assert end["type"] == "end" and end["ended_at"] and end["digest"] == replay(shop, path)


def test_stats_from_transcripts(shop: Domain, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    server = DomainServer(shop, runs=tmp_path, fault_rate=0.5, fault_seed=1)

    async def main() -> None:
        for _ in range(2):
            async with Client(server.mcp, mode="legacy") as client:
                for i in range(10):
                    await client.call_tool(
                        "get_customer", {"customer_id": f"C-{i:04d}"}, raise_on_error=False
                    )

    run(main())
    report = collect(tmp_path)
    assert len(report["sessions"]) == 2
    (dom,) = report["domains"]
    assert dom["domain"] == f"shop@{shop.version}" and dom["sessions"] == 2 and dom["calls"] == 20
    assert dom["injected"] == sum(s["injected"] for s in report["sessions"]) > 0
    all_calls = [c for f in tmp_path.glob("*.jsonl") for c in calls_of(f)]
    assert dom["errors"]["tool"] == sum(c["error_kind"] == "tool" for c in all_calls)
    assert dom["ok"] + sum(dom["errors"].values()) == 20
    assert dom["latency"]["p50_us"] <= dom["latency"]["p99_us"]
    result = CliRunner().invoke(app, ["stats", str(tmp_path), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["domains"][0]["calls"] == 20
    table = CliRunner().invoke(app, ["stats", str(tmp_path)])
    assert table.exit_code == 0 and "domains" in table.stdout and "sessions" in table.stdout
    assert CliRunner().invoke(app, ["serve", "--help"]).stdout.count("Example") == 1


def test_truncated_last_line_is_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"type": "header", "domain": "d", "version": "1.0.0", "seed": 0}\n'
        '{"type": "call", "index": 0, "tool": "t", "arguments": {}, "ok": true, "duration_us": 5}\n'
        '{"type": "call", "ind',
        encoding="utf-8",
    )
    (s,) = collect(tmp_path)["sessions"]
    assert s["calls"] == 1 and s["truncated"] is True


# ---------------------------------------------------------------------------------------------
# grading material stays out of reach


def _surface_texts(server: DomainServer, with_calls: bool = True) -> list[str]:
    """Everything the server can show an agent: instructions, server info, tools, resources,
    prompts, and (`with_calls`) the texts of every kind of error it produces."""

    async def main() -> list[str]:
        out: list[str] = []
        async with Client(server.mcp, mode="legacy") as client:  # legacy: the full initialize result
            out.append(client.instructions or "")
            assert client.initialize_result is not None
            out.append(json.dumps(client.initialize_result.model_dump(mode="json"), ensure_ascii=False))
            for tool in await client.list_tools():
                out.append(json.dumps(tool.model_dump(mode="json"), ensure_ascii=False))
                if with_calls:
                    bad = await client.call_tool(tool.name, {"__nope__": 1}, raise_on_error=False)
                    out.append(text(bad))
                    empty = await client.call_tool(tool.name, {}, raise_on_error=False)
                    if empty.is_error:
                        out.append(text(empty))
            out.append(text(await client.call_tool("nope", {}, raise_on_error=False)))
            for resource in await client.list_resources():
                out.append(json.dumps(resource.model_dump(mode="json"), ensure_ascii=False))
                out.extend(c.text for c in await client.read_resource(resource.uri))
            out.extend(json.dumps(t.model_dump(mode="json")) for t in await client.list_resource_templates())
            for prompt in await client.list_prompts():
                out.append(json.dumps(prompt.model_dump(mode="json"), ensure_ascii=False))
                got = await client.get_prompt(prompt.name)
                out.extend(m.content.text for m in got.messages)
        return out

    texts = run(main())
    try:
        resolve_task(server.tasks, "no-such-task", None)
    except SessionError as exc:
        texts.append(str(exc))
    texts += [NO_SESSION, INJECTED_FAULT, INTERNAL_ERROR, NO_TASK]
    return texts


def _scalars(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _scalars(v)]
    if isinstance(value, list):
        return [s for v in value for s in _scalars(v)]
    return [] if value is None or isinstance(value, bool) else [str(value)]


@functools.cache
def _domain(name: str) -> Domain:
    return load_domain(name)


def _reachable(root: object) -> list[object]:
    """Every object reachable from `root` through references, stopping at modules, classes and
    module namespaces (what code reaches through its globals is not held by the object)."""
    seen, out, todo = {id(root)}, [], [root]
    while todo:
        obj = todo.pop()
        out.append(obj)
        for ref in gc.get_referents(obj):
            if isinstance(ref, types.ModuleType | type) or (isinstance(ref, dict) and "__builtins__" in ref):
                continue
            if id(ref) not in seen:
                seen.add(id(ref))
                todo.append(ref)
    return out


def test_the_server_holds_task_views_never_gold(bank: Domain, tmp_path: Path) -> None:
    """Nothing reachable from a serving server (its sessions and episodes included) is a task with
    gold calls or answer facts: it holds `TaskView`s (id, instruction, seed) and a task-less domain."""
    task = bank.task("bank-007")
    server = DomainServer(bank, ServeConfig(task=task.id, runs=tmp_path))

    async def main() -> None:
        async with Client(server.mcp) as client:
            await client.call_tool(bank.tool_specs()[0].name, {}, raise_on_error=False)  # opens a session
            held = _reachable(server)
            assert not [o for o in held if isinstance(o, Task | Call)]
            assert any(isinstance(o, TaskView) and o.id == task.id for o in held)

    run(main())
    assert server.domain.tasks == [] and bank.tasks  # the caller's domain keeps its tasks
    assert server.domain.fingerprint() == bank.fingerprint()  # transcripts still name its version
    assert records(next(tmp_path.glob("*.jsonl")))[0]["task"] == task.id


@pytest.mark.parametrize("name", BUNDLED)
def test_no_grading_material_is_exposed(name: str) -> None:
    """For every task: nothing of any task's gold calls, answer facts, other instructions or
    expected state appears in anything the server exposes. Every tool's error texts are collected
    for every 8th task (they do not depend on the task; the rest of the surface does)."""
    domain = _domain(name)
    tools = json.dumps([t.model_dump(mode="json") for t in domain.tool_specs()] + [SUBMIT_ANSWER_SCHEMA])
    for i, task in enumerate(domain.tasks):
        surface = "\n".join(
            _surface_texts(DomainServer(domain, task=task, error_backoff_ms=0), with_calls=i % 8 == 0)
        )
        public = "\n".join([domain.policy, task.instruction, tools])  # what the agent may see anyway
        for word in ("answer_facts", "expect_error", "ignore_columns", '"calls"', "gold"):
            assert word not in surface
        for other in domain.tasks:
            if other.instruction not in public:
                assert other.instruction not in surface, f"the instruction of {other.id} is exposed"
            for call in other.calls:
                if call.arguments:
                    assert json.dumps(call.arguments) not in surface
                for value in _scalars(call.arguments):
                    if len(value) >= 4 and value not in public:
                        assert value not in surface, f"gold argument {value!r} of {other.id} is exposed"
            for fact in _scalars(other.answer_facts):
                if len(fact) >= 3 and fact not in public:
                    assert fact not in surface, f"answer fact {fact!r} of {other.id} is exposed"
        with domain.episode(seed=task.seed) as ep:
            replay_gold(ep, task)
            assert ep.digest() not in surface


def test_manifest_refuses_unvalidated_tasks(bank: Domain, tmp_path: Path) -> None:
    """The grading side reads the manifest (the domain must be the validated one); the server is
    told only which task ids it serves, and refuses the others."""
    from scoring.validation.manifest import Manifest
    from simulator import TaskError

    good, bad = bank.tasks[0].id, bank.tasks[1].id
    manifest = Manifest(domain=bank.ref, fingerprint=bank.fingerprint(), valid_tasks=[good])
    with pytest.raises(TaskError, match="did not pass validation"):
        manifest.check(bank, bad)
    stale = Manifest(domain=bank.ref, fingerprint="0.0.0-stale", valid_tasks=[good])
    with pytest.raises(TaskError, match="the domain changed since validation"):
        stale.check(bank, good)
    served = frozenset(manifest.valid_tasks)
    with pytest.raises(TaskError, match="serves only validated tasks"):
        DomainServer(bank, task=bad, runs=tmp_path, tasks=served)
    server = DomainServer(bank, ServeConfig(task=good, runs=tmp_path, tasks=served))  # a validated task
    assert list(server.tasks.views) == [good] and server.domain.tasks == []
    # an HTTP session asking for a task (?task=ID) goes through resolve_task
    assert resolve_task(server.tasks, good, None)[0].id == good
    with pytest.raises(TaskError, match="has no task 'nope'"):
        DomainServer(bank, tasks={good, "nope"})
    with pytest.raises(SessionError, match="serves only validated tasks"):
        resolve_task(server.tasks, bad, None)


def test_one_serve_configuration_object(shop: Domain, tmp_path: Path) -> None:
    """The options live in one ServeConfig: keyword options amend it, the session registry reads the
    same object, and a bad value is refused where the config is made."""
    base = ServeConfig(fault_rate=0.3, runs=tmp_path)
    server = DomainServer(shop, base, fault_seed=5, allow_hosts=["example.org"])
    assert server.config == ServeConfig(
        fault_rate=0.3, fault_seed=5, runs=tmp_path, allow_hosts=("example.org",)
    )
    assert server.sessions.config is server.config and server.sessions.fault_seed == 5
    assert DomainServer(shop, runs=str(tmp_path)).config.runs == tmp_path
    for bad in ({"max_sessions": 0}, {"max_sessions_per_client": 0}, {"fault_rate": 1.5}):
        with pytest.raises(ValueError):
            ServeConfig(**bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        DomainServer(shop, manifest=None)  # no option outside the config
