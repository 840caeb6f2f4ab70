"""Smoke tests of the benchmark suites: they run and write reports of the documented shape.

Timings are never asserted here; the suites' own `--check` flag does that.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULT_KEYS = {"name", "rows", "median_us", "baseline", "baseline_median_us", "ratio"}


def test_core_quick_writes_a_report(tmp_path: Path) -> None:
    out = tmp_path / "core.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "core.py"), "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["suite"] == "core"
    results = report["results"]
    assert {r["name"] for r in results} >= {
        "episode",
        "episode_cycle",
        "read",
        "write",
        "write_seq",
        "write_order_seq",
        "digest",
        "digest_full",
    }
    for row in results:
        assert set(row) == RESULT_KEYS
        assert isinstance(row["name"], str)
        assert row["rows"] == 1000
        assert isinstance(row["median_us"], float) and row["median_us"] > 0
        assert isinstance(row["baseline"], str) and row["baseline"]
        assert isinstance(row["baseline_median_us"], float) and row["baseline_median_us"] > 0
        expected = row["median_us"] / row["baseline_median_us"]
        assert abs(row["ratio"] - expected) <= 0.01 * expected + 0.001  # times are rounded
    targets = {(t["name"], t["metric"]) for t in report["targets"]}
    assert targets == {
        ("episode", "ratio"),
        ("episode_cycle", "ratio"),
        ("read", "median_us"),
        ("write", "median_us"),
        ("write_seq", "ratio"),
        ("write_order_seq", "ratio"),
    }
    assert all(isinstance(t["ok"], bool) for t in report["targets"])
    assert "read" in proc.stdout  # the table was printed


def _suite(tmp_path: Path, script: str, *args: str) -> dict:
    out = tmp_path / f"{script}.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / f"{script}.py"), *args, "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["suite"] == script and report["results"]
    for row in report["results"]:
        assert set(row) == RESULT_KEYS and row["median_us"] > 0
    return report


def test_score_peer_and_validate_suites_run(tmp_path: Path) -> None:
    score = _suite(tmp_path, "score", "--quick")
    assert {r["name"] for r in score["results"]} == {"diff", "score", "score_warm"}
    peer = _suite(tmp_path, "peer", "--quick")
    assert {"episode", "score_task"} <= {r["name"] for r in peer["results"]}
    validate = _suite(tmp_path, "validate", "--domains", "office", "--reruns", "1")
    assert all(r["rows"] == 36 for r in validate["results"])


def test_profile_read_reports_the_call_and_its_parts(tmp_path: Path) -> None:
    """(It checks its hand-written read against the tool for every order before timing.)"""
    report = _suite(tmp_path, "profile_read", "--quick")
    medians = {r["name"]: r["median_us"] for r in report["results"]}
    assert set(medians) == {"call", "execute", "sql", "sql_decoded", "expression", "by_hand"}
    parts = report["meta"]["parts_us"]
    assert len(parts) == 5 and abs(sum(parts.values()) - medians["call"]) < 0.1


def test_profile_core_prints_every_view() -> None:
    """(It reaches into the episode's bookkeeping: this keeps it running as the runtime changes.)"""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "profile_core.py"), "--rows", "1000", "--reps", "30"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    for title in ("ablations", "SQL side of place_order", "statements of one write", "steps of one write"):
        assert title in proc.stdout
    assert "transfer_credit" in proc.stdout and "components" in proc.stdout


def test_attack_suite_runs_and_every_attack_call_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "attack.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "attack.py"), "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr  # the suite asserts no attack call succeeded
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["suite"] == "attack"
    assert {r["scenario"] for r in report["results"]} == {"tau2-retail", "pattern"}
    for row in report["results"]:
        assert row["attack_calls"] > 0 and row["p99_ratio"] > 0
        assert "ok" not in row["attack_outcomes"]


def test_cli_start_times_every_command_help() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "cli_start.py"), "--runs", "1", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode in (0, 1), proc.stderr  # 1: over the goal (timings are not judged here)
    report = json.loads(proc.stdout)
    timed = report["median_cpu_s"]
    assert {"toolgym --help", "toolgym serve --help", "toolgym generate --help"} <= set(timed)
    assert all(isinstance(v, float) and v > 0 for v in timed.values())
    assert report["met"] == (max(v for k, v in timed.items() if k.startswith("toolgym")) <= report["goal_s"])


def test_reading_draws_the_same_sample_for_the_same_seed(tmp_path: Path) -> None:
    """`reading.py OUT --seed S` draws kept instructions reproducibly; no tasks is an error."""
    for name, count in (("alpha", 3), ("beta", 4)):
        folder = tmp_path / "out" / name
        folder.mkdir(parents=True)
        lines = [
            json.dumps({"id": f"{name}-{i}", "instruction": f"Ask {name} {i}.", "calls": [{"name": "t"}] * i,
                        "tags": ["generated", f"tier-{min(i, 4)}", "read"]})
            for i in range(1, count + 1)
        ]  # fmt: skip
        (folder / "tasks.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    script = str(ROOT / "benchmarks" / "reading.py")
    out = tmp_path / "sample.json"

    def read(n: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, script, str(tmp_path / "out"), "--seed", "3", "--n", str(n), "--json", str(out)],
            capture_output=True,
            text=True,
            timeout=60,
        )

    samples = []
    for _ in range(2):
        proc = read(5)
        assert proc.returncode == 0, proc.stderr
        samples.append(json.loads(out.read_text()))
    assert samples[0] == samples[1] and len(samples[0]) == 5
    assert {s["domain"] for s in samples[0]} <= {"alpha", "beta"} and all(
        s["kind"] == "read" for s in samples[0]
    )
    with (tmp_path / "out" / "alpha" / "tasks.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"id": "broken", \n[1, 2]\n')  # (a bad line and a line with no instruction)
    proc = read(5)
    assert proc.returncode == 0 and "alpha/tasks.jsonl:4: not JSON" in proc.stderr, proc.stderr
    assert "alpha/tasks.jsonl:5: no instruction" in proc.stderr and len(json.loads(out.read_text())) == 5
    # with the run's report.json, a folder an earlier run left (`alpha`) is no part of the sample
    report = {"domain_results": [{"name": "alpha", "kept": False}, {"name": "beta", "kept": True}]}
    (tmp_path / "out" / "report.json").write_text(json.dumps(report), encoding="utf-8")
    proc = read(4)
    assert proc.returncode == 0 and "ignored 1 folders" in proc.stderr, proc.stderr
    assert {s["domain"] for s in json.loads(out.read_text())} == {"beta"}
    (tmp_path / "empty").mkdir()
    proc = subprocess.run(
        [sys.executable, script, str(tmp_path / "empty"), "--seed", "3"], capture_output=True, text=True
    )
    assert proc.returncode == 1 and "no tasks.jsonl" in proc.stderr
