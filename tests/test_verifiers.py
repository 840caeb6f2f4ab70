"""The verifiers environment (environments/toolgym_verifiers), end to end through verifiers' own
`vf-eval`, run exactly as the README's "verifiers" snippet says, against a local fake
OpenAI-compatible endpoint whose scripted agent makes tool calls on a real `toolgym serve`.

verifiers 0.4.0 pins an older MCP SDK than toolgym, so the environment lives in its own virtual
environment: `.venv-verifiers` (made by `.ci/run`; or `$TOOLGYM_VERIFIERS_VENV`). Without it the
test skips. Each rollout's reward and partial credit must be what `toolgym score` gives the same
conversation (rebuilt from what the endpoint was sent and answered).
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from scoring import load_domain
from scoring.validation.gold import replay_gold
from tests.conftest import ROOT
from tests.fake_openai import FakeOpenAI, call, say
from tests.test_env_api_readme import section_blocks
from toolgym.cli import app

VENV = Path(os.environ.get("TOOLGYM_VERIFIERS_VENV", ROOT / ".venv-verifiers"))
pytestmark = pytest.mark.skipif(
    not (VENV / "bin" / "vf-eval").exists(),
    reason=f"no verifiers environment at {VENV}: python3 -m venv .venv-verifiers && "
    ".venv-verifiers/bin/pip install -e environments/toolgym_verifiers",
)
BANK = load_domain("bank")
TASKS = [t.id for t in BANK.tasks[:3]]  # the snippet's --select.limit 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _script() -> dict[str, list[dict[str, Any]]]:
    """Per instruction, the agent's turns: the gold calls, then an answer (full, half or wrong)."""
    answers = {TASKS[0]: "all", TASKS[1]: "first", TASKS[2]: "wrong"}
    scripts = {}
    for task_id, how in answers.items():
        task = BANK.task(task_id)
        with BANK.episode(seed=task.seed) as episode:
            turns = [call(o.name, o.arguments) for o in replay_gold(episode, task)]
        facts = [str(f) for f in task.answer_facts]
        text = {"all": "; ".join(facts), "first": facts[0], "wrong": "I could not find it."}[how]
        turns.append(call("submit_answer", {"answer": text}))
        turns.append(say(text))  # the final message (the one answer facts are graded in)
        scripts[task.instruction] = turns
    return scripts


def _agent(scripts: dict[str, list[dict[str, Any]]]) -> Any:
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        messages = request.get("messages", [])
        user = next(m["content"] for m in messages if m.get("role") == "user")
        if isinstance(user, list):
            user = "".join(part.get("text", "") for part in user)
        turns = scripts[user]
        k = sum(1 for m in messages if m.get("role") == "assistant")
        return dict(turns[k]) if k < len(turns) else say("done")

    return reply


def _cli_score(transcript: dict[str, Any], folder: Path) -> dict[str, Any]:
    path = folder / f"{transcript['task']}.json"
    path.write_text(json.dumps(transcript), encoding="utf-8")
    result = CliRunner().invoke(app, ["score", str(path), "--json"])
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_vf_eval_runs_the_readme_snippet_with_toolgym_s_reward(tmp_path: Path) -> None:
    (block,) = section_blocks("### verifiers", "bash")
    _install, serve, evaluate = block.strip().splitlines()
    port = _free_port()
    toolgym = str(Path(sys.executable).parent / "toolgym")
    serve_argv = shlex.split(serve.removesuffix("&").replace("8000", str(port)))
    assert serve_argv[:3] == [".venv/bin/toolgym", "serve", "bank"]
    server = subprocess.Popen([toolgym, *serve_argv[1:]], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "toolgym serve did not start"
                time.sleep(0.1)
        with FakeOpenAI(reply=_agent(_script())) as llm:
            env_prefix, *argv = shlex.split(evaluate)
            assert env_prefix.startswith("PATH=") and argv[0] == "vf-eval"
            command = (
                " ".join(argv)
                .replace("8000", str(port))
                .replace("$PWD/.venv/bin/toolgym", toolgym)
                .replace("https://api.openai.com/v1", llm.url)
            )
            env = {**os.environ, "PATH": f"{VENV / 'bin'}:{os.environ['PATH']}", "OPENAI_API_KEY": "fake"}
            out_dir = tmp_path / "vf"
            run = subprocess.run(
                [str(VENV / "bin" / "vf-eval"), *shlex.split(command)[1:], "--output-dir", str(out_dir)],
                env=env,
                capture_output=True,
                text=True,
                timeout=280,
            )
            assert run.returncode == 0, run.stderr[-3000:]
            requests = list(llm.requests)
    finally:
        server.terminate()
        server.wait(10)
    (traces_file,) = out_dir.glob("*/traces.jsonl")
    got = {}
    for line in traces_file.read_text(encoding="utf-8").splitlines():
        episode = json.loads(line)
        (trace,) = episode["traces"] if isinstance(episode["traces"], list) else episode["traces"].values()
        assert not trace["errors"], trace["errors"]
        got[trace["task"]["data"]["task_id"]] = (
            trace["rewards"]["toolgym"]["score"],
            trace["metrics"]["toolgym_partial"],
        )
    assert set(got) == set(TASKS)
    # the same conversations, as the endpoint saw them, scored by `toolgym score`
    agent = _agent(_script())
    for task_id in TASKS:
        instruction = BANK.task(task_id).instruction
        last = max(
            (r for r in requests if any(m.get("content") == instruction for m in r["messages"])),
            key=lambda r: len(r["messages"]),
        )
        messages = [*last["messages"], agent(last)]
        report = _cli_score({"domain": "bank", "task": task_id, "messages": messages}, tmp_path)
        assert got[task_id] == (report["reward"], report["partial"]), (task_id, report["explanation"])
    assert [got[t][0] for t in TASKS] == [1.0, 0.0, 0.0]
    assert 0.0 < got[TASKS[1]][1] < 1.0  # half the facts: partial credit
