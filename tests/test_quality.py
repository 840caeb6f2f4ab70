"""`toolgym quality`: difficulty, trainability, discrimination, health, flags, manifests, HTML."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from scoring import load_domain
from scoring.quality import manifests, quality, render_html
from scoring.quality.metrics import kendall_tau
from scoring.rollouts import run_rollouts
from scoring.validation.manifest import Manifest, load_manifest
from simulator import TaskError
from simulator.serve.server import DomainServer
from toolgym.cli import app

runner = CliRunner()
BASELINES = ["gold", "gold-corrupt:1", "random", "read-only", "noop"]


def row(
    task: str, policy: str, reward: float | None, partial: float | None = None, **more: Any
) -> dict[str, Any]:
    status = more.pop("status", "scored" if reward is not None else "failed-infra")
    return {
        "domain": more.pop("domain", "d@1"),
        "fingerprint": "f",
        "task": task,
        "policy": policy,
        "sample": more.pop("sample", 0),
        "status": status,
        "reward": reward,
        "partial": reward if partial is None else partial,
        "infra": status != "scored",
        "calls": 4,
        **more,
    }


def healthy(domain: str = "d@1") -> list[dict[str, Any]]:
    rows = []
    for t in ("t1", "t2", "t3"):
        rows += [row(t, "gold", 1.0, domain=domain), row(t, "gold-corrupt:1", 0.0, 0.5, domain=domain)]
        rows += [row(t, "random", 0.0, 0.1, domain=domain), row(t, "noop", 0.0, 0.0, domain=domain)]
    return rows


def test_a_healthy_domain_ranks_the_baselines_and_is_kept() -> None:
    report = quality(healthy())
    (d,) = report.domains
    assert d.flags == [] and d.kept_tasks == ["t1", "t2", "t3"]
    assert d.ranking == ["gold", "gold-corrupt:1", "random", "noop"] and d.tau == 1.0
    assert d.policies["gold"].pass_rate == 1.0 and d.policies["gold-corrupt:1"].mean_partial == 0.5
    (m,) = manifests(report)
    assert m.domain == "d@1" and m.valid_tasks == ["t1", "t2", "t3"]


def test_broken_trivial_and_non_discriminating_domains_are_flagged() -> None:
    broken = [
        r | {"reward": 0.0, "partial": 0.0} if r["policy"] == "gold" and r["task"] != "t1" else r
        for r in healthy("b@1")
    ]
    trivial = [r | {"reward": 1.0, "partial": 1.0} if r["policy"] == "noop" else r for r in healthy("t@1")]
    flat = [r | {"partial": 0.1} if r["policy"].startswith("gold-corrupt") else r for r in healthy("n@1")]
    report = quality(broken + trivial + flat + healthy("ok@1"))
    flags = {d.domain: d.flags for d in report.domains}
    assert "broken" in flags["b@1"] and "trivial" in flags["t@1"] and flags["n@1"] == ["non-discriminating"]
    assert flags["ok@1"] == [] and report.flagged == ["b@1", "n@1", "t@1"]
    assert [m.domain for m in manifests(report)] == ["ok@1"]


def test_trainability_and_spread_of_the_trained_policy() -> None:
    rows = healthy()
    for s, reward in enumerate([1.0, 0.0, 1.0, 1.0]):  # t1: solved 3 of 4 times, t2: never, t3: always
        rows += [
            row("t1", "openai:m@u", reward, sample=s),
            row("t2", "openai:m@u", 0.0, sample=s),
            row("t3", "openai:m@u", 1.0, sample=s),
        ]
    (d,) = quality(rows).domains
    assert d.train == "openai:m@u" and d.trainable_share == round(1 / 3, 4)
    spreads = {t.task: t.spread for t in d.tasks}
    assert spreads == {"t1": 0.433, "t2": 0.0, "t3": 0.0}


def test_health_separates_injected_from_real_failures() -> None:
    rows = healthy() + [
        row("t1", "gold", None, infra_cause="injected", injected=1, sample=1),
        row("t2", "gold", None, infra_cause="timeout", real_faults=1, sample=1),
        row("t3", "gold", None, infra_cause="endpoint", sample=1),
    ]
    (d,) = quality(rows).domains
    h = d.health
    assert h.rollouts == 15 and h.infra_failure_rate == round(3 / 15, 4)
    assert h.injected_failure_rate == round(1 / 15, 4) and h.real_failure_rate == round(2 / 15, 4)
    assert h.timeout_rate == round(1 / 15, 4)
    assert h.injected_call_rate == round(1 / 60, 4) and h.real_call_fault_rate == round(1 / 60, 4)
    assert d.policies["gold"].pass_rate == 1.0  # infra-failed rollouts are not in pass rates


@given(st.lists(st.floats(0, 1), min_size=2, max_size=8))
def test_kendall_tau_of_a_list_with_itself_is_one(values: list[float]) -> None:
    tau = kendall_tau(values, values)
    assert tau is None if len(set(values)) < 2 else tau == 1.0
    reverse = kendall_tau(values, [-v for v in values])
    assert reverse is None if len(set(values)) < 2 else reverse == -1.0


def test_cli_end_to_end_with_manifest_serve_and_html(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run_rollouts(
        ["bank"], BASELINES, k=1, runs=runs, tasks=["bank-007", "bank-013", "bank-002"], via="inprocess"
    )
    page, kept = tmp_path / "q.html", tmp_path / "kept"
    result = runner.invoke(
        app, ["quality", str(runs), "--json", "--html", str(page), "--manifest-dir", str(kept)]
    )
    assert result.exit_code == 0, result.output
    (d,) = json.loads(result.stdout)["domains"]
    assert d["flags"] == [] and d["ranking"][:2] == ["gold", "gold-corrupt:1"] and d["tau"] > 0.6
    text = page.read_text()
    assert text.count("<svg") >= 3 and "pass rate per policy" in text and "bank@" in text
    assert text == render_html(
        quality(
            [json.loads(x) for x in (runs / "results.jsonl").read_text().splitlines()],
            str(runs / "results.jsonl"),
        )
    )
    (path,) = kept.glob("*.manifest.json")
    manifest = load_manifest(path)
    bank = load_domain("bank")
    manifest.check(bank, "bank-007")  # `serve --manifest` accepts it ...
    DomainServer(bank, tasks=manifest.valid_tasks)
    try:
        manifest.check(bank, "bank-001")  # ... and refuses a task no rollout measured
    except TaskError:
        pass
    else:
        raise AssertionError("bank-001 was not measured, so it is not kept")
    missing = runner.invoke(app, ["quality", str(tmp_path / "kept")])
    assert missing.exit_code == 2 and "results.jsonl" in missing.stderr


def test_a_domain_without_baselines_is_unmeasured() -> None:
    rows = [row("t1", "openai:m@u", 1.0), row("t1", "openai:m@u", 0.0, sample=1)]
    rows += [{"domain": "s@1", "task": "t1", "status": "scored", "reward": 1.0}]  # a `toolgym score` line
    report = quality(rows)
    assert {d.domain: d.flags for d in report.domains} == {"d@1": ["unmeasured"], "s@1": ["unmeasured"]}
    assert manifests(report) == []
    (d,) = [d for d in report.domains if d.domain == "d@1"]
    assert d.trainable_share == 1.0 and d.tasks[0].spread == 0.5


def test_curate_takes_a_policy_and_the_kept_manifest(tmp_path: Path) -> None:
    rows = healthy("bank@1") + [row("t9", "gold", 1.0, domain="bank@1")]
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    kept = tmp_path / "kept.json"
    kept.write_text(Manifest(domain="bank@1", fingerprint="f", valid_tasks=["t1", "t2"]).model_dump_json())
    args = [
        "curate",
        str(results),
        "--policy",
        "gold",
        "--manifest",
        str(kept),
        "--min-pass",
        "0",
        "--max-pass",
        "1",
        "--json",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    tasks = json.loads(result.stdout)["tasks"]
    assert [(t["task"], t["samples"]) for t in tasks] == [("t1", 1), ("t2", 1)]


def test_pass_rate_per_tier_and_policy(tmp_path: Path) -> None:
    rows = [
        *(row(t, "gold", 1.0, tier="tier-0") for t in ("t1", "t2")),
        row("t1", "random", 1.0, tier="tier-0"),
        row("t2", "random", 0.0, tier="tier-0"),
        row("t3", "gold", 1.0, tier="tier-4"),
        row("t3", "random", 0.0, tier="tier-4"),
        row("t4", "random", 0.0),  # no tier: in no tier's figure
    ]
    report = quality(rows)
    assert set(report.tiers) == {"tier-0", "tier-4"}
    assert report.tiers["tier-0"]["random"].pass_rate == 0.5 and report.tiers["tier-0"]["random"].scored == 2
    assert (
        report.tiers["tier-4"]["random"].pass_rate == 0.0 and report.tiers["tier-4"]["gold"].pass_rate == 1.0
    )
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    shown = runner.invoke(app, ["quality", str(results)])
    assert shown.exit_code == 0, shown.output
    assert "pass rate by task tier" in shown.stdout and "tier-4" in shown.stdout
    page = render_html(report)
    tiers = page.split('<table class="tiers">')[1].split("</table>")[0]
    assert "<td>50.0% (2)</td>" in tiers and "<td>0.0% (1)</td>" in tiers and "tier-4" in tiers


def test_curate_mixes_by_tier(tmp_path: Path) -> None:
    rows = [
        row(f"t{i}", "random", float(s), sample=s, tier=f"tier-{i % 2 * 4}")
        for i in range(20)
        for s in (0, 1)
    ]
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = ["curate", str(results), "--size", "6", "--json"]
    only_hard = runner.invoke(app, [*base, "--tier-mix", "tier-0=0"])
    assert only_hard.exit_code == 0, only_hard.output
    mixture = json.loads(only_hard.stdout)
    assert {e["tier"] for e in mixture["mixture"]} == {"tier-4"} and mixture["tier_weights"] == {
        "tier-0": 0.0
    }
    dropped = [t for t in mixture["tasks"] if t["tier"] == "tier-0"]
    assert dropped and all(not t["kept"] and "tier" in t["reason"] for t in dropped)
    leaning = json.loads(runner.invoke(app, [*base, "--size", "10", "--tier-mix", "tier-4=50"]).stdout)
    assert sum(e["tier"] == "tier-4" for e in leaning["mixture"]) >= 8
    bad = runner.invoke(app, [*base, "--tier-mix", "tier-4"])
    assert bad.exit_code == 2 and "NAME=WEIGHT" in bad.output
