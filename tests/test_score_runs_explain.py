"""`toolgym score`: batch mode says why each rollout below 1.0 failed (one line, or all of it with
`--explain`, and in `--json`); a transcript scored against another domain is refused naming the
domain it was recorded on, whether or not `--task` is given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.control import strip_control_codes
from typer.testing import CliRunner

from scoring.batch import WHY_CHARS, BatchScorer, one_line, summarize, why
from scoring.rollouts import run_rollouts
from toolgym.cli import app

runner = CliRunner()
TASKS = ["bank-007", "bank-013", "bank-002"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`toolgym rollout bank --policy gold --policy noop --policy random --k 1`'s runs folder."""
    folder = tmp_path_factory.mktemp("score-runs") / "runs"
    run_rollouts(["bank"], ["gold", "noop", "random"], k=1, runs=folder, tasks=TASKS, via="inprocess")
    return folder


def scored(runs: Path, tmp_path: Path, *more: str) -> tuple[str, dict[str, dict]]:
    """`score --runs RUNS --out results` stdout, and the result lines by transcript file name."""
    out = tmp_path / "scored.jsonl"
    result = runner.invoke(app, ["score", "--runs", str(runs), "--out", str(out), *more])
    assert result.exit_code == 0, result.output  # RUNS/results.jsonl is not taken for a transcript
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    return result.stdout, {Path(line["transcript"]).name: line for line in lines}


def test_each_rollout_below_one_is_listed_with_the_first_sentence_of_why(runs, tmp_path):
    stdout, lines = scored(runs, tmp_path)
    assert len(lines) == 3 * len(TASKS) and all(line["status"] == "scored" for line in lines.values())
    failed = {name: line for name, line in lines.items() if line["reward"] < 1.0}
    assert {line["task"] for line in failed.values()} == set(TASKS) and len(failed) >= len(TASKS)
    assert f"not passed: {len(failed)} rollout(s) below 1.0 or not scored" in stdout
    by_name = {name: row for row in stdout.splitlines() for name in lines if f"transcripts/{name}" in row}
    assert set(by_name) == set(failed)  # a row for each failed rollout, none for a passed one
    for name, line in failed.items():
        first = line["explanation"][0]
        assert first.startswith("Reward 0.0: ")
        shown = first.removeprefix("Reward 0.0: ")
        shown = shown[0].upper() + shown[1:]
        assert len(shown) <= WHY_CHARS  # (these verdicts are short: shown whole)
        assert line["task"] in by_name[name] and "reward 0.0" in by_name[name]
        assert shown in by_name[name], (name, by_name[name])
        for later in line["explanation"][1:]:  # only the first sentence without --explain
            assert later not in stdout


def test_explain_shows_the_whole_explanation_under_each_failed_rollout(runs, tmp_path):
    stdout, lines = scored(runs, tmp_path, "--explain")
    failed = sorted(
        (line for line in lines.values() if line["reward"] < 1.0),
        key=lambda line: (line["task"], line["transcript"]),
    )
    text = stdout.splitlines()
    for line in failed:
        (head,) = [
            i for i, row in enumerate(text) if row.startswith(f"transcripts/{Path(line['transcript']).name}")
        ]
        assert f"task {line['task']}: reward 0.0, partial {line['partial']:.3f}" in text[head]
        under = text[head + 1 : head + 1 + len(line["explanation"])]
        # (the random policy's arguments may hold control characters, which the console drops)
        assert under == [f"  - {strip_control_codes(sentence)}" for sentence in line["explanation"]]
    passed = [name for name, line in lines.items() if line["reward"] == 1.0]
    assert passed and not any(name in stdout for name in passed)


def test_json_carries_each_failed_rollouts_explanation_and_why(runs, tmp_path):
    result = runner.invoke(app, ["score", "--runs", str(runs), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["overall"]["transcripts"] == 3 * len(TASKS)
    _, lines = scored(runs, tmp_path)
    failed = {name: line for name, line in lines.items() if line["reward"] < 1.0}
    listed = {Path(x["transcript"]).name: x for x in summary["not_passed"]}
    assert set(listed) == set(failed)
    for name, x in listed.items():
        assert x["explanation"] == failed[name]["explanation"] and x["why"] == why(failed[name])
        assert (x["task"], x["status"], x["reward"]) == (failed[name]["task"], "scored", 0.0)


def test_why_is_the_first_sentence_on_one_line_cut_at_a_word():
    long = "Reward 0.0: " + " ".join(["accounts 'ACC-1' differs: balance is 5,\nexpected 10"] * 6) + "."
    line = {"status": "scored", "reward": 0.0, "explanation": [long, "Partial credit 0.00."]}
    text = why(line)
    assert len(text) <= WHY_CHARS and text.endswith("…") and "\n" not in text
    assert text.startswith("Accounts 'ACC-1' differs: balance is 5, expected 10 accounts")
    full, kept = " ".join(long.split()), text[1:-1]
    assert kept in full and full[full.index(kept) + len(kept)] in " ,;:"  # cut at a word
    assert one_line("short.") == "short."
    error = {"status": "error", "error": "runs/x.jsonl: line 2: bad"}
    infra = {"status": "failed-infra", "reward": None, "explanation": ["Not scored: call 0 (f) failed."]}
    assert why(error) == "runs/x.jsonl: line 2: bad" and why(infra) == "Not scored: call 0 (f) failed."


def test_not_passed_keeps_rollouts_below_one_and_not_scored_ones_not_errors():
    def line(name: str, status: str, reward: float | None) -> dict:
        return {
            "transcript": name,
            "domain": "d@1",
            "task": "t",
            "status": status,
            "reward": reward,
            "partial": reward,
            "explanation": [f"{name} said."],
        }

    lines = [
        line("pass", "scored", 1.0),
        line("fail", "scored", 0.0),
        line("infra", "failed-infra", None),
        line("cut", "incomplete", None),
        {"transcript": "bad", "status": "error", "error": "bad", "reward": None},
    ]
    listed = summarize(lines)["not_passed"]
    assert [x["transcript"] for x in listed] == ["cut", "fail", "infra"]
    assert [x["why"] for x in listed] == ["cut said.", "fail said.", "infra said."]


@pytest.fixture(scope="module")
def office_transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("office-runs")
    run_rollouts(["office"], ["gold"], k=1, runs=folder, tasks=["office-001"], via="inprocess")
    (path,) = (folder / "transcripts").glob("*.jsonl")
    return path


@pytest.mark.parametrize("task", [[], ["--task", "bank-001"]], ids=["no-task", "with-task"])
def test_a_transcript_of_another_domain_is_refused_naming_its_domain(office_transcript, task):
    result = runner.invoke(app, ["score", str(office_transcript), "--domain", "bank", *task])
    assert result.exit_code == 1
    assert (
        f"error: {office_transcript} is for domain 'office', not 'bank' "
        "(recorded on 'office'; leave out --domain to score it there)"
    ) in " ".join(result.stderr.split())
    assert "has no task" not in result.stderr


def test_batch_scoring_on_another_domain_gives_that_error_line(office_transcript):
    line = BatchScorer(domain="bank").score(office_transcript)
    assert line["status"] == "error" and "is for domain 'office', not 'bank'" in line["error"]
    assert BatchScorer().score(office_transcript)["reward"] == 1.0  # its own domain scores it
