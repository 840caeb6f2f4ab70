"""`toolgym export-sft`: gold solutions as OpenAI chat transcripts that `toolgym score` scores 1.0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from scoring import load_domain
from scoring.validation.gold import replay_gold
from toolgym.cli import app
from toolgym.env.tools import tool_list

runner = CliRunner()


def _export(tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    out = tmp_path / "sft.jsonl"
    result = runner.invoke(app, ["export-sft", *args, "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_every_exported_solution_scores_one_with_toolgym_score(tmp_path: Path) -> None:
    lines = _export(tmp_path, "bank", "office")
    bank, office = load_domain("bank"), load_domain("office")
    assert [x["task"] for x in lines] == [t.id for t in bank.tasks] + [t.id for t in office.tasks]
    files = []
    for i, line in enumerate(lines):
        path = tmp_path / f"t{i}.json"
        path.write_text(json.dumps(line), encoding="utf-8")
        files.append(str(path))
    result = runner.invoke(app, ["score", *files, "--json"])
    assert result.exit_code == 0, result.output
    reports = json.loads(result.stdout)
    assert [(r["task"], r["reward"], r["partial"]) for r in reports] == [(x["task"], 1.0, 1.0) for x in lines]


def test_a_transcript_holds_the_real_replay(tmp_path: Path) -> None:
    bank = load_domain("bank")
    line = _export(tmp_path, "bank")[0]
    task = bank.task(line["task"])
    messages = line["messages"]
    assert messages[0] == {"role": "system", "content": bank.policy.strip()}
    assert messages[1] == {"role": "user", "content": task.instruction}
    assert line["tools"] == tool_list(bank, "openai")
    with bank.episode(seed=task.seed) as episode:
        gold = replay_gold(episode, task)
    calls = [m for m in messages if m["role"] == "assistant"]
    results = [m for m in messages if m["role"] == "tool"]
    assert [c["tool_calls"][0]["function"]["name"] for c in calls] == [
        *(g.name for g in gold),
        "submit_answer",
    ]
    for call, result, outcome in zip(calls, results, gold, strict=False):
        assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == outcome.arguments
        assert result["tool_call_id"] == call["tool_calls"][0]["id"]
        assert json.loads(result["content"]) == json.loads(json.dumps(outcome.result, default=str))
    answer = json.loads(calls[-1]["tool_calls"][0]["function"]["arguments"])["answer"]
    assert all(str(fact) in answer for fact in task.answer_facts)


def test_a_manifest_limits_the_export_to_its_validated_tasks(tmp_path: Path) -> None:
    bank = load_domain("bank")
    manifest = tmp_path / "bank.json"
    manifest.write_text(
        json.dumps(
            {"domain": bank.ref, "fingerprint": bank.fingerprint(), "valid_tasks": ["bank-003", "bank-001"]}
        )
    )
    lines = _export(tmp_path, "bank", "--manifest", str(manifest))
    assert [x["task"] for x in lines] == ["bank-003", "bank-001"]
    result = runner.invoke(
        app, ["export-sft", "office", "--manifest", str(manifest), "--out", str(tmp_path / "x")]
    )
    assert result.exit_code == 2  # a usage error
    assert "'--manifest': no manifest given is for domain office" in result.stderr
    assert not (tmp_path / "x").exists()
