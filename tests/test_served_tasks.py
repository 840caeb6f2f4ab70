"""Every bundled task can be won through the server: its gold calls made over MCP, its answer handed
in through `submit_answer`, and the server's own transcript scored 1.0.

All 226 tasks through fastmcp's in-memory client; a sample over stdio and streamable HTTP with
the official client (tests/test_server_e2e.py starts those servers the same way).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import mcp
import pytest
from fastmcp import Client

from scoring import load_domain, score_transcript
from scoring.calls import resolve_arguments
from scoring.facts import fact_text
from scoring.tasks import Task
from simulator import Domain
from simulator.serve.server import DomainServer
from tests.helpers import records, text
from tests.test_server_e2e import ENV, ROOT, SERVE, http_server, wait_for_ends

BUNDLED = ("bank", "office", "logistics", "tau2-retail")


def answer_of(task: Task) -> str:
    """What a good agent would say: every answer fact, in a sentence."""
    if not task.answer_facts:
        return "Done: everything you asked for is taken care of."
    return "Here is what you asked for: " + "; ".join(fact_text(f) for f in task.answer_facts) + "."


async def play_gold(client: Any, task: Task, **kw: Any) -> None:
    """Make the task's gold calls (resolving references to earlier results), then submit the answer."""
    results: list[Any] = []
    for i, call in enumerate(task.calls):
        args = resolve_arguments(call.arguments, results, task.id, i)
        result = await client.call_tool(call.name, args, **kw)
        assert result.is_error == call.expect_error, f"{task.id} call {i} ({call.name}): {text(result)}"
        results.append(None if result.is_error else json.loads(text(result)))
    submitted = await client.call_tool("submit_answer", {"answer": answer_of(task)}, **kw)
    assert not submitted.is_error, text(submitted)


def score_session(domain: Domain, runs: Path) -> tuple[float | None, list[str]]:
    (path,) = runs.glob("*.jsonl")
    report = score_transcript(path, domain)
    return report.reward, report.explanation


@pytest.mark.parametrize("name", BUNDLED)
def test_every_task_wins_through_the_server(name: str, tmp_path: Path) -> None:
    domain = load_domain(name)

    async def main() -> None:
        for task in domain.tasks:
            runs = tmp_path / task.id
            server = DomainServer(domain, task=task, runs=runs)
            async with Client(server.mcp) as client:
                await play_gold(client, task, raise_on_error=False)
                late = await client.call_tool("submit_answer", {"answer": "again"}, raise_on_error=False)
                assert late.is_error and "has ended" in text(late)  # the answer ended the session
            reward, why = score_session(domain, runs)
            assert reward == 1.0, f"{task.id}: {why}"
            (path,) = runs.glob("*.jsonl")
            assert records(path)[-1]["reason"] == "answer submitted"

    asyncio.run(main())


def sample(domain: Domain, k: int) -> list[Task]:
    """k tasks spread over the domain, answer-fact tasks among them."""
    facts = [t for t in domain.tasks if t.answer_facts]
    writes = [t for t in domain.tasks if not t.answer_facts]
    return (facts[:: max(1, len(facts) // k)][: (k + 1) // 2] + writes[:: max(1, len(writes) // k)])[:k]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("name", ["bank", "tau2-retail"])
def test_a_sample_wins_over_http_with_the_official_client(name: str, tmp_path: Path) -> None:
    domain = load_domain(name)
    tasks = sample(domain, 4)
    runs = tmp_path / "runs"

    async def main(url: str) -> None:
        for task in tasks:  # a plain client: one handshake-era session per connection
            async with mcp.Client(f"{url}?task={task.id}") as client:
                await play_gold(client, task)

    with http_server(name, runs) as (url, _):
        asyncio.run(main(url))
        files = wait_for_ends(runs, len(tasks))
    assert len(files) == len(tasks)
    for path in files:
        report = score_transcript(path, domain)
        assert report.reward == 1.0, f"{path.name}: {report.explanation}"
        assert records(path)[-1]["reason"] == "answer submitted"


@pytest.mark.timeout(180)
def test_a_sample_wins_over_stdio_with_the_official_client(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for name in ("office", "logistics"):
        domain = load_domain(name)
        for task in sample(domain, 2):
            params = mcp.StdioServerParameters(
                command=sys.executable,
                args=[*SERVE, name, "--task", task.id, "--runs", str(runs / task.id)],
                env=ENV,
                cwd=str(ROOT),
            )

            async def main(params: Any = params, task: Task = task) -> None:
                async with mcp.Client(params) as client:
                    await play_gold(client, task)

            asyncio.run(main())
            (path,) = wait_for_ends(runs / task.id, 1)
            report = score_transcript(path, domain)
            assert report.reward == 1.0, f"{task.id}: {report.explanation}"

    asyncio.run(main())
