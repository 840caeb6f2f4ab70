"""A model behind an OpenAI-compatible endpoint (tests/fake_openai.py, scripted) completes bundled
tasks through the environment API: the agent loop sends the observation's messages and OpenAI-form
tools over HTTP, runs the tool calls it gets back with `env.step`, and stops at `submit_answer`.
The environment's reward is the one `toolgym score` gives the same conversation."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from scoring import load_domain
from scoring.validation.gold import replay_gold
from simulator import Domain
from tests.fake_openai import FakeOpenAI, call, say
from toolgym.cli import app
from toolgym.env import Environment


def chat(url: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """One Chat Completions request: the assistant message."""
    body = json.dumps({"model": "fake", "messages": messages, "tools": tools}).encode()
    request = urllib.request.Request(f"{url}/chat/completions", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        message: dict[str, Any] = json.loads(response.read())["choices"][0]["message"]
    return message


def run_agent(env: Environment, url: str, task_id: str, max_turns: int = 20) -> list[dict[str, Any]]:
    """The agent loop on one episode; returns the conversation (OpenAI messages)."""
    obs = env.reset(task_id=task_id)
    messages = obs.messages
    for _ in range(max_turns):
        message = chat(url, messages, obs.tools["openai"])
        messages.append(message)
        if not message.get("tool_calls"):
            env.say(message.get("content") or "")
            break
        for tc in message["tool_calls"]:
            result = env.step(tc["function"]["name"], tc["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": tc["id"], "content": result.content})
        if env.done:
            break
    return messages


def gold_script(domain: Domain, task_id: str, answer: str | None = None) -> list[dict[str, Any]]:
    """The task's gold calls as assistant turns, then `submit_answer` (the facts, or `answer`)."""
    task = domain.task(task_id)
    with domain.episode(seed=task.seed) as episode:
        turns = [call(o.name, o.arguments) for o in replay_gold(episode, task)]
    text = answer if answer is not None else "; ".join(map(str, task.answer_facts)) or "Done."
    return [*turns, call("submit_answer", {"answer": text})]


def by_instruction(domain: Domain, scripts: dict[str, list[dict[str, Any]]]) -> Any:
    """A reply function following each task's script, picked by the conversation's instruction."""
    instructions = {domain.task(t).instruction: turns for t, turns in scripts.items()}

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        user = next(m["content"] for m in messages if m.get("role") == "user")
        turns = instructions[user]
        k = sum(1 for m in messages if m.get("role") == "assistant")
        return dict(turns[k]) if k < len(turns) else say("done")

    return reply


@pytest.mark.parametrize("domain_name", ["bank", "logistics"])
def test_a_fake_endpoint_agent_completes_tasks_with_toolgym_score_s_reward(
    domain_name: str, tmp_path: Path
) -> None:
    domain = load_domain(domain_name)
    tasks = [domain.tasks[0].id, domain.tasks[-1].id]
    scripts = {
        tasks[0]: gold_script(domain, tasks[0]),
        tasks[1]: gold_script(domain, tasks[1], "no idea")[-1:],
    }
    env = Environment(domain)
    with FakeOpenAI(reply=by_instruction(domain, scripts)) as llm:
        for task_id, expected in zip(tasks, (1.0, 0.0), strict=True):
            messages = run_agent(env, llm.url, task_id)
            report = env.score()
            path = tmp_path / f"{task_id}.json"
            path.write_text(json.dumps({"domain": domain_name, "task": task_id, "messages": messages}))
            result = CliRunner().invoke(app, ["score", str(path), "--json"])
            assert result.exit_code == 0, result.output
            theirs = json.loads(result.stdout)
            assert (report.reward, report.partial) == (theirs["reward"], theirs["partial"])
            assert report.reward == expected, report.explanation
        assert llm.requests[0]["tools"] == env.tools["openai"]
