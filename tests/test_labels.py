"""Scoring trusts nothing a transcript says: only labels the server signed make a call a fault.

Server-written transcripts are built here as the server writes them (`simulator.serve.sessions`): the
header, each infrastructure-labelled call and the end record signed with a runs key (bound to the
session and task), and the agent-visible error text ending with the label token, so every chat
format carries the label.
Then: forged labels in every format are the agent's errors; verified hard faults exclude the
rollout; injected faults and timeouts exclude it only when they decided the outcome (the
counterfactual rule); a signed transcript without its signed end is incomplete.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scoring import load_transcript, parse_transcript, score_rollout
from scoring.tasks import Call, Task
from simulator import Domain, ToolError
from simulator.errors import INJECTED_FAULT, INTERNAL_ERROR
from simulator.runtime.transcript import MemorySink
from simulator.serve import labels
from tests.test_scoring_properties import FORMATS, make_task

SESSION = "s-1"
ORDER = Call(
    name="place_order",
    arguments={"customer_id": "C-0003", "items": [{"sku": "SKU-002", "quantity": 1}]},
)
READ = Call(name="get_customer", arguments={"customer_id": "C-0003"})

Step = tuple[Call, str | None]  # a call, and the fault kind the server gave it (None: it ran)


def server_records(
    domain: Domain,
    task: Task,
    steps: list[Step],
    key: labels.Key | None,
    message: str | None = None,
    end: bool = True,
) -> list[dict[str, Any]]:
    """The records the server writes for these steps, signed with `key` (None: unsigned)."""
    sink = MemorySink()
    episode = domain.episode(seed=0, task=task, transcript=sink)
    for call, fault in steps:
        if fault is None:
            try:
                episode.call(call.name, call.arguments)
            except ToolError:
                pass
        else:
            text = INJECTED_FAULT if fault == "injected" else f"The call failed ({fault})."
            episode.fail(call.name, call.arguments, text, injected=fault == "injected")
            record = sink.records[-1]
            record["error_kind"] = fault
            if key is not None:
                index = record["index"]
                token = labels.label_token(key, SESSION, index, call.name, call.arguments, fault, task.id)
                record["error"] = f"{text} {token}"
                fields = labels.call_fields(SESSION, index, call.name, call.arguments, fault, task.id)
                record["signature"] = key.sign(fields)
    if message is not None:
        episode.say(message)
    if end:
        episode.end()
    episode.close()
    records = sink.records
    records[0]["session"] = SESSION
    if key is not None:
        records[0]["signature"] = key.sign(labels.header_fields(records[0]))
        if end:
            records[-1]["signature"] = key.sign(labels.end_fields(SESSION, records[-1], task.id))
    return records


def scored(
    domain: Domain, task: Task, records: list[dict[str, Any]], fmt: str, key: labels.Key | None
) -> Any:
    rollout = parse_transcript(FORMATS[fmt](records), source=f"<{fmt}>", key=key)
    return score_rollout(domain, rollout, task)


KEY = labels.Key.generate()
ORDER_TASK = make_task([ORDER])


# -- forged labels: each is the agent's failed call -----------------------------------------------


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("kind", ["injected", "internal", "capacity", "timeout"])
def test_an_unsigned_label_is_the_agents_error(shop, fmt, kind):
    records = server_records(shop, ORDER_TASK, [(READ, kind)], key=None, message="Sorry.")
    report = scored(shop, ORDER_TASK, records, fmt, KEY)
    assert report.status == "scored" and report.reward == 0.0


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_label_signed_with_another_key_is_ignored_and_said(shop, fmt):
    records = server_records(shop, ORDER_TASK, [(READ, "capacity")], key=labels.Key.generate())
    report = scored(shop, ORDER_TASK, records, fmt, KEY)
    assert report.status == "scored" and report.reward == 0.0
    assert any("label(s) were ignored" in w for w in report.warnings)


@pytest.mark.parametrize(
    "text",
    [
        INJECTED_FAULT,
        INTERNAL_ERROR.format(tool="get_customer"),
        json.dumps({"error_kind": "infra"}),
        json.dumps({"toolgym": {"error_kind": "injected"}}),
        f"{INJECTED_FAULT} [toolgym-label kind=injected session=s-1 index=0 sig={'0' * 64}]",
    ],
)
@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp"])
def test_fault_text_in_a_client_log_is_the_agents_error(shop, text, fmt):
    records = server_records(shop, ORDER_TASK, [(READ, None)], key=None)
    records[1].update(ok=False, result=None, error=text)  # the client log shows the text
    report = scored(shop, ORDER_TASK, records, fmt, KEY)
    assert report.status == "scored" and report.reward == 0.0


@pytest.mark.parametrize("fmt", ["openai", "mcp"])
def test_an_infra_payload_as_a_successful_result_is_just_a_result(shop, fmt):
    task = make_task([READ])
    records = server_records(shop, task, [(READ, None)], key=None)
    records[1]["result"] = {"error_kind": "infra"}
    report = scored(shop, task, records, fmt, KEY)
    assert report.status == "scored" and report.reward == 1.0
    assert report.divergences and report.divergences[0].call == 0


def test_a_json_rpc_error_is_the_agents_error(shop):
    lines = [
        {"domain": "shop", "task": "t"},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "get_customer", "arguments": {}},
        },
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error"}},
    ]
    rollout = parse_transcript("".join(json.dumps(x) + "\n" for x in lines), key=KEY)
    assert [(c.outcome, c.fault) for c in rollout.calls] == [("tool-error", None)]
    assert score_rollout(shop, rollout, ORDER_TASK).status == "scored"


# -- verified labels ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("kind", ["capacity", "storage", "infra", "internal"])
def test_a_verified_hard_fault_is_failed_infra_in_every_format(shop, fmt, kind):
    records = server_records(shop, ORDER_TASK, [(ORDER, None), (READ, kind)], key=KEY, message="Done.")
    report = scored(shop, ORDER_TASK, records, fmt, KEY)
    assert report.status == "failed-infra" and report.reward is None and report.partial is None
    assert f"call 1 (get_customer) failed with a {kind} fault" in report.explanation[0]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("kind", ["injected", "timeout"])
def test_a_fault_that_decided_the_outcome_excludes_the_rollout(shop, fmt, kind):
    records = server_records(shop, ORDER_TASK, [(ORDER, kind)], key=KEY, message="The service failed.")
    report = scored(shop, ORDER_TASK, records, fmt, KEY)
    assert report.status == "failed-infra" and report.reward is None and report.counterfactual == 1.0
    assert "the fault decided the outcome" in report.explanation[0]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_an_agent_that_retried_past_a_fault_is_scored_normally(shop, fmt):
    records = server_records(shop, ORDER_TASK, [(ORDER, "injected"), (ORDER, None)], key=KEY, message="Done.")
    report = scored(shop, ORDER_TASK, records, fmt, KEY)
    assert report.status == "scored" and report.reward == 1.0 and report.counterfactual is None
    assert report.divergences == []


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_retry_that_faulted_again_is_one_call_in_the_counterfactual(shop, fmt):
    """The agent retried a faulted write, the retry faulted too, and it gave up: the faults decided
    the outcome. Carrying out both attempts would place the order twice (and score the agent 0 for
    the server's faults); a faulted call retried at once with the same arguments is the retry's."""
    steps: list[Step] = [(ORDER, "injected"), (ORDER, "injected")]
    records = server_records(shop, ORDER_TASK, steps, key=KEY, message="The service keeps failing.")
    report = scored(shop, ORDER_TASK, records, fmt, KEY)
    assert report.status == "failed-infra" and report.reward is None and report.counterfactual == 1.0


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_fault_fishing_on_a_cheap_read_scores_zero(shop, fmt):
    """A do-nothing agent that stops at a fault on a read: the fault did not decide, so 0."""
    records = server_records(shop, ORDER_TASK, [(READ, None), (READ, "injected")], key=KEY, message="Failed.")
    report = scored(shop, ORDER_TASK, records, fmt, KEY)
    assert report.status == "scored" and report.reward == 0.0 and report.counterfactual == 0.0
    text = " ".join(report.explanation)
    assert "call 1 (get_customer) hit an injected fault" in text and "did not decide the outcome" in text


def test_a_truncated_rollout_with_a_fault_is_zero_not_excluded(shop):
    records = server_records(shop, ORDER_TASK, [(ORDER, "injected")], key=KEY)
    text = FORMATS["openai"](records)
    wrapped = json.dumps({**json.loads(text), "truncated": True})
    report = score_rollout(shop, parse_transcript(wrapped, key=KEY), ORDER_TASK)
    assert report.status == "scored" and report.reward == 0.0 and report.truncated


# -- complete and incomplete server transcripts -----------------------------------------------------


def test_a_signed_transcript_without_its_signed_end_is_incomplete(shop):
    done = server_records(shop, ORDER_TASK, [(ORDER, None)], key=KEY)
    assert scored(shop, ORDER_TASK, done, "toolgym", KEY).reward == 1.0
    cut = server_records(shop, ORDER_TASK, [(ORDER, None)], key=KEY, end=False)
    report = scored(shop, ORDER_TASK, cut, "toolgym", KEY)
    assert report.status == "incomplete" and report.reward is None
    unsigned_end = [*done[:-1], {k: v for k, v in done[-1].items() if k != "signature"}]
    assert scored(shop, ORDER_TASK, unsigned_end, "toolgym", KEY).status == "incomplete"
    # calls appended after a signed end: the end's count no longer agrees
    extra = {**done[1], "index": 1}
    assert scored(shop, ORDER_TASK, [*done, extra], "toolgym", KEY).status == "incomplete"


def test_transcripts_not_written_by_the_server_count_as_complete(shop):
    cut = server_records(shop, ORDER_TASK, [(ORDER, None)], key=None, end=False)
    assert scored(shop, ORDER_TASK, cut, "toolgym", KEY).reward == 1.0
    signed = server_records(shop, ORDER_TASK, [(ORDER, None)], key=KEY, end=False)
    for fmt in ("openai", "anthropic", "mcp"):  # chat logs have no end record
        assert scored(shop, ORDER_TASK, signed, fmt, KEY).reward == 1.0


def test_the_key_is_found_beside_the_transcript_or_given(shop, tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    key = labels.runs_key(runs, create=True)
    assert key is not None
    path = runs / f"{SESSION}.jsonl"
    path.write_text(FORMATS["toolgym"](server_records(shop, ORDER_TASK, [(ORDER, "capacity")], key=key)))
    found = load_transcript(path)
    assert found.server_written and [c.fault for c in found.calls] == ["capacity"]
    elsewhere = tmp_path / "moved.jsonl"
    elsewhere.write_text(path.read_text())
    alone = load_transcript(elsewhere)
    assert not alone.server_written and [c.outcome for c in alone.calls] == ["tool-error"]
    assert load_transcript(elsewhere, key=key).server_written
