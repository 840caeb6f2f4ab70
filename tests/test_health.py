"""`toolgym report` and `toolgym curate` end to end, on transcripts written by real episodes."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from simulator import ToolError
from simulator.runtime.transcript import FileSink
from toolgym.cli import app

runner = CliRunner()


def make_runs(shop, folder, sessions: int = 4, faults_in: int = 1) -> None:
    for s in range(sessions):
        sink = FileSink(folder / f"s{s}.jsonl")
        ep = shop.episode(seed=s, transcript=sink)
        ep.call("get_customer", {"customer_id": "C-0001"})
        try:
            ep.call("cancel_order", {"order_id": "O-0001"})  # a tool error: shipped
        except ToolError:
            pass
        if s < faults_in:
            ep.fail(
                "set_note", {"customer_id": "C-0001", "notes": "x"}, "injected fault: transient backend error"
            )
        ep.end()
        sink.close()


def test_report_html_json_and_quarantine(shop, tmp_path):
    runs = tmp_path / "runs"
    make_runs(shop, runs)
    results = tmp_path / "results.jsonl"
    rows = [{"domain": "shop@0.1.0", "task": f"t{i % 3}", "reward": float(i % 2)} for i in range(9)] + [
        {"domain": "shop@0.1.0", "task": "t0", "status": "failed-infra"}
    ]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    page = tmp_path / "health.html"
    result = runner.invoke(
        app, ["report", str(runs), "--results", str(results), "--html", str(page), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (shop_row,) = data["domains"]
    assert shop_row["calls"] == 9 and shop_row["injected"] == 1 and shop_row["tool_errors"] == 4
    assert (
        shop_row["infra_error_rate"] == round(1 / 9, 4)
        and shop_row["quarantined"]
        and data["quarantine"] == ["shop@0.1.0"]
    )
    assert shop_row["infra_failed_rollouts"] == 1 and sum(shop_row["reward_histogram"]) == 9
    text = page.read_text()
    assert "<svg" in text and "quarantined" in text and "<script" not in text
    calm = runner.invoke(app, ["report", str(runs), "--threshold", "0.5", "--json"])
    assert json.loads(calm.stdout)["quarantine"] == []


def test_curate_cli_writes_a_manifest(tmp_path):
    results = tmp_path / "results.jsonl"
    rows = [
        {"domain": "bank@1.0.0", "task": t, "reward": float(i < n)}
        for t, n in (("a", 3), ("b", 10), ("c", 5))
        for i in range(10)
    ]
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "mix.json"
    result = runner.invoke(app, ["curate", str(results), "--seed", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    manifest = json.loads(out.read_text())
    assert {e["task"] for e in manifest["mixture"]} == {"a", "c"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"domain": "x", "task": "t"}\n{oops\n')
    broken = runner.invoke(app, ["curate", str(bad)])
    assert broken.exit_code == 1 and "line 1" in broken.stderr


def test_timeouts_are_counted_from_the_transcripts(shop, tmp_path):
    from scoring.curation.health import health

    runs = tmp_path / "runs"
    sink = FileSink(runs / "t.jsonl")
    ep = shop.episode(transcript=sink)
    ep.call("get_customer", {"customer_id": "C-0001"})
    ep.fail("set_note", {"customer_id": "C-0001", "notes": "x"}, "backend timed out", injected=False)
    sink.close()
    (row,) = health(runs).domains
    assert row.timeouts == 1 and row.timeout_rate == 0.5 and row.infra_errors == 1
