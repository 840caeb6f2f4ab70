"""Scoring by example: answer facts, transcript import and its errors, broken tasks, partial credit and explanations, the report's schema, and the `toolgym score` CLI."""

from __future__ import annotations

import io
import json
import shutil
from decimal import Decimal

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from scoring import (
    diff_states,
    expected_episode,
    find_facts,
    load_domain,
    load_transcript,
    parse_transcript,
    score_rollout,
)
from scoring.errors import TranscriptError
from scoring.report import ScoreReport, render
from scoring.tasks import Call, Task
from simulator import TaskError
from simulator.serve import labels
from tests.conftest import FIXTURES
from tests.test_labels import SESSION, server_records
from tests.test_scoring_properties import FORMATS, make_task, record, score
from toolgym import schemas
from toolgym.cli import app

TASKS = FIXTURES / "shop_tasks.jsonl"


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    lines = TASKS.read_text().splitlines()
    return {t.id: t for t in (Task.model_validate_json(line) for line in lines if line.strip())}


@pytest.fixture
def shop_dir(tmp_path):
    """The test shop with the scoring tasks, as a domain folder."""
    folder = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    shutil.copy(TASKS, folder / "tasks.jsonl")
    return folder


# -- answer facts --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "fact", "found"),
    [
        ("The total is $1327.", "327", False),
        ("The total is $1327.", 1327, True),
        ("You have 14 items.", "4", False),
        ("Rated 4.5 stars.", 4, False),
        ("Rated 4 stars.", 4, True),
        ("Refunded $1,327.50 today.", 1327.5, True),
        ("Refunded $1,327.50 today.", "1327.50", True),
        ("Refunded $1,327.50 today.", "$1,327.5", True),
        ("She declined: TOMASZ WIERZBICKI.", "Tomasz Wierzbicki", True),
        ("Tomasz Nowak and Ewa Wierzbicki", "Tomasz Wierzbicki", False),
        ("Room a4 is free.", "4", False),
        ("Order O-0001 shipped.", "O-0001", True),
        ("Order O-1 shipped.", "O-0001", False),
        ("Balance: -5 EUR", -5, True),
        ("Balance: 5 EUR", -5, False),
        ("It is true.", True, True),
        ("Email naledi.mokoena@halcyon.example now", "naledi.mokoena@halcyon.example", True),
    ],
)
def test_answer_facts_match_tokens_not_substrings(message, fact, found):
    assert find_facts(message, [fact]) == [found]


def test_no_message_finds_no_fact():
    assert find_facts(None, ["x", 1]) == [False, False]


@given(st.integers(0, 10**9), st.integers(1, 9))
def test_a_number_never_matches_inside_a_longer_number(n, digit):
    assert find_facts(f"paid ${digit}{n} and {n}{digit} and {n}.{digit}5", [n]) == [False]
    assert find_facts(f"paid ${n:,} in total", [n]) == [True]


@given(st.decimals(min_value=0, max_value=10**7, places=2, allow_nan=False, allow_infinity=False))
def test_money_matches_by_value(amount: Decimal):
    assert find_facts(f"Refund of ${amount:,.2f} issued.", [float(amount)]) == [True]


# -- transcripts ----------------------------------------------------------------------------------


def test_every_format_is_detected_and_normalised(shop, tasks):
    task = tasks["order"]
    records = record(shop, task, None, seed=2, message="Ordered.")
    for fmt, convert in FORMATS.items():
        rollout = parse_transcript(convert(records))
        assert rollout.format == fmt
        assert (rollout.domain, rollout.task, rollout.seed) == ("shop", "order", 2)
        assert [(c.name, c.arguments, c.outcome) for c in rollout.calls] == [
            ("place_order", task.calls[0].arguments, "ok")
        ]
        assert rollout.final_message == "Ordered."


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            '{"type": "header", "domain": "shop", "version": "0.1.0"}\n{"type": "call", "index": 0, "to',
            "line 2",
        ),
        ('[{"role": "user", "content": "hi"},\n {"role": "assistant", "content": "he', "line 2 column"),
        (
            '{"role": "assistant", "content": [{"type": "tool_use", "id": "x", "input": {}}]}\n',
            "line 1 content[0]",
        ),
        ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}\n', "line 1"),
        ('{"role": "tool", "tool_call_id": "nope", "content": "x"}\n', "line 1"),
        (
            '{"type": "call", "index": 0, "tool": "x", "arguments": {}, "ok": true}\n{"type": "banana"}\n',
            "line 2",
        ),
        ('{"hello": "world"}\n{"x": 1}\n', "line 1"),
        ("", "file"),
    ],
)
def test_bad_transcripts_name_the_place(text, where):
    with pytest.raises(TranscriptError) as info:
        parse_transcript(text, source="t.jsonl")
    assert f"t.jsonl: {where}" in str(info.value)


def test_unknown_tool_that_succeeded_is_a_transcript_error_but_a_failed_one_is_scored(shop, tasks):
    header = {"type": "header", "domain": "shop", "version": "0.1.0", "task": "cancel", "seed": 0}
    call = {"type": "call", "index": 0, "tool": "refund_everything", "arguments": {}, "ok": True}
    with pytest.raises(TranscriptError, match=r"line 2: unknown tool 'refund_everything'"):
        score_rollout(shop, parse_transcript(f"{json.dumps(header)}\n{json.dumps(call)}\n"), tasks["cancel"])
    failed = {**call, "ok": False, "error": "Unknown tool", "error_kind": "tool"}
    report = score_rollout(
        shop, parse_transcript(f"{json.dumps(header)}\n{json.dumps(failed)}\n"), tasks["cancel"]
    )
    assert report.reward == 0.0 and report.failed_calls == 1 and not report.warnings


def test_a_transcript_for_another_domain_is_refused(shop, tasks):
    rollout = parse_transcript(json.dumps({"type": "header", "domain": "bank", "version": "1.0.0"}))
    with pytest.raises(TranscriptError, match="for domain 'bank', not 'shop'"):
        score_rollout(shop, rollout, tasks["cancel"])


def test_load_transcript_reads_a_file(tmp_path, shop, tasks):
    path = tmp_path / "run.json"
    path.write_text(FORMATS["openai"](record(shop, tasks["cancel"], None, 0)))
    assert load_transcript(path).source == str(path)
    with pytest.raises(TranscriptError, match="cannot be read"):
        load_transcript(tmp_path / "missing.jsonl")


# -- gold replay ----------------------------------------------------------------------------------


def test_a_failing_gold_call_breaks_the_task_loudly(shop):
    bad = Task(id="bad", instruction="x", calls=[Call(name="cancel_order", arguments={"order_id": "O-0001"})])
    with pytest.raises(TaskError, match=r"task bad: gold call 0 \(cancel_order\) failed"):
        expected_episode(shop, bad)
    wrong = Task(
        id="wrong",
        instruction="x",
        calls=[Call(name="cancel_order", arguments={"order_id": "O-0002"}, expect_error=True)],
    )
    with pytest.raises(TaskError, match="marked expect_error but succeeded"):
        score_rollout(
            shop, parse_transcript('{"type": "header", "domain": "shop", "version": "0.1.0"}'), wrong
        )


def test_refusal_needs_the_answer_fact_and_no_change(shop, tasks):
    refuse = tasks["refuse"]
    good = score(shop, refuse, record(shop, refuse, None, 0, "O-0001 has shipped, so I cannot cancel it."))
    assert good.reward == 1.0
    silent = score(shop, refuse, record(shop, refuse, [], 0))
    assert silent.reward == 0.0 and "There is no final message" in " ".join(silent.explanation)


# -- diffs, partial credit, explanations -------------------------------------------------------------


def test_a_no_op_fails_a_write_task_and_says_why(shop, tasks):
    report = score(shop, tasks["order"], record(shop, tasks["order"], [], 0, "Done!"))
    assert report.reward == 0.0 and report.partial == 0.0
    text = "\n".join(report.explanation)
    assert 'customers "C-0003" was not changed: balance should be 272.0 (is 300.0)' in text
    assert 'orders: a row {customer_id="C-0003"' in text and "should be created" in text
    assert {(r.table, r.change) for r in report.diff.missing} == {
        ("customers", "update"),
        ("products", "update"),
        ("orders", "create"),
        ("order_items", "create"),
    }


def test_partial_credit_counts_changes_made_minus_collateral(shop, tasks):
    task = tasks["two-orders"]  # 2 orders (order, item, product, customer each) + a note on C-0011
    first, second, _note = task.calls
    report = score(shop, task, record(shop, task, [first, second], 0))
    # 8 expected row changes; C-0011's row is half right (balance yes, notes no)
    assert report.diff.expected_changes == 8 and report.diff.credit == 7.5
    assert report.partial == pytest.approx(7.5 / 8)
    assert 'customers "C-0011" differs: notes is null, expected "gift".' in report.explanation
    collateral = Call(name="set_note", arguments={"customer_id": "C-0001", "notes": "oops"})
    worse = score(shop, task, record(shop, task, [*task.calls, collateral], 0))
    assert worse.diff.credit == 8 and len(worse.diff.unexpected) == 1
    assert worse.partial == pytest.approx(7 / 8)
    assert (
        'customers "C-0001" was changed, which the task does not do: notes is "oops", was null.'
        in worse.explanation
    )


def test_created_rows_match_by_content_through_references(shop):
    # two orders of equal total for one customer: only their items tell them apart
    a = Call(
        name="place_order", arguments={"customer_id": "C-0015", "items": [{"sku": "SKU-002", "quantity": 2}]}
    )
    b = Call(
        name="place_order", arguments={"customer_id": "C-0015", "items": [{"sku": "SKU-004", "quantity": 1}]}
    )
    task = make_task([a, b])
    assert score(shop, task, record(shop, task, [b, a], 3)).reward == 1.0
    # one created row with one wrong column is shown as that column, matched through the key map
    c = Call(
        name="place_order", arguments={"customer_id": "C-0015", "items": [{"sku": "SKU-002", "quantity": 1}]}
    )
    report = score(shop, task, record(shop, task, [b, c], 3))
    wrong = {
        (r.table, r.change, tuple(col.column for col in r.columns))
        for rows in report.diff.tables.values()
        for r in rows
    }
    assert ("order_items", "create", ("quantity",)) in wrong and ("orders", "create", ("total",)) in wrong


def test_ignored_columns_are_left_out(shop, tasks):
    task = tasks["two-orders"]
    strict = task.model_copy(update={"ignore_columns": []})
    swapped = [task.calls[1], task.calls[0], task.calls[2]]
    assert score(shop, task, record(shop, task, swapped, 0)).reward == 1.0
    report = score(shop, strict, record(shop, strict, swapped, 0))
    assert report.reward == 0.0 and {c.column for r in report.diff.rows() for c in r.columns} == {
        "created_at"
    }


def test_diff_reads_only_changed_rows(shop, tasks):
    gold = expected_episode(shop, tasks["two-orders"])
    agent = shop.episode()
    statements: list[str] = []
    for episode in (gold, agent):
        episode.conn.set_trace_callback(statements.append)
    diff_states(gold, agent)
    tables = {t for t, _ in gold.changes()}
    reads = [s for s in statements if s.startswith("SELECT") and "_toolgym_" not in s]
    # one keyed query per changed table and episode (the agent changed nothing), no full scan
    assert len(reads) == len(tables) and all(" WHERE " in s and " IN (" in s for s in reads), reads


def test_replay_mismatch_is_a_warning(shop, tasks):
    header = {"type": "header", "domain": "shop", "version": "0.0.9", "task": "cancel", "seed": 0}
    call = {
        "type": "call",
        "index": 0,
        "tool": "cancel_order",
        "arguments": {"order_id": "O-0001"},
        "ok": True,
    }
    report = score_rollout(
        shop, parse_transcript(f"{json.dumps(header)}\n{json.dumps(call)}\n"), tasks["cancel"]
    )
    assert report.reward == 0.0 and report.failed_calls == 1
    assert any("recorded on shop@0.0.9" in w for w in report.warnings)
    assert any("succeeded in the transcript but failed on replay" in w for w in report.warnings)


def test_a_recorded_state_the_replay_does_not_reach_is_a_warning(shop, tasks):
    records = record(shop, tasks["cancel"], None, 0)
    assert records[-1]["type"] == "end"
    assert not score(shop, tasks["cancel"], records).warnings
    records[-1]["digest"] = "0" * 64
    assert score(shop, tasks["cancel"], records).warnings == [
        "the replayed final state differs from the one the transcript recorded (its digest)"
    ]


def test_report_matches_its_schema_and_renders(shop, tasks):
    schema = json.loads((schemas.SCHEMA_DIR / "score-report.schema.json").read_text())
    task = tasks["order"]
    for calls in (None, []):
        report = score(shop, task, record(shop, task, calls, 0, "ok"))
        jsonschema.validate(report.model_dump(mode="json"), schema)
        assert ScoreReport.model_validate_json(report.model_dump_json()) == report
        console = Console(file=io.StringIO(), width=140)
        for part in render(report):
            console.print(part)
        assert ("reward 1.0" if calls is None else "state diff") in console.file.getvalue()


# -- CLI -----------------------------------------------------------------------------------------

runner = CliRunner()


def _write(path, shop_dir, task_id, calls, message=None, fmt="toolgym", seed=0):
    domain = load_domain(shop_dir)
    path.write_text(FORMATS[fmt](record(domain, domain.task(task_id), calls, seed, message)))
    return str(path)


def test_cli_scores_a_transcript(tmp_path, shop_dir):
    gold = _write(tmp_path / "gold.json", shop_dir, "lookup", None, "Customer 5 has 500.00.", fmt="anthropic")
    result = runner.invoke(app, ["score", gold, "--domain", str(shop_dir), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["reward"] == 1.0
    human = runner.invoke(app, ["score", gold, "--domain", str(shop_dir), "--task", "refuse"])
    assert human.exit_code == 0 and "reward 0.0" in human.stdout and "shipped" in human.stdout


def test_cli_errors_are_one_line(tmp_path, shop_dir):
    gold = _write(tmp_path / "gold.jsonl", shop_dir, "lookup", None)
    result = runner.invoke(app, ["score", gold, "--domain", str(shop_dir), "--task", "nope"])
    assert result.exit_code == 1 and "has no task 'nope'" in result.stderr
    assert runner.invoke(app, ["score"]).exit_code == 2  # a usage error
    assert runner.invoke(app, ["score", "--help"]).stdout.count("Example") >= 2


def test_cli_batch_mode_writes_results_and_a_summary(tmp_path, shop_dir):
    runs = tmp_path / "runs"
    (runs / "x").mkdir(parents=True)
    _write(runs / "gold.jsonl", shop_dir, "order", None)
    _write(runs / "x" / "noop.json", shop_dir, "order", [], "done", fmt="openai")
    _write(runs / "x" / "cancel.jsonl", shop_dir, "cancel", None, fmt="mcp")
    key = labels.runs_key(runs, create=True)
    domain = load_domain(shop_dir)
    order = domain.task("order")
    records = server_records(domain, order, [(order.calls[0], "injected")], key)
    (runs / f"{SESSION}.jsonl").write_text(FORMATS["toolgym"](records))  # the fault decided it
    out = tmp_path / "results.jsonl"
    result = runner.invoke(
        app, ["score", "--runs", str(runs), "--domain", str(shop_dir), "--out", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((line["task"], line["status"], line["reward"]) for line in lines) == [
        ("cancel", "scored", 1.0),
        ("order", "failed-infra", None),
        ("order", "scored", 0.0),
        ("order", "scored", 1.0),
    ]
    summary = json.loads(result.stdout)
    assert summary["overall"]["mean_reward"] == pytest.approx(2 / 3, abs=1e-3)
    assert summary["overall"]["infra_rate"] == 0.25
    assert summary["tasks"]["shop@0.1.0"]["order"]["pass_rate"] == 0.5
    (runs / "broken.jsonl").write_text(
        '{"type": "header", "domain": "shop", "version": "0.1.0"}\n{"type": "ca'
    )
    again = runner.invoke(app, ["score", "--runs", str(runs), "--domain", str(shop_dir)])
    assert again.exit_code == 1 and "broken.jsonl: line 2" in again.stderr and "by domain" in again.stdout
