"""Nothing an agent does through the server turns a failing rollout into "not scored".

End to end: the real server (fastmcp's in-memory client), its own transcripts and key, then
`score_transcript` as `toolgym score` runs it.

- engine errors the agent's arguments cause (an int64 overflow, a bad limit) are tool errors the
  agent sees, without a server label, and the rollout is scored (0: the task was not done);
- fault fishing: a do-nothing agent that repeats a cheap read until it meets an injected fault,
  then stops, is scored 0, not excluded;
- an agent that retries past injected faults and does the task is scored 1.0;
- an agent whose only write met a fault and who gave up is excluded (the fault decided it).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from fastmcp import Client

from scoring import load_domain, score_transcript
from scoring.calls import resolve_arguments
from simulator.errors import INJECTED_FAULT
from simulator.serve.labels import Key
from simulator.serve.server import DomainServer
from tests.helpers import calls_of, text
from tests.test_served_tasks import answer_of

BANK = load_domain("bank")
# a write task with no answer facts: the state decides it
TASK = next(t for t in BANK.tasks if not t.answer_facts and any(BANK.tools[c.name].writes for c in t.calls))
READ = ("get_customer", {"customer_id": "CUS-090075c2"})


#: A fixed server key: the fault schedules below are the same in every run.
KEY = Key(bytes(range(32)))


def serve(tmp_path: Path, **kw: Any) -> DomainServer:
    return DomainServer(BANK, task=TASK, runs=tmp_path, key=KEY, **kw)


def scored(tmp_path: Path) -> Any:
    (path,) = tmp_path.glob("*.jsonl")
    return score_transcript(path, BANK, key=KEY)


def test_agent_caused_engine_errors_are_tool_errors_and_scored(tmp_path: Path) -> None:
    server = serve(tmp_path)
    hostile = [
        (
            "list_account_transfers",
            {"customer_id": "CUS-090075c2", "account_id": "ACC-1205479a", "min_amount": 2**63},
        ),
        (
            "list_account_transfers",
            {"customer_id": "CUS-090075c2", "account_id": "ACC-1205479a", "limit": 2**70},
        ),
    ]

    async def main() -> list[Any]:
        async with Client(server.mcp) as client:
            return [await client.call_tool(n, a, raise_on_error=False) for n, a in hostile]

    for result in asyncio.run(main()):
        assert result.is_error and "toolgym-label" not in text(result)
        assert "Internal error" not in text(result)
    assert server.internal_errors == 0
    assert all(c["error_kind"] == "tool" for c in calls_of(next(tmp_path.glob("*.jsonl"))))
    report = scored(tmp_path)
    assert report.status == "scored" and report.reward == 0.0


def test_fault_fishing_scores_zero(tmp_path: Path) -> None:
    server = serve(tmp_path, fault_rate=0.3, fault_seed=1)

    async def main() -> int:
        async with Client(server.mcp) as client:
            for n in range(1, 200):
                result = await client.call_tool(*READ, raise_on_error=False)
                if result.is_error and text(result).startswith(INJECTED_FAULT):
                    return n  # got a fault: stop here and hope the rollout is excluded
        raise AssertionError("no fault in 200 calls")

    calls = asyncio.run(main())
    report = scored(tmp_path)
    assert calls >= 1 and report.status == "scored" and report.reward == 0.0


def test_retrying_past_faults_wins_and_giving_up_on_a_faulted_write_is_excluded(tmp_path: Path) -> None:
    # (an in-memory session's name is random, and the fault schedule depends on it: loop until a
    # run meets a fault; each try is its own server and runs folder)

    async def gold(client: Any, retry: bool) -> bool:
        results: list[Any] = []
        faulted = False
        for i, call in enumerate(TASK.calls):
            args = resolve_arguments(call.arguments, results, TASK.id, i)
            while True:
                result = await client.call_tool(call.name, args, raise_on_error=False)
                if not (result.is_error and text(result).startswith(INJECTED_FAULT)):
                    break
                faulted = True
                if not retry:
                    return faulted
            results.append(None if result.is_error else json.loads(text(result)))
        await client.call_tool("submit_answer", {"answer": answer_of(TASK)}, raise_on_error=False)
        return faulted

    async def retrying(server: DomainServer) -> bool:
        async with Client(server.mcp) as client:
            return await gold(client, retry=True)

    for attempt in range(50):
        runs = tmp_path / f"retry-{attempt}"
        met_a_fault = asyncio.run(retrying(serve(runs, fault_rate=0.4, fault_seed=3)))
        report = scored(runs)
        assert report.status == "scored" and report.reward == 1.0, report.explanation
        if met_a_fault:  # it retried past at least one fault and was scored normally
            break
    else:
        raise AssertionError("no run met a fault")

    # giving up when a fault hits: excluded only when carrying the faulted calls out would have won
    seen = set()
    for seed in range(200):
        if seen == {"decided", "not decided"}:
            break
        runs = tmp_path / f"give-up-{seed}"
        quitter = serve(runs, fault_rate=0.4, fault_seed=seed)

        async def giving_up(quitter: DomainServer = quitter) -> bool:
            async with Client(quitter.mcp) as client:
                return await gold(client, retry=False)

        if not asyncio.run(giving_up()):
            continue
        (path,) = runs.glob("*.jsonl")
        faulted = [c for c in calls_of(path) if c["error_kind"] == "injected"]
        report = scored(runs)
        if len(calls_of(path)) == len(TASK.calls) and faulted[0]["index"] == len(TASK.calls) - 1:
            # only the last gold call failed: carried out, the task is done: the fault decided it
            assert report.status == "failed-infra" and report.reward is None, report.explanation
            seen.add("decided")
        else:  # it stopped early: even with its faulted call carried out the task is not done
            assert report.status == "scored" and report.reward == 0.0, report.explanation
            seen.add("not decided")
    assert seen == {"decided", "not decided"}


def test_only_a_signed_void_record_unmakes_a_call(tmp_path: Path) -> None:
    """A write recorded as done whose commit failed is voided by the server (signed); a void
    record anyone else writes is ignored, and the call is replayed as recorded."""
    note = {"customer_id": "CUS-090075c2", "email": "new@example.com"}
    for signed in (True, False):
        runs = tmp_path / str(signed)
        server = DomainServer(BANK, task=TASK, runs=runs, key=KEY)
        session = server.sessions.open("q:v", "v", TASK, 0)
        session.episode.call("update_contact", note)
        void = {
            "type": "void",
            "index": 0,
            "tool": "update_contact",
            "arguments": note,
            "reason": "disk I/O error",
        }
        assert session.sink is not None
        if signed:
            session.sink.write(void)
        else:
            session.sink.file.write(void)  # compile_steps to the file: no signature
        server.sessions.release_all()
        report = scored(runs)
        replayed_changes = report.diff.unexpected if report.diff is not None else []
        if signed:
            assert not replayed_changes, report.explanation  # the voided call did not happen
        else:
            assert replayed_changes and any("ignored" in w for w in report.warnings), report.warnings
