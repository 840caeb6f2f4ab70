"""The generator's fast path gives the same verdicts: candidates checked on the domain loaded once
(`check_loaded_task`) get exactly what `check_task` on a folder holding them in tasks.jsonl gives."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from scoring import load_domain
from scoring.tasks import Task
from scoring.validation.validate import TaskValidation, check_loaded_task, check_task, domain_ids
from simulator.builders import dump_jsonl
from toolgen.synth import tasks as synth_tasks
from toolgen.synth.lookups import World
from toolgen.synth.run import PHASES, synthesize_domain
from toolgen.synth.walks import propose

from .synth_kit import SHOP, planned
from .test_validate import EXPECTED, TASKS, broken  # noqa: F401 - `broken` is a fixture


def _same(a: TaskValidation, b: TaskValidation) -> None:
    keep = {"task", "status", "findings", "digest", "mutations_tried", "orders_tried"}
    assert a.model_dump(include=keep) == b.model_dump(include=keep)


def test_every_broken_task_gets_the_same_verdict_on_the_loaded_domain(broken, tmp_path):  # noqa: F811
    bare = tmp_path / "shop"
    shutil.copytree(broken, bare)
    (bare / "tasks.jsonl").unlink()  # the generator's case: the candidates are in no file
    domain = load_domain(bare)
    ids = domain_ids(domain)
    for task_id in sorted(EXPECTED):
        task = Task.model_validate(TASKS[task_id])
        fast = check_loaded_task(domain, task, ids=ids)
        _same(check_task(str(broken), task_id), fast)
        assert fast.status == EXPECTED[task_id]


def test_generated_candidates_get_the_same_verdicts_both_ways(tmp_path):
    """Every candidate the walks propose for a generated domain, valid or not, both ways."""
    plan, ops = planned(SHOP)
    seen: dict[str, Any] = {}

    def stage(builder, folder, schema, toolset, *, seed, domain=None):
        world = World(domain, schema, toolset, builder.rows)
        try:
            seen["candidates"] = propose(world, random.Random(synth_tasks._stream(seed, domain.spec.name)))
        finally:
            world.close()
        seen["folder"], seen["domain"] = folder, domain
        return 5, {}

    result = synthesize_domain(plan, ops, tmp_path / "out", {}, seed=3, rows=12, tasks=stage)
    assert result.kept, result.reason
    domain, candidates = seen["domain"], seen["candidates"]
    raws = [synth_tasks._raw(f"c-{i:03d}", c) for i, c in enumerate(candidates)]
    scratch = tmp_path / "scratch" / plan.name
    shutil.copytree(seen["folder"], scratch)
    (scratch / "tasks.jsonl").write_text(dump_jsonl(raws), encoding="utf-8")
    ids = domain_ids(domain)
    statuses = set()
    for raw in raws:
        fast = check_loaded_task(domain, Task.model_validate(raw), ids=ids)
        _same(check_task(str(scratch), raw["id"]), fast)
        statuses.add(fast.status)
    assert "valid" in statuses and len(raws) >= 5


def test_a_domain_result_says_where_its_time_went(tmp_path):
    plan, ops = planned(SHOP)
    result = synthesize_domain(plan, ops, tmp_path, {}, seed=0, rows=12)
    assert set(result.seconds) == set(PHASES) - {"llm"} and all(s >= 0 for s in result.seconds.values())
    assert result.candidates >= result.tasks_kept >= 5
    assert sum(result.tasks_rejected.values()) <= result.candidates
    lines = (Path(result.folder or "") / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == result.tasks_kept and all(json.loads(line)["calls"] for line in lines)


def test_reachability_keeps_the_state_of_a_few_domains_only(monkeypatch):
    """A generation run validates thousands of domains in one process: what reachability works out
    per domain (a reader episode among it) is kept for the most recent few, the rest closed."""
    from scoring.validation import reach

    monkeypatch.setattr(reach, "MAX_DOMAINS", 2)
    monkeypatch.setattr(reach, "_SEEN", reach.OrderedDict())
    domains = [load_domain(name) for name in ("bank", "office", "logistics")]
    readers = []
    for domain in domains:
        reach.ambient(domain)
        readers.append(reach._reader(domain)[0])
    assert list(reach._SEEN) == [d.fingerprint() for d in domains[1:]]
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        readers[0].conn.execute("SELECT 1")
    assert readers[2].conn.execute("SELECT 1").fetchone() == (1,)


def test_the_scale_benchmark_runs_and_summarizes_its_log(tmp_path):
    """benchmarks/toolgen_scale.py on the synth fixtures (a smoke test: no time is asserted)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    script, corpus = root / "benchmarks" / "toolgen_scale.py", root / "tests" / "fixtures" / "synth"
    log, figures = tmp_path / "log.jsonl", tmp_path / "figures.json"
    args = [str(corpus), "--out", str(tmp_path / "out"), "--workers", "1", "--quiet"]
    ran = subprocess.run(
        [sys.executable, str(script), *args, "--log", str(log), "--json", str(figures)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    got = json.loads(figures.read_text(encoding="utf-8"))
    assert got["domains_done"] == got["domains_planned"] == len(log.read_text().splitlines()) - 1
    assert (
        got["tasks_valid"] >= 5 * got["domains_kept"] > 0
        and got["candidates_validated"] >= got["tasks_valid"]
    )
    assert set(got["phases_s"]) == set(PHASES) and got["cpu_s"] > 0
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["tasks"]["kept"] == got["tasks_valid"]
    summary = subprocess.run(
        [sys.executable, str(script), "--summarize", str(log), "--json", str(tmp_path / "again.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert summary.returncode == 0, summary.stderr
    again = json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))
    assert {k: again[k] for k in ("domains_kept", "tasks_valid", "cpu_s")} == {
        k: got[k] for k in ("domains_kept", "tasks_valid", "cpu_s")
    }
    assert "valid tasks" in ran.stdout and "where the time goes" in summary.stdout


def test_a_domain_over_its_budget_in_a_worker_is_left_out_with_the_reason(tmp_path, monkeypatch):
    """A runaway domain (a loop, memory without end) must not hold a worker for the rest of a run."""
    from toolgen.synth.run import synthesize

    plan, ops = planned(SHOP)
    twins = [plan, plan.model_copy(update={"name": f"{plan.name}-twin"})]
    # far below any domain's time (writing its folder alone takes longer), however warm the worker
    monkeypatch.setenv("TOOLGYM_DOMAIN_SECONDS", "0.001")
    results = synthesize(twins, list(ops.values()), tmp_path, rows=12, workers=2)
    assert [r.kept for r in results] == [False, False]
    assert all("the domain took over 0.001 s" in (r.reason or "") for r in results)
    assert not any(p.is_dir() for p in tmp_path.iterdir())
    monkeypatch.delenv("TOOLGYM_DOMAIN_SECONDS")
    assert all(r.kept for r in synthesize(twins, list(ops.values()), tmp_path, rows=12, workers=2))
