"""End to end: `toolgym serve` in a subprocess, driven by the official `mcp` SDK client.

Over stdio and over streamable HTTP (on a free 127.0.0.1 port): list tools, call reads and
writes, receive tool errors, read the instruction; 32 concurrent HTTP sessions each replay alone
to their own final digest; a server killed with SIGKILL keeps every completed call.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from scoring import load_domain
from simulator.errors import INJECTED_FAULT
from simulator.serve._serversessions import NO_SESSION
from simulator.serve.labels import read_label, runs_key
from simulator.serve.mcptools import HANDLE_META
from tests.conftest import FIXTURES
from tests.helpers import calls_of, records, replay, text

ROOT = Path(__file__).resolve().parent.parent
SERVE = ["-c", "from toolgym.cli import main; main()", "serve"]
ENV = {
    **os.environ,
    "PYTHONPATH": str(ROOT),
    "FASTMCP_CHECK_FOR_UPDATES": "off",
    "FASTMCP_ENABLE_RICH_TRACEBACKS": "false",
}
SHOP = str(FIXTURES / "shop")

pytestmark = pytest.mark.timeout(120)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def http_server(domain: str, runs: Path, *extra: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`toolgym serve DOMAIN --transport http` on a free 127.0.0.1 port; stopped on exit."""
    port = free_port()
    log = (runs.parent / f"server-{port}.log").open("wb")
    args = [sys.executable, *SERVE, domain, "--transport", "http", "--port", str(port), "--runs", str(runs)]
    proc = subprocess.Popen([*args, *extra], cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (runs.parent / f"server-{port}.log").read_text()
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        stop(proc)
        log.close()


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_for_ends(runs: Path, count: int, timeout: float = 15.0) -> list[Path]:
    """The transcripts in `runs` once `count` of them have their end record."""
    deadline = time.monotonic() + timeout
    while True:
        done = [p for p in sorted(runs.glob("*.jsonl")) if records(p) and records(p)[-1]["type"] == "end"]
        if len(done) >= count or time.monotonic() > deadline:
            return done
        time.sleep(0.05)


# ---------------------------------------------------------------------------------------------
# a scripted agent for bank-007 ("freeze my Visa ending 8852")


async def solve_bank_007(session: Any, instruction: str) -> None:
    """Find the customer, the card, freeze it; check a tool error on the way."""
    assert "8852" in instruction
    found = await session.call_tool("find_customers", {"email": "yuki.tanaka@example.com"})
    assert not found.is_error
    (customer,) = json.loads(text(found))
    cid = customer["customer_id"]
    cards = await session.call_tool("list_cards", {"customer_id": cid, "last4": "8852"})
    (card,) = json.loads(text(cards))
    assert card["status"] == "active"
    frozen = await session.call_tool(
        "freeze_card", {"customer_id": cid, "card_id": card["card_id"], "reason": "customer_request"}
    )
    assert not frozen.is_error, text(frozen)
    again = await session.call_tool("list_cards", {"customer_id": cid, "last4": "8852"})
    assert json.loads(text(again))[0]["status"] == "frozen"
    bad = await session.call_tool("get_customer", {"customer_id": "CUS-nobody"})
    assert bad.is_error and "CUS-nobody" in text(bad)
    invalid = await session.call_tool("freeze_card", {"card_id": 5})
    assert invalid.is_error and "Invalid arguments for freeze_card" in text(invalid)


def test_stdio_with_the_official_client(tmp_path: Path) -> None:
    bank = load_domain("bank")
    task = bank.task("bank-007")
    runs = tmp_path / "runs"

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=[*SERVE, "bank", "--task", task.id, "--runs", str(runs)],
            env=ENV,
            cwd=str(ROOT),
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
            assert init.instructions is not None and task.instruction in init.instructions
            tools = await session.list_tools()
            assert [t.name for t in tools.tools] == [t.name for t in bank.tool_specs()] + ["submit_answer"]
            resource = await session.read_resource("task://instruction")
            assert getattr(resource.contents[0], "text", None) == task.instruction
            prompt = await session.get_prompt("task")
            assert getattr(prompt.messages[0].content, "text", None) == task.instruction
            await solve_bank_007(session, task.instruction)

        # the high-level client negotiates the stateless era over stdio: one episode per process
        async with mcp.Client(params) as client:
            assert client.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS
            await solve_bank_007(client, task.instruction)

    asyncio.run(main())
    files = wait_for_ends(runs, 2)
    assert len(files) == 2
    for path in files:
        header = records(path)[0]
        assert (header["domain"], header["task"], header["transport"]) == ("bank", task.id, "stdio")
        assert [c["tool"] for c in calls_of(path)][:3] == ["find_customers", "list_cards", "freeze_card"]


def test_http_with_the_official_clients(tmp_path: Path) -> None:
    bank = load_domain("bank")
    task = bank.task("bank-007")
    runs = tmp_path / "runs"

    async def main(url: str) -> None:
        # 1. ClientSession + initialize: keyed by the mcp-session-id; the task from the URL
        async with (
            streamable_http_client(f"{url}?task={task.id}") as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            assert init.instructions is not None and task.instruction in init.instructions
            assert init.instructions.startswith(bank.policy.strip()[:40])
            tools = await session.list_tools()
            wire = {t.name: t for t in tools.tools}
            assert set(wire) == {*bank.tools, "submit_answer"}
            write_hints, read_hints = wire["freeze_card"].annotations, wire["get_customer"].annotations
            assert write_hints is not None and write_hints.destructive_hint is True
            assert write_hints.read_only_hint is False
            assert read_hints is not None and read_hints.read_only_hint is True
            resource = await session.read_resource("task://instruction")
            assert getattr(resource.contents[0], "text", None) == task.instruction
            await solve_bank_007(session, task.instruction)

        # 2. a plain high-level client that passes nothing: steered into the handshake era, so
        #    its whole connection is one episode (the write is seen by the next call)
        async with mcp.Client(f"{url}?task={task.id}") as client:
            assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
            await solve_bank_007(client, task.instruction)

        # 3. the stateless 2026-07-28 era with an explicit session id in the URL: the first result
        #    carries the episode handle the client passes back; without it, no one else gets in
        modern = f"{url}?session=modern-1&task={task.id}&seed=3"
        async with mcp.Client(modern) as client:
            assert client.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS
            first = await client.call_tool("get_customer", {"customer_id": "CUS-21f9ccba"})
            handle = (first.meta or {})["toolgym/handle"]
            assert len(handle) >= 20
            hijack = await client.call_tool("get_customer", {"customer_id": "CUS-21f9ccba"})
            assert hijack.is_error and "belongs to another connection" in text(hijack)
            with pytest.raises(BaseException) as denied:
                await client.read_resource("task://instruction")  # not even its instruction
            assert "belongs to another connection" in repr(denied.value)
        async with mcp.Client(f"{modern}&handle={handle}") as client:
            await solve_bank_007(client, task.instruction)
            instruction = await client.read_resource("task://instruction")
            assert getattr(instruction.contents[0], "text", None) == task.instruction
        with pytest.raises(BaseException) as refused_task:  # a session's task is fixed
            async with mcp.Client(f"{url}?session=modern-1&task=bank-001&handle={handle}") as client:
                await client.call_tool("get_customer", {"customer_id": "CUS-21f9ccba"})
        assert "is working on task" in repr(refused_task.value)

        # 4. isolation: a freeze in one live session is not seen by another
        async with (
            streamable_http_client(url) as (r1, w1),
            ClientSession(r1, w1) as one,
            streamable_http_client(url) as (r2, w2),
            ClientSession(r2, w2) as two,
        ):
            await one.initialize()
            await two.initialize()
            args = {"customer_id": "CUS-21f9ccba", "last4": "8852"}
            (card,) = json.loads(text(await one.call_tool("list_cards", args)))
            freeze = {"customer_id": "CUS-21f9ccba", "card_id": card["card_id"], "reason": "customer_request"}
            assert not (await one.call_tool("freeze_card", freeze)).is_error
            assert json.loads(text(await one.call_tool("list_cards", args)))[0]["status"] == "frozen"
            assert json.loads(text(await two.call_tool("list_cards", args)))[0]["status"] == "active"

        # 5. an unknown task is refused when connecting, with a clear message
        with pytest.raises(BaseException) as refused:
            async with mcp.Client(f"{url}?task=no-such-task"):
                pass
        assert "no task 'no-such-task'" in repr(refused.value)

        # 6. a client pinned to the stateless era without a session id is told how to connect
        async with mcp.Client(url, mode="2026-07-28") as pinned:
            result = await pinned.call_tool("get_customer", {"customer_id": "CUS-21f9ccba"})
            assert result.is_error and text(result) == NO_SESSION

    with http_server("bank", runs) as (url, proc):
        asyncio.run(main(url))
        # the handshake-era sessions ended with their connections (HTTP DELETE)
        assert len(wait_for_ends(runs, 4)) >= 4
    files = {p.stem: p for p in wait_for_ends(runs, 5)}
    assert len(files) == 5
    modern = records(files["modern-1"])
    assert modern[0]["seed"] == 3 and modern[0]["task"] == task.id
    assert modern[-1]["reason"] == "server stopped"


class Pinned:
    """An official client on the 2026-07-28 revision (no handshake, no mcp-session-id) that keeps
    one episode for its whole rollout: `?session=` in the URL, and the episode handle of its first
    result passed back in every later request's `_meta`, as that revision carries state."""

    def __init__(self, client: Any):
        self.client = client
        self.handle: str | None = None

    def _meta(self) -> dict[str, Any] | None:
        return {HANDLE_META: self.handle} if self.handle is not None else None

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        result = await self.client.call_tool(name, arguments, meta=self._meta())
        if self.handle is None:
            self.handle = (result.meta or {})[HANDLE_META]
        return result

    async def read_resource(self, uri: str) -> Any:
        return await self.client.read_resource(uri, meta=self._meta())


def test_one_episode_per_rollout_in_both_protocol_modes_scored_alike(tmp_path: Path) -> None:
    """The same agent over the stateful (handshake) mode and over the newest revision: each keeps
    one episode for its whole rollout, and both transcripts score as `toolgym score` scores them."""
    from scoring import load_transcript, score_rollout

    bank = load_domain("bank")
    task = bank.task("bank-007")
    runs = tmp_path / "runs"
    answer = {"answer": "Your Visa card ending 8852 is now frozen."}

    async def main(url: str) -> None:
        async with mcp.Client(f"{url}?task={task.id}", mode="legacy") as stateful:
            await solve_bank_007(stateful, task.instruction)
            assert not (await stateful.call_tool("submit_answer", answer)).is_error
        async with mcp.Client(f"{url}?session=rollout-1&task={task.id}", mode="2026-07-28") as client:
            assert client.protocol_version == "2026-07-28"
            pinned = Pinned(client)
            await solve_bank_007(pinned, task.instruction)  # one Client object, one episode
            instruction = await pinned.read_resource("task://instruction")
            assert getattr(instruction.contents[0], "text", None) == task.instruction
            # another client naming the same session without the handle gets nothing of it
            async with mcp.Client(f"{url}?session=rollout-1", mode="2026-07-28") as other:
                stolen = await other.call_tool("get_customer", {"customer_id": "CUS-21f9ccba"})
                assert stolen.is_error and "belongs to another connection" in text(stolen)
                forged = await other.call_tool(
                    "get_customer", {"customer_id": "CUS-21f9ccba"}, meta={HANDLE_META: "x" * 24}
                )
                assert forged.is_error and "belongs to another connection" in text(forged)
            assert not (await pinned.call_tool("submit_answer", answer)).is_error

    with http_server("bank", runs) as (url, _):
        asyncio.run(main(url))
        files = wait_for_ends(runs, 2)
    assert len(files) == 2
    modern = runs / "rollout-1.jsonl"
    (stateful,) = [p for p in files if p != modern]
    # every call in one transcript each (solve_bank_007 saw its own freeze: one episode throughout)
    tools = [[c["tool"] for c in calls_of(path)] for path in (stateful, modern)]
    assert tools[0] == tools[1] and len(tools[0]) == 6
    for path in (stateful, modern):
        report = score_rollout(bank, load_transcript(path))
        assert report.reward == 1.0, report.explanation


# ---------------------------------------------------------------------------------------------
# 32 concurrent sessions, each replayed alone


def random_writes(rng: random.Random, tag: str, n: int) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for k in range(n):
        pick = rng.random()
        customer = f"C-{rng.randint(1, 22):04d}"  # 21 and 22 do not exist
        if pick < 0.3:
            items = [{"sku": f"SKU-{rng.randint(1, 32):03d}", "quantity": rng.randint(1, 3)}]
            out.append(("place_order", {"customer_id": customer, "items": items}))
        elif pick < 0.5:
            out.append(("cancel_order", {"order_id": f"O-{rng.randint(1, 10):04d}"}))
        elif pick < 0.75:
            out.append(("set_note", {"customer_id": customer, "notes": f"{tag}-{k}"}))
        else:
            email = f"{rng.choice(['a', 'b', 'c'])}@{tag}.example"  # duplicates fail: unique email
            out.append(("add_customer", {"name": f"{tag} {k}", "email": email}))
    return out


def test_32_concurrent_sessions_replay_to_their_own_digest(tmp_path: Path) -> None:
    shop = load_domain(SHOP)
    runs = tmp_path / "runs"
    n_sessions, n_calls = 32, 24

    async def session_run(url: str, i: int) -> list[tuple[str, dict[str, Any], bool, str]]:
        rng = random.Random(i)
        plan = random_writes(rng, f"s{i}", n_calls)
        seen: list[tuple[str, dict[str, Any], bool, str]] = []

        async def go(client: Any) -> None:
            for tool, args in plan:
                await asyncio.sleep(rng.random() * 0.003)  # interleave with the other sessions
                result = await client.call_tool(tool, args)
                seen.append((tool, args, result.is_error, text(result)))

        if i % 2:  # odd: handshake era, keyed by mcp-session-id
            async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                await go(session)
        else:  # even: stateless era, keyed by ?session= and the handle of its first result, own seed
            async with mcp.Client(f"{url}?session=s{i}&seed={i}") as client:
                tool, args = plan[0]
                result = await client.call_tool(tool, args)
                seen.append((tool, args, result.is_error, text(result)))
                handle = (result.meta or {})["toolgym/handle"]
            plan = plan[1:]
            async with mcp.Client(f"{url}?session=s{i}&seed={i}&handle={handle}") as client:
                await go(client)
        return seen

    async def main(url: str) -> list[list[tuple[str, dict[str, Any], bool, str]]]:
        return await asyncio.gather(*(session_run(url, i) for i in range(n_sessions)))

    with http_server(SHOP, runs, "--fault-rate", "0.1", "--fault-seed", "7") as (url, proc):
        seen_by_client = asyncio.run(main(url))
    files = wait_for_ends(runs, n_sessions)  # the server stopped: every session has ended
    assert len(files) == n_sessions

    by_plan = {json.dumps([(t, a) for t, a, _, _ in seen]): seen for seen in seen_by_client}
    assert len(by_plan) == n_sessions
    injected = 0
    for path in files:
        calls = calls_of(path)
        seen = by_plan.pop(json.dumps([(c["tool"], c["arguments"]) for c in calls]))  # exactly one client
        for call, (_, _, is_error, shown) in zip(calls, seen, strict=True):
            assert is_error == (not call["ok"])
            if call["ok"]:
                assert json.loads(shown) == call["result"]
            else:
                if call["error_kind"] == "injected":  # the fault text and the server's label, verifiable
                    assert shown.startswith(INJECTED_FAULT + " [toolgym-label kind=injected")
                    label = read_label(shown)
                    assert label is not None and label.verify(runs_key(runs), call["tool"], call["arguments"])
                else:
                    assert shown == call["error"]
            injected += call["error_kind"] == "injected"
        assert replay(shop, path) == records(path)[-1]["digest"]
    assert not by_plan
    assert 0 < injected < n_sessions * n_calls / 4


# ---------------------------------------------------------------------------------------------
# SIGKILL loses no completed call


def test_sigkill_keeps_every_completed_call(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    completed: list[tuple[str, dict[str, Any]]] = []

    async def client_loop(url: str) -> None:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for k in range(10_000):
                args = {"customer_id": f"C-{1 + k % 20:04d}", "notes": f"note {k}"}
                result = await session.call_tool("set_note", args)
                assert not result.is_error
                completed.append(("set_note", args))

    async def main(url: str, proc: subprocess.Popen[bytes]) -> None:
        task = asyncio.create_task(client_loop(url))
        while len(completed) < 40:
            await asyncio.sleep(0.005)
            assert not task.done(), task
        proc.send_signal(signal.SIGKILL)  # mid-run: a call is likely in flight
        proc.wait()
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(task, timeout=5)

    with http_server(SHOP, runs) as (url, proc):
        asyncio.run(main(url, proc))
        assert proc.returncode == -signal.SIGKILL
    (path,) = runs.glob("*.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    calls = [json.loads(line) for line in lines[1:]]  # every line is whole JSON
    assert all(c["type"] == "call" for c in calls)  # killed: no end record
    assert len(calls) >= len(completed) >= 40
    assert [(c["tool"], c["arguments"]) for c in calls[: len(completed)]] == completed


def test_the_example_agent_solves_its_task(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "mcp_agent.py"), "--runs", str(tmp_path)],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip().splitlines()[-1].removeprefix("transcript: "))
    assert path.parent == tmp_path and path.exists()
    calls = calls_of(path)
    assert [c["tool"] for c in calls] == ["find_customers", "list_cards", "freeze_card"]
    assert all(c["ok"] for c in calls) and calls[-1]["result"]["status"] == "frozen"
    assert records(path)[-1]["type"] == "end"


def test_idle_sessions_end_and_are_not_restarted(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    args = {"customer_id": "C-0001", "notes": "x"}

    async def main(url: str) -> None:
        async with mcp.Client(f"{url}?session=idle-1") as client:
            assert not (await client.call_tool("set_note", args)).is_error
            await asyncio.sleep(2.0)  # > --idle-timeout: the reaper ends the session
            late = await client.call_tool("set_note", args)
            assert late.is_error and "has ended" in text(late) and "idle" in text(late)

    with http_server(SHOP, runs, "--idle-timeout", "0.5") as (url, _):
        asyncio.run(main(url))
        (path,) = wait_for_ends(runs, 1)
        end = records(path)[-1]
        assert "idle" in end["reason"] and len(calls_of(path)) == 1
