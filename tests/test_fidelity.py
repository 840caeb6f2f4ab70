"""benchmarks/fidelity.py: a domain's replay of a peer's gold calls against the peer's own replay.

The hand-written tau2-retail port scores 1.0 on every total; a copy of it with one effect removed
scores less; the benchmark reads any tool list, data, tasks and expected replay in these formats.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from typing import Any

from scoring import load_domain
from simulator.builders import arg, get, inputs, param, ref, return_, update
from tests.conftest import ROOT, shared_file
from toolgen.snapshot import load_collections, read_snapshot, seed_domain

SCRIPT = ROOT / "benchmarks" / "fidelity.py"
RETAIL = ROOT / "domains" / "tau2-retail"
_spec = importlib.util.spec_from_file_location("fidelity_benchmark", SCRIPT)
assert _spec is not None and _spec.loader is not None
fidelity = importlib.util.module_from_spec(_spec)
sys.modules["fidelity_benchmark"] = fidelity  # (dataclasses look their module up)
_spec.loader.exec_module(fidelity)


def peer_inputs() -> tuple[Any, ...]:
    spec = shared_file("peers/tau2/retail/tool_schemas.json")
    base = spec.parent
    return (
        fidelity.declared_reads(spec),
        load_collections(base / "db.json"),
        fidelity.load_tasks(base / "tasks.json"),
        fidelity.load_expected(base / "expected.jsonl"),
        fidelity.load_stated(ROOT / "benchmarks" / "fidelity_stated" / "tau2-retail.json"),
    )


def test_the_port_scores_one_on_every_total():
    result = fidelity.measure(load_domain(RETAIL), *peer_inputs())
    totals = result.totals()
    assert {name: totals[name] for name in fidelity.TOTALS} == dict.fromkeys(fidelity.TOTALS, 1.0), (
        result.misses[:5]
    )
    counts = totals["counts"]
    assert (counts["calls"], counts["failing"], counts["tasks"]) == (550, 18, 114)
    assert counts["stated_changes"]["peer"] > 0 and counts["unstated_changes"]["peer"] > 0
    assert result.misses == [] and result.skipped == []


def test_removing_one_effect_from_the_port_drops_the_totals(tmp_path):
    copy = shutil.copytree(RETAIL, tmp_path / "tau2-retail")
    text = (copy / "domain.yaml").read_text(encoding="utf-8")
    effect = "set: {status: cancelled, cancel_reason: $args.reason}"
    assert text.count(effect) == 1
    (copy / "domain.yaml").write_text(
        text.replace(effect, "set: {cancel_reason: $args.reason}"), encoding="utf-8"
    )
    reads, data, tasks, expected, stated = peer_inputs()
    cancelling = [
        tid for tid, calls in tasks.items() if any(c["name"] == "cancel_pending_order" for c in calls)
    ]
    result = fidelity.measure(load_domain(copy), reads, data, tasks, expected, stated, only=cancelling[:8])
    totals = result.totals()
    assert totals["field_recall"] < 1.0 and totals["changed_records_exact"] < 1.0
    status = result.fields["orders.status"]  # (other tools of these tasks change statuses too)
    assert status.ours == status.matched < status.peer
    assert any("orders[" in m and ".status changed by the peer only" in m for m in result.misses)


def test_a_call_of_a_tool_the_domain_lacks_is_a_miss():
    tasks = {"t": [{"name": "no_such_tool", "arguments": {}}]}
    expected = {
        "t": {"gold_calls": [{"name": "no_such_tool", "error": False, "output": "ok"}], "changes": {}}
    }
    result = fidelity.measure(load_domain(RETAIL), {"no_such_tool": True}, {}, tasks, expected, None)
    totals = result.totals()
    assert totals["errors_agree"] == 0.0 and totals["reads_equal"] == 0.0
    assert result.tools["no_such_tool"].missing == 1
    assert result.misses == ["task t call 0 no_such_tool: the domain has no such tool"]


def test_stated_changes_quote_the_spec_and_name_fields_of_the_data():
    spec = shared_file("peers/tau2/retail/tool_schemas.json")
    data = load_collections(spec.parent / "db.json")
    raw = json.loads(spec.read_text(encoding="utf-8"))
    texts = {}
    for entry in raw["assistant"]:
        fn = entry["schema"]["function"]
        parts = [
            fn["description"],
            *(p.get("description", "") for p in fn["parameters"]["properties"].values()),
        ]
        texts[fn["name"]] = " ".join(re.sub(r"\s+", " ", p) for p in parts)
    stated = json.loads(
        (ROOT / "benchmarks" / "fidelity_stated" / "tau2-retail.json").read_text(encoding="utf-8")
    )
    for tool, entries in stated["tools"].items():
        assert tool in texts, tool
        for e in entries:
            assert re.sub(r"\s+", " ", e["sentence"]) in texts[tool], (tool, e["sentence"])
            assert any(e["field"] in record for record in data[e["collection"]].values()), e


def test_output_comparison_reads_json_and_ignores_null_keys():
    same, as_json = fidelity.same, fidelity.as_json
    assert same(as_json('{"a": 1, "b": null}'), as_json({"a": 1.0}))
    assert same(as_json("4.0"), as_json("4.0")) and not same(as_json("true"), as_json(1))
    assert same(as_json("not json"), "not json") and not same(as_json('["x"]'), ["x", "y"])


def test_any_peer_in_these_formats(tmp_path):
    """A two-tool API (plain function-calling entries, one with an MCP annotation) on its own data."""
    db = {
        "notes": {
            "n1": {"id": "n1", "text": "hi", "done": False},
            "n2": {"id": "n2", "text": "yo", "done": False},
        }
    }
    (tmp_path / "db.json").write_text(json.dumps(db), encoding="utf-8")
    builder = seed_domain(read_snapshot(tmp_path / "db.json"), "notes")
    note = inputs({"id": param("string")}, ["id"])
    builder.tool("get_note", "Get a note.", "read", note, [get("notes", key={"id": arg("id")}, as_="n", error="No such note"), return_({"text": ref("n", "text"), "done": ref("n", "done")})])  # fmt: skip
    builder.tool("finish_note", "Mark a note done.", "write", note, [update("notes", {"done": True}, key={"id": arg("id")}), return_("ok")])  # fmt: skip
    builder.write(tmp_path / "notes")
    spec = [
        {"type": "function", "function": {"name": "get_note"}, "annotations": {"readOnlyHint": True}},
        {"type": "function", "function": {"name": "finish_note"}},
    ]
    (tmp_path / "tools.json").write_text(json.dumps(spec), encoding="utf-8")
    tasks = [{"id": "a", "evaluation_criteria": {"actions": [
        {"name": "finish_note", "arguments": {"id": "n1"}},
        {"name": "get_note", "arguments": {"id": "n1"}},
        {"name": "get_note", "arguments": {"id": "n9"}},
    ]}}]  # fmt: skip
    (tmp_path / "tasks.json").write_text(json.dumps(tasks), encoding="utf-8")
    final = {"id": "n1", "text": "hi", "done": True}
    expected = {
        "task_id": "a",
        "gold_calls": [
            {"name": "finish_note", "error": False, "output": "ok"},
            {"name": "get_note", "error": False, "output": '{"text": "hi", "done": true, "tags": null}'},
            {"name": "get_note", "error": True, "output": "Error: No such note"},
        ],
        "changes": {"notes": {"n1": final}},
    }
    (tmp_path / "expected.jsonl").write_text(json.dumps(expected) + "\n", encoding="utf-8")
    stated = {
        "tools": {"finish_note": [{"collection": "notes", "field": "done", "sentence": "Mark a note done."}]}
    }
    (tmp_path / "stated.json").write_text(json.dumps(stated), encoding="utf-8")
    out = tmp_path / "out.json"
    args = [
        "--spec",
        "tools.json",
        "--data",
        "db.json",
        "--tasks",
        "tasks.json",
        "--expected",
        "expected.jsonl",
    ]
    proc = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            *args,
            "--domain",
            "notes",
            "--stated",
            "stated.json",
            "--json",
            str(out),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert {k: report["totals"][k] for k in fidelity.TOTALS} == dict.fromkeys(fidelity.TOTALS, 1.0)
    assert report["tools"]["get_note"]["reads"] == 1 and report["tools"]["finish_note"]["reads"] == 0
    assert report["fields"]["notes.done"] == {"stated": True, "peer": 1, "ours": 1, "matched": 1}


def test_from_the_spec_and_the_data_alone(tmp_path):
    """Without --domain the benchmark generates retail from tool_schemas.json and db.json; the
    floors are today's figures (docs/notes/2026-12-05-from-data.md), so a regression shows."""
    shared_file("peers/tau2/retail/tool_schemas.json")
    out = tmp_path / "fidelity.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--json", str(out)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    totals = json.loads(out.read_text())["totals"]
    assert totals["errors_agree"] >= 0.95 and totals["counts"]["failing_agree"] >= 16
    assert totals["reads_equal"] >= 0.95
    assert totals["changed_records_exact"] >= 0.8
    assert totals["field_recall"] >= 0.9 and totals["field_precision"] >= 0.9
