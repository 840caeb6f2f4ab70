"""Transcript rules: malformed calls are the agent's, truncation scores 0, where answers may appear,
which message is final, how a transcript names its domain, divergences, and explanations that
name the differing JSON element and every failed call."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest
from typer.testing import CliRunner

from scoring import load_domain, parse_transcript, score_rollout
from scoring.errors import TranscriptError
from scoring.explain import versus
from scoring.tasks import Call
from simulator.serve import labels
from tests.conftest import FIXTURES
from tests.test_scoring_properties import FORMATS, make_task, record
from toolgym.cli import app

runner = CliRunner()
CANCEL = Call(name="cancel_order", arguments={"order_id": "O-0002"})
LOOKUP = Call(name="get_customer", arguments={"customer_id": "C-0005"})


def chat(*messages: dict[str, Any], **wrapper: Any) -> str:
    return json.dumps(
        {"domain": "shop", **wrapper, "messages": [{"role": "user", "content": "go"}, *messages]}
    )


def tool_call(call_id: str, name: str, arguments: str, text: str | None = None) -> dict[str, Any]:
    fn = {"name": name, "arguments": arguments}
    return {
        "role": "assistant",
        "content": text,
        "tool_calls": [{"id": call_id, "type": "function", "function": fn}],
    }


def answer(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


# -- malformed calls ------------------------------------------------------------------------------


@pytest.mark.parametrize("arguments", ["{bad", "[1, 2]", '"text"', "{" * 100 + "}" * 100])
def test_a_malformed_call_is_the_agents_failed_call(shop, arguments):
    task = make_task([CANCEL])
    text = chat(
        tool_call("a", "set_note", arguments),
        answer("a", "Error: invalid arguments"),
        tool_call("b", "cancel_order", json.dumps(CANCEL.arguments)),
        answer("b", json.dumps({"order_id": "O-0002", "status": "cancelled"})),
        {"role": "assistant", "content": "Cancelled."},
    )
    report = score_rollout(shop, parse_transcript(text), task)
    assert report.status == "scored" and report.reward == 1.0 and report.failed_calls == 1
    assert any(
        s.startswith("Call 0 (set_note) was malformed and not run: arguments") for s in report.explanation
    )


def test_malformed_inputs_in_anthropic_and_mcp_logs_are_failed_calls(shop):
    task = make_task([CANCEL])
    anthropic = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "x", "name": "set_note", "input": [1]}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "x", "content": "bad", "is_error": True}],
        },
    ]
    rollout = parse_transcript("".join(json.dumps(m) + "\n" for m in anthropic))
    assert [(c.outcome, bool(c.malformed)) for c in rollout.calls] == [("tool-error", True)]
    mcp = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "set_note", "arguments": "{x"},
    }
    rollout = parse_transcript(json.dumps(mcp) + "\n")
    assert rollout.calls[0].malformed and score_rollout(shop, rollout, task).reward == 0.0


# -- truncation ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("marker", [{"truncated": True}, {"termination_reason": "max-steps"}])
def test_a_truncated_rollout_scores_zero_with_partial_credit(shop, fmt, marker):
    task = make_task([CANCEL])
    records = record(shop, task, None, 0, "Cancelled.")
    if fmt == "toolgym":
        records[-1].update(reason=marker.get("termination_reason", "done"), truncated=marker.get("truncated"))
        text = FORMATS[fmt](records)
    elif fmt == "anthropic":  # JSONL: a leading metadata line
        first, rest = FORMATS[fmt](records).split("\n", 1)
        text = json.dumps({**json.loads(first), **marker}) + "\n" + rest
    elif fmt == "mcp":
        first, rest = FORMATS[fmt](records).split("\n", 1)
        text = json.dumps({**json.loads(first), **marker}) + "\n" + rest
    else:
        text = json.dumps({**json.loads(FORMATS[fmt](records)), "metadata": marker})
    report = score_rollout(shop, parse_transcript(text), task)
    assert report.truncated and report.reward == 0.0 and report.partial == 1.0
    assert "cut the rollout off (truncated)" in report.explanation[0]


# -- answers: final message or any message ------------------------------------------------------------


def _stated_then_more_calls() -> str:
    return chat(
        tool_call("a", "get_customer", json.dumps(LOOKUP.arguments), text="Customer 5 has 500."),
        answer("a", json.dumps({"customer_id": "C-0005"})),
        tool_call("b", "get_customer", json.dumps(LOOKUP.arguments)),
        answer("b", json.dumps({"customer_id": "C-0005"})),
        {"role": "assistant", "content": "Anything else?"},
    )


def test_the_final_message_is_the_last_one_without_tool_calls(shop):
    rollout = parse_transcript(_stated_then_more_calls())
    assert rollout.final_message == "Anything else?"
    assert rollout.messages == ["Customer 5 has 500.", "Anything else?"]
    task = make_task([LOOKUP], facts=["Customer 5", 500])
    report = score_rollout(shop, rollout, task)
    assert report.reward == 0.0 and report.answers == "final"
    said = " ".join(report.explanation)
    assert 'Answer fact "Customer 5" is not in the final message (it was stated in an earlier' in said


def test_answers_any_is_declared_per_task_or_per_domain(shop, shop_dir):
    rollout = parse_transcript(_stated_then_more_calls())
    task = make_task([LOOKUP], facts=["Customer 5", 500]).model_copy(update={"answers": "any"})
    report = score_rollout(shop, rollout, task)
    assert report.reward == 1.0 and report.answers == "any"
    spec = shop_dir / "domain.yaml"
    spec.write_text(spec.read_text() + "\nanswers: any\n")
    lenient = load_domain(shop_dir)
    assert score_rollout(lenient, rollout, make_task([LOOKUP], facts=["Customer 5", 500])).reward == 1.0
    strict = task.model_copy(update={"answers": "final"})  # the task's word beats the domain's
    assert score_rollout(lenient, rollout, strict).reward == 0.0


def test_submit_answer_is_the_final_message_not_a_tool_call(shop):
    text = chat(
        tool_call("a", "submit_answer", json.dumps({"answer": "Customer 5 has 500."})),
        answer("a", "Answer recorded."),
    )
    rollout = parse_transcript(text)
    assert rollout.calls == [] and rollout.final_message == "Customer 5 has 500."
    assert score_rollout(shop, rollout, make_task([LOOKUP], facts=["Customer 5", 500])).reward == 1.0


# -- naming the domain -------------------------------------------------------------------------------


@pytest.fixture
def shop_dir(tmp_path):
    folder = tmp_path / "domains" / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    shutil.copy(FIXTURES / "shop_tasks.jsonl", folder / "tasks.jsonl")
    return folder


def test_a_transcript_naming_its_domain_by_path_scores_with_domain_path(tmp_path, shop_dir):
    domain = load_domain(shop_dir)
    records = record(domain, domain.task("cancel"), None, 0)
    base = json.loads(FORMATS["openai"](records))
    for named in (str(shop_dir), str(tmp_path / "elsewhere" / "shop"), "shop@0.1.0", "shop"):
        path = tmp_path / "run.json"
        path.write_text(json.dumps({**base, "domain": named}))
        result = runner.invoke(app, ["score", str(path), "--domain", str(shop_dir), "--json"])
        assert result.exit_code == 0 and json.loads(result.stdout)["reward"] == 1.0, (named, result.output)
    renamed = tmp_path / "v2"
    shutil.copytree(shop_dir, renamed)  # a folder of another name whose domain.yaml says shop
    assert score_rollout(domain, parse_transcript(json.dumps({**base, "domain": str(renamed)}))).reward == 1.0
    with pytest.raises(TranscriptError, match="is for domain 'bank', not 'shop'"):
        score_rollout(domain, parse_transcript(json.dumps({**base, "domain": "bank"})))


# -- divergences ---------------------------------------------------------------------------------------


def test_a_recorded_result_the_replay_does_not_give_is_a_divergence(shop):
    task = make_task([LOOKUP])
    records = record(shop, task, None, 0)
    true_balance = records[1]["result"]["balance"]
    records[1]["result"] = {**records[1]["result"], "balance": 12345}
    for fmt in FORMATS:
        report = score_rollout(shop, parse_transcript(FORMATS[fmt](records)), task)
        assert report.reward == 1.0
        [d] = report.divergences
        assert (d.call, d.tool, d.path, d.recorded, d.replayed) == (
            0,
            "get_customer",
            ".balance",
            12345,
            true_balance,
        )
        assert "The replay differs from what the transcript recorded at call 0 (get_customer)" in " ".join(
            report.explanation
        )
    clean = record(shop, task, None, 0)
    assert all(
        not score_rollout(shop, parse_transcript(FORMATS[f](clean)), task).divergences for f in FORMATS
    )


# -- explanations ---------------------------------------------------------------------------------------


def test_a_differing_json_value_is_shown_by_path_not_cut_off():
    expected = {
        "payment_history": [{"payment_id": "P" * 80, "amount": 250}, {"payment_id": "Q" * 80, "amount": 5}]
    }
    actual = json.loads(json.dumps(expected))
    actual["payment_history"][1]["amount"] = 55
    assert versus("order", expected, actual) == "order.payment_history[1].amount is 55, expected 5"
    assert versus("items", [1, 2], [1]) == "items[1] is missing, expected 2"
    assert versus("note", "a", "b") == 'note is "b", expected "a"'


def test_every_failed_call_is_named_with_its_error(shop):
    task = make_task([CANCEL])
    calls = [Call(name="cancel_order", arguments={"order_id": "O-0001"}), Call(name="nope", arguments={})]
    report = score_rollout(shop, parse_transcript(FORMATS["toolgym"](record(shop, task, calls, 0))), task)
    said = report.explanation
    assert any(s.startswith("Call 0 (cancel_order) failed: ") and "shipped" in s for s in said), said
    assert any(s.startswith("Call 1 (nope) failed: Unknown tool 'nope'") for s in said), said


def test_the_wrapper_is_in_the_chat_transcript_schema():
    import jsonschema

    from toolgym import schemas

    schema = json.loads((schemas.SCHEMA_DIR / "chat-transcript.schema.json").read_text())
    jsonschema.validate(json.loads(_stated_then_more_calls()), schema)
    jsonschema.validate(
        json.loads(chat(truncated=True, termination_reason="max_steps", task="t", seed=1)), schema
    )
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"domain": "shop"}, schema)


def test_a_transcript_of_a_domain_served_by_path_scores_without_domain(tmp_path, shop_dir):
    """The folder named by a header the server signed finds the domain; an unsigned one does not."""
    domain = load_domain(shop_dir)
    records = record(domain, domain.task("cancel"), None, 0)
    records[0].update(domain_path=str(shop_dir), session="s")
    runs = tmp_path / "runs"
    (runs / "s.jsonl").parent.mkdir()
    (runs / "s.jsonl").write_text(FORMATS["toolgym"](records))
    unsigned = runner.invoke(app, ["score", str(runs / "s.jsonl"), "--json"])
    assert unsigned.exit_code != 0 and "shop" in unsigned.output, unsigned.output
    key = labels.runs_key(runs, create=True)
    assert key is not None
    signed = [labels.sign_record(key, "s", "cancel", r) for r in records]
    (runs / "s.jsonl").write_text(FORMATS["toolgym"](signed))
    result = runner.invoke(app, ["score", str(runs / "s.jsonl"), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["reward"] == 1.0, result.output
