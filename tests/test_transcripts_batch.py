"""One bad file never stops a batch: `score --runs`, `stats` and `report` give one error per bad
file (nested 50,000 deep, a lone surrogate, over the size limit, malformed) and go on."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from scoring import load_domain
from scoring.batch import BatchScorer, summarize
from scoring.curation.health import health
from scoring.curation.metrics import collect
from scoring.errors import TranscriptError
from tests.conftest import FIXTURES
from tests.test_scoring_properties import FORMATS, record
from toolgym.cli import app

runner = CliRunner()
DEEP = 50_000


@pytest.fixture
def shop_dir(tmp_path):
    folder = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    shutil.copy(FIXTURES / "shop_tasks.jsonl", folder / "tasks.jsonl")
    return folder


def openai_call(arguments: str, message: str = "done") -> str:
    calls = [{"id": "c1", "type": "function", "function": {"name": "get_customer", "arguments": arguments}}]
    return json.dumps(
        {
            "domain": "shop",
            "task": "lookup",
            "messages": [
                {"role": "user", "content": "task"},
                {"role": "assistant", "content": None, "tool_calls": calls},
                {"role": "tool", "tool_call_id": "c1", "content": "Error: bad arguments"},
                {"role": "assistant", "content": message},
            ],
        }
    )


def hostile_runs(folder, shop_dir):
    """A runs folder with one good transcript and one hostile file of each kind."""
    folder.mkdir()
    domain = load_domain(shop_dir)
    (folder / "good.jsonl").write_text(FORMATS["toolgym"](record(domain, domain.task("cancel"), None, 0)))
    (folder / "deep-args.json").write_text(openai_call("[" * DEEP + "]" * DEEP))
    (folder / "deep-doc.json").write_text('{"messages": ' + "[" * DEEP + "]" * DEEP + "}")
    (folder / "surrogate.json").write_text(openai_call('{"customer_id": "\\ud800"}', "Customer \\ud800"))
    (folder / "surrogate-task.json").write_text(
        json.dumps({"task": "\ud800" * 3, "messages": [{"role": "assistant", "content": "x"}]})
    )
    (folder / "huge.jsonl").write_text(
        '{"type": "header", "domain": "shop", "version": "0.1.0"}\n' + " " * 300_000
    )
    (folder / "malformed.jsonl").write_text('{"type": "header", "domain": "shop"\n{"type": "ca\n{}\n')
    (folder / "enum.json").write_text(json.dumps({"task": "x" * 900_000, "messages": []}))


def test_score_runs_gives_one_error_line_per_bad_file_and_scores_the_rest(tmp_path, shop_dir, monkeypatch):
    monkeypatch.setenv("TOOLGYM_MAX_TRANSCRIPT_BYTES", "200000")
    runs = tmp_path / "runs"
    hostile_runs(runs, shop_dir)
    out = tmp_path / "results.jsonl"
    result = runner.invoke(app, ["score", "--runs", str(runs), "--domain", str(shop_dir), "--out", str(out)])
    assert result.exit_code == 1, result.output  # some files could not be scored
    lines = {json.loads(line)["transcript"].rsplit("/", 1)[-1]: json.loads(line) for line in out.open()}
    assert len(lines) == 8
    assert lines["good.jsonl"]["reward"] == 1.0
    # a malformed call (too deep, not Unicode) is the agent's failed call: the rest is scored
    for name in ("deep-args.json", "surrogate.json"):
        line = lines[name]
        assert line["status"] == "scored" and line["reward"] == 0.0 and line["failed_calls"] == 1
        assert "Call 0 (get_customer) was malformed and not run" in " ".join(line["explanation"])
    errors = {name: line["error"] for name, line in lines.items() if line["status"] == "error"}
    assert set(errors) == {
        "deep-doc.json",
        "surrogate-task.json",
        "huge.jsonl",
        "malformed.jsonl",
        "enum.json",
    }
    assert "nested too deeply" in errors["deep-doc.json"]
    assert (
        "over the 0.2 MiB limit" in errors["huge.jsonl"]
        and "TOOLGYM_MAX_TRANSCRIPT_BYTES" in errors["huge.jsonl"]
    )
    assert "malformed.jsonl: line 2" in errors["malformed.jsonl"]
    assert all(len(e) < 2200 for e in errors.values())  # a 0.9 MB value is not echoed
    assert "\\ud800" in errors["surrogate-task.json"]  # shown escaped, and the line was written
    summary = summarize(list(lines.values()))
    assert summary["overall"]["errors"] == 5 and summary["overall"]["scored"] == 3


def test_stats_and_report_list_bad_transcripts_as_errors(tmp_path, shop_dir, monkeypatch):
    monkeypatch.setenv("TOOLGYM_MAX_TRANSCRIPT_BYTES", "200000")
    runs = tmp_path / "runs"
    hostile_runs(runs, shop_dir)
    (runs / "deep.jsonl").write_text(
        '{"type": "header", "domain": "shop", "version": "0.1.0"}\n' + "[" * DEEP + "\n"
    )
    (runs / "chat.jsonl").write_text('{"role": "user", "content": "hi"}\n')
    report = collect(runs)
    assert [s["file"].rsplit("/", 1)[-1] for s in report["sessions"]] == ["good.jsonl"]
    bad = {e["file"].rsplit("/", 1)[-1]: e["error"] for e in report["errors"]}
    assert set(bad) == {"chat.jsonl", "deep.jsonl", "huge.jsonl", "malformed.jsonl"}
    assert "no header record" in bad["chat.jsonl"] and "nested too deeply" in bad["deep.jsonl"]
    assert len(health(runs).errors) == 4
    result = runner.invoke(app, ["stats", str(runs), "--json"])
    assert result.exit_code == 0 and len(json.loads(result.stdout)["errors"]) == 4
    assert runner.invoke(app, ["report", str(runs)]).exit_code == 0


def test_a_scorer_never_raises_for_a_bad_file(tmp_path, shop_dir):
    scorer = BatchScorer(domain=str(shop_dir))
    path = tmp_path / "x.json"
    for text in ("[" * DEEP, "\x00", "[1, 2]", '{"messages": "no"}', "null"):
        path.write_text(text)
        assert scorer.score(path)["status"] == "error"
    scorer.close()


def test_one_reader_serves_scoring_and_metrics(tmp_path):
    """Scoring and serving metrics read transcripts through the same function: a last line cut off
    by a killed server is `truncated` for metrics and an error naming the line for scoring."""
    import inspect

    from scoring.curation import metrics
    from scoring.transcripts import read_records

    text = (
        '{"type": "header", "domain": "d", "version": "1.0.0", "seed": 0}\n'
        '{"type": "call", "index": 0, "tool": "t", "arguments": {}, "ok": true}\n'
        '{"type": "call", "ind\n'
    )
    records, meta, cut = read_records(text, "s.jsonl", cut_tail=True)
    assert [r.where for r in records] == ["line 1", "line 2"] and meta == {} and cut is True
    with pytest.raises(TranscriptError, match="s.jsonl: line 3: not valid JSON"):
        read_records(text, "s.jsonl")
    with pytest.raises(TranscriptError, match="line 2: not valid JSON"):  # only the last line may be cut
        read_records(text.replace('"ok": true}', '"ok": tr'), "s.jsonl", cut_tail=True)
    assert "json.loads" not in inspect.getsource(metrics)
