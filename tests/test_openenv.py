"""The OpenEnv adapter, driven by OpenEnv's own clients (`GenericEnvClient`, `MCPToolClient`) over
WebSockets against a real uvicorn server: a scripted agent completes bundled tasks, its reward is
the one `toolgym score` gives for the same calls, and concurrent sessions stay isolated."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openenv.core", reason="the openenv extra is not installed: pip install -e '.[openenv]'")

import uvicorn  # noqa: E402
from openenv.core import GenericEnvClient  # noqa: E402
from openenv.core.mcp_client import MCPToolClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from scoring import load_domain
from scoring.validation.gold import replay_gold  # noqa: E402
from toolgym.adapters.openenv import create_app  # noqa: E402
from toolgym.cli import app as cli  # noqa: E402

BANK = load_domain("bank")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(BANK, max_sessions=300), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the OpenEnv server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def gold(task_id: str) -> list[tuple[str, dict[str, Any]]]:
    task = BANK.task(task_id)
    with BANK.episode(seed=task.seed) as episode:
        return [(o.name, o.arguments) for o in replay_gold(episode, task)]


async def _play(
    url: str, task_id: str, calls: list[tuple[str, dict[str, Any]]], answer: str
) -> dict[str, Any]:
    """A scripted agent through GenericEnvClient; returns what it saw and the OpenAI transcript."""
    async with GenericEnvClient(base_url=url) as client:
        first = await client.reset(task_id=task_id)
        obs = first.observation
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": obs["system_prompt"]},
            {"role": "user", "content": obs["instruction"]},
        ]
        result = None
        for i, (name, arguments) in enumerate([*calls, ("submit_answer", {"answer": answer})]):
            result = await client.step({"type": "call_tool", "tool_name": name, "arguments": arguments})
            call_id = f"c{i}"
            function = {"name": name, "arguments": json.dumps(arguments)}
            messages.append(
                {
                    "role": "assistant",
                    "tool_calls": [{"id": call_id, "type": "function", "function": function}],
                }
            )
            messages.append(
                {"role": "tool", "tool_call_id": call_id, "content": result.observation["result"]["content"]}
            )
        state = await client.state()
    assert result is not None and result.done
    return {
        "obs": obs,
        "final": result,
        "state": state,
        "transcript": {"domain": "bank", "task": task_id, "messages": messages},
    }


def _cli_reward(transcript: dict[str, Any], tmp_path: Path) -> tuple[float, float]:
    path = tmp_path / f"{transcript['task']}.json"
    path.write_text(json.dumps(transcript), encoding="utf-8")
    result = CliRunner().invoke(cli, ["score", str(path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    return report["reward"], report["partial"]


@pytest.mark.parametrize(("task_id", "good"), [("bank-001", True), ("bank-010", True), ("bank-010", False)])
def test_an_agent_completes_tasks_with_toolgym_score_s_reward(
    server_url: str, task_id: str, good: bool, tmp_path: Path
) -> None:
    calls = gold(task_id) if good else gold(task_id)[:1]
    answer = "; ".join(map(str, BANK.task(task_id).answer_facts)) or "Done."
    played = asyncio.run(_play(server_url, task_id, calls, answer))
    obs, final, state = played["obs"], played["final"], played["state"]
    assert obs["task_id"] == task_id and obs["instruction"] == BANK.task(task_id).instruction
    assert [t["function"]["name"] for t in obs["tools"]][-1] == "submit_answer"
    score = final.observation["result"]["score"]
    assert (final.reward, score["partial"]) == _cli_reward(played["transcript"], tmp_path)
    assert (final.reward == 1.0) is good
    assert state["done"] and state["reward"] == final.reward and state["task_id"] == task_id


def test_mcp_actions_list_and_call_tools(server_url: str) -> None:
    async def run() -> tuple[list[str], Any, Any]:
        async with MCPToolClient(base_url=server_url) as client:
            await client.reset(task_id="bank-001")
            tools = await client.list_tools()
            found = await client.call_tool("find_customers", email="maria.okafor@example.com")
            failed = await client.call_tool("get_account", account_id="ACC-nope")
        return [t.name for t in tools], found, failed

    names, found, failed = asyncio.run(run())
    assert names == [*BANK.tools, "submit_answer"]
    assert found[0]["customer_id"] == "CUS-090075c2"
    assert isinstance(failed, str) and failed.startswith("Error: ")  # the agent's tool error, as text


def test_concurrent_sessions_stay_isolated(server_url: str) -> None:
    """64 sessions at once, each writing its own marker (a contact update) and reading it back."""
    customer = gold("bank-001")[0][1]["email"]

    async def one(i: int) -> tuple[str, str]:
        async with GenericEnvClient(base_url=server_url) as client:
            await client.reset(task_id="bank-001")
            found = await client.step(
                {"type": "call_tool", "tool_name": "find_customers", "arguments": {"email": customer}}
            )
            cid = found.observation["result"]["data"][0]["customer_id"]
            marker = f"+1-555-{i:04d}-0000"
            wrote = await client.step(
                {
                    "type": "call_tool",
                    "tool_name": "update_contact",
                    "arguments": {"customer_id": cid, "phone": marker},
                }
            )
            assert not wrote.observation["result"]["is_error"], wrote.observation
            read = await client.step(
                {"type": "call_tool", "tool_name": "get_customer", "arguments": {"customer_id": cid}}
            )
            return marker, read.observation["result"]["data"]["phone"]

    async def run() -> list[tuple[str, str]]:
        return await asyncio.gather(*(one(i) for i in range(64)))

    pairs = asyncio.run(run())
    assert all(mine == seen for mine, seen in pairs), [p for p in pairs if p[0] != p[1]][:3]


def test_a_fake_endpoint_agent_completes_tasks_through_openenv(server_url: str, tmp_path: Path) -> None:
    """The model behind an OpenAI-compatible endpoint picks the calls; OpenEnv's client runs them."""
    from tests.fake_openai import FakeOpenAI
    from tests.test_env_api_agent import by_instruction, chat, gold_script

    tasks = {"bank-003": 1.0, "bank-012": 0.0}
    scripts = {"bank-003": gold_script(BANK, "bank-003"), "bank-012": gold_script(BANK, "bank-012", "?")[-1:]}

    async def episode(url: str, task_id: str) -> tuple[Any, list[dict[str, Any]]]:
        async with GenericEnvClient(base_url=server_url) as client:
            obs = (await client.reset(task_id=task_id)).observation
            messages = [
                {"role": "system", "content": obs["system_prompt"]},
                {"role": "user", "content": obs["instruction"]},
            ]
            for _ in range(20):
                message = await asyncio.to_thread(chat, url, messages, obs["tools"])
                messages.append(message)
                for tc in message.get("tool_calls") or []:
                    arguments = json.loads(tc["function"]["arguments"])
                    action = {
                        "type": "call_tool",
                        "tool_name": tc["function"]["name"],
                        "arguments": arguments,
                    }
                    result = await client.step(action)
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": tc["id"],
                            "content": result.observation["result"]["content"],
                        }
                    )
                    if result.done:
                        return result, messages
        raise AssertionError("the episode did not end")

    with FakeOpenAI(reply=by_instruction(BANK, scripts)) as llm:
        for task_id, expected in tasks.items():
            final, messages = asyncio.run(episode(llm.url, task_id))
            transcript = {"domain": "bank", "task": task_id, "messages": messages}
            assert (final.reward, final.observation["result"]["score"]["partial"]) == _cli_reward(
                transcript, tmp_path
            )
            assert final.reward == expected
