"""`toolgym rollout`: baselines, the results lines, resuming, re-scoring, faults, the model loop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from scoring import load_domain
from scoring.batch import BatchScorer
from scoring.quality import quality
from scoring.rollouts import run_rollouts
from scoring.rollouts.policies import parse_policy
from scoring.validation.gold import replay_gold
from scoring.validation.validate import gold_message
from tests.fake_openai import FakeOpenAI, call, say, scripted
from toolgym.cli import app

runner = CliRunner()
#: a write task (freeze a card), a write task with references, an answer task
TASKS = ["bank-007", "bank-001", "bank-002"]


def lines(runs: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (runs / "results.jsonl").read_text().splitlines()]


def rescored(runs: Path, rows: list[dict[str, Any]]) -> list[float | None]:
    """The rewards `toolgym score` gives the rollouts' transcripts."""
    scorer = BatchScorer()
    return [scorer.score(runs / r["transcript"])["reward"] for r in rows]


def test_cli_writes_one_line_per_rollout_and_resumes(tmp_path: Path) -> None:
    args = [
        "rollout",
        "bank",
        "--policy",
        "gold",
        "--policy",
        "noop",
        "--k",
        "2",
        "--tasks",
        "bank-007",
        "--out",
        str(tmp_path),
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    rows = lines(tmp_path)
    assert len(rows) == 4
    assert {(r["policy"], r["sample"]) for r in rows} == {(p, s) for p in ("gold", "noop") for s in (0, 1)}
    for r in rows:
        assert {"reward", "partial", "infra", "fingerprint", "calls", "turns", "wall_s"} <= set(r)
        assert r["domain"] == "bank@" + load_domain("bank").version and r["infra"] is False
    assert {r["reward"] for r in rows if r["policy"] == "gold"} == {1.0}
    assert {r["reward"] for r in rows if r["policy"] == "noop"} == {0.0}
    again = runner.invoke(app, [*args, "--k", "3", "--json"])
    assert again.exit_code == 0, again.output
    summary = json.loads(again.stdout)
    assert summary["skipped"] == 4 and summary["rollouts"] == 2  # only the third sample of each
    assert len(lines(tmp_path)) == 6
    bad = runner.invoke(app, ["rollout", "bank", "--policy", "gold-corrupt:x", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "'--policy'" in bad.stderr and "gold-corrupt:N" in bad.stderr


@pytest.mark.parametrize("via", ["inprocess", "mcp"])
def test_baselines_order_and_rescore(tmp_path: Path, via: str) -> None:
    policies = ["gold", "gold-corrupt:1", "random", "read-only", "noop"]
    run_rollouts(["bank"], policies, k=2, runs=tmp_path, tasks=TASKS, via=via)
    rows = lines(tmp_path)
    assert len(rows) == len(policies) * len(TASKS) * 2 and all(r["status"] == "scored" for r in rows)

    def mean(policy: str, field: str) -> float:
        got = [r[field] for r in rows if r["policy"] == policy]
        return sum(got) / len(got)

    assert mean("gold", "reward") == 1.0
    writes = [r for r in rows if r["task"] != "bank-002" and r["policy"] in ("noop", "random", "read-only")]
    assert all(r["reward"] == 0.0 for r in writes)
    assert mean("gold", "partial") > mean("gold-corrupt:1", "partial") > mean("random", "partial")
    assert mean("random", "partial") >= mean("noop", "partial")
    # the transcripts are what `toolgym score` re-scores, to the same rewards
    assert rescored(tmp_path, rows) == [r["reward"] for r in rows]


def test_random_policy_is_seeded(tmp_path: Path) -> None:
    for name in ("a", "b"):
        run_rollouts(["bank"], ["random"], k=2, runs=tmp_path / name, tasks=["bank-007"], via="inprocess")

    def calls(runs: Path) -> list[Any]:
        out = []
        for r in lines(runs):
            records = [json.loads(x) for x in (runs / r["transcript"]).read_text().splitlines()]
            out.append([(c["tool"], c["arguments"]) for c in records if c["type"] == "call"])
        return out

    first, second = calls(tmp_path / "a"), calls(tmp_path / "b")
    assert first == second and first[0] != first[1]  # the same per sample, different across samples
    assert all(first)


@pytest.mark.parametrize("rate", [0.05, 0.1, 0.3])
def test_gold_retries_injected_faults_and_never_scores_a_fault_as_0(tmp_path: Path, rate: float) -> None:
    tasks = ["bank-013", "bank-034"]  # five calls each, two of them writes
    run_rollouts(["bank"], ["gold"], k=20, runs=tmp_path, tasks=tasks, via="inprocess", fault_rate=rate)
    rows = lines(tmp_path)
    assert sum(r["injected"] for r in rows) > 0
    assert all(r["reward"] == 1.0 or r["status"] == "failed-infra" for r in rows)
    assert all(r["infra_cause"] == "injected" and r["reward"] is None for r in rows if r["infra"])
    assert rescored(tmp_path, rows) == [r["reward"] for r in rows]


def test_faults_a_model_ignores_are_infra_failures_kept_out_of_pass_rates(tmp_path: Path) -> None:
    """A model that does not retry: a fault on a write it needed fails the rollout as it happened,
    which the scorer's counterfactual rule rules infra-failed (never a 0); over real MCP."""
    script = scripted(_gold_script("bank-013"))
    with FakeOpenAI(reply=script) as llm:
        run_rollouts(
            ["bank"],
            [f"openai:fake@{llm.url}"],
            k=16,
            runs=tmp_path,
            tasks=["bank-013"],
            via="mcp",
            fault_rate=0.3,
        )
    rows = lines(tmp_path)
    infra = [r for r in rows if r["infra"]]
    assert infra and all(r["status"] == "failed-infra" and r["infra_cause"] == "injected" for r in infra)
    assert all(r["reward"] == 1.0 for r in rows if not r["infra"])  # a fault never became a 0
    assert rescored(tmp_path, rows) == [r["reward"] for r in rows]
    (d,) = quality(rows).domains
    assert d.policies[rows[0]["policy"]].pass_rate == 1.0 and d.health.injected_failure_rate == round(
        len(infra) / 16, 4
    )


def _gold_script(task_id: str) -> list[dict[str, Any]]:
    """The assistant turns of an agent that makes the task's gold calls, then answers."""
    domain = load_domain("bank")
    task = domain.task(task_id)
    with domain.episode(seed=task.seed) as ep:
        outcomes = replay_gold(ep, task)
    return [*(call(o.name, o.arguments) for o in outcomes), say(gold_message(task) or "done")]


def test_openai_loop_over_mcp_against_a_fake_endpoint(tmp_path: Path) -> None:
    bank = load_domain("bank")
    scripts = {bank.task(t).instruction.strip(): scripted(_gold_script(t)) for t in ("bank-007", "bank-002")}

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        return scripts[request["messages"][1]["content"]](request)

    with FakeOpenAI(reply=reply, fail_first=1) as llm:
        policy = f"openai:fake@{llm.url}"
        run_rollouts(["bank"], [policy], k=1, runs=tmp_path, tasks=["bank-007", "bank-002"], via="mcp")
        first = llm.requests[0]
    rows = lines(tmp_path)
    assert [r["reward"] for r in rows] == [1.0, 1.0] and all(r["status"] == "scored" for r in rows)
    assert all(r["turns"] >= 2 for r in rows)
    assert rescored(tmp_path, rows) == [1.0, 1.0]
    tools = {t["function"]["name"] for t in first["tools"]}
    assert "submit_answer" in tools and "freeze_card" in tools
    assert first["messages"][0]["role"] == "system" and first["messages"][1]["role"] == "user"


def test_endpoint_failures_are_infra_not_rewards(tmp_path: Path) -> None:
    with FakeOpenAI(reply=scripted([say("done")]), fail_first=100, fail_status=503) as llm:
        run_rollouts(
            ["bank"],
            [f"openai:fake@{llm.url}"],
            k=1,
            runs=tmp_path,
            tasks=["bank-007"],
            via="mcp",
            llm_retries=1,
        )
        assert len(llm.requests) == 2  # the first try and one retry
    (row,) = lines(tmp_path)
    assert row["status"] == "failed-infra" and row["infra"] and row["reward"] is None
    assert row["infra_cause"] == "endpoint" and "503" in row["error"]


def test_openai_policy_needs_a_model_and_url() -> None:
    with pytest.raises(ValueError, match="openai:MODEL@URL"):
        parse_policy("openai:gpt")


def test_ray_executor_runs_rollouts_in_workers(tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")
    summary = run_rollouts(
        ["bank"],
        ["gold", "noop"],
        k=1,
        runs=tmp_path,
        tasks=["bank-007"],
        workers=1,
        executor="ray",
        via="inprocess",
    )
    assert summary.rollouts == 2
    assert {r["policy"]: r["reward"] for r in lines(tmp_path)} == {"gold": 1.0, "noop": 0.0}


def test_a_rollout_stopped_midway_runs_again(tmp_path: Path) -> None:
    run_rollouts(["bank"], ["gold"], k=1, runs=tmp_path, tasks=["bank-007"], via="inprocess")
    (row,) = lines(tmp_path)
    (tmp_path / "results.jsonl").unlink()  # as if the run had been killed before the line was written
    run_rollouts(["bank"], ["gold"], k=1, runs=tmp_path, tasks=["bank-007"], via="inprocess")
    (again,) = lines(tmp_path)
    assert again["status"] == "scored" and again["reward"] == 1.0 and again["transcript"] == row["transcript"]
    assert len(list((tmp_path / "stale").glob("*.jsonl"))) == 1
