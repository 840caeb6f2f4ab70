"""The tau2-retail port agrees with tau2-bench's own run of every gold call (../shared/peers/tau2).

The agreement check lives in the package scripts/tau2_retail/ (which also generates the domain folder;
its command line is scripts/port_tau2_retail.py); this test imports the package. It is skipped only
when the peer's data is not checked out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring import load_domain
from scoring.validation.gold import replay_gold
from scripts import tau2_retail as port
from simulator import ToolError

from .conftest import NEEDS_SHARED

ROOT = Path(__file__).resolve().parent.parent
PEER = ROOT.parent / "shared" / "peers" / "tau2" / "retail"
DOMAIN = ROOT / "domains" / "tau2-retail"

#: the figures reached when this test was written; a change that lowers one is a regression
STATE_TASKS = 114
GOLD_CALLS = 550
FAILING_GOLD_CALLS = 18
OUTPUTS_AGREEING = 532  # every gold call that succeeds, as data and byte for byte as text

pytestmark = pytest.mark.skipif(
    not (PEER / "expected.jsonl").is_file(),
    reason=f"{NEEDS_SHARED}peers/tau2/retail/expected.jsonl (tau2's retail data, to compare with the peer)",
)


@pytest.fixture(scope="module")
def agreement():
    return port.check_agreement(PEER, DOMAIN)


@pytest.fixture(scope="module")
def expected():
    return {rec["task_id"]: rec for rec in port.load_expected(PEER)}


@pytest.fixture(scope="module")
def domain():
    return load_domain(DOMAIN)


def test_final_state_agrees_on_every_task(agreement):
    state_failures = [f for f in agreement.failures if "state differs" in f]
    assert agreement.tasks == STATE_TASKS
    assert agreement.state_ok == STATE_TASKS, state_failures


def test_every_gold_call_fails_exactly_when_it_fails_in_tau2(agreement):
    assert agreement.calls == GOLD_CALLS
    assert agreement.error_flag_ok == GOLD_CALLS, agreement.failures


def test_error_texts_of_failing_gold_calls_agree(agreement):
    assert agreement.errors == FAILING_GOLD_CALLS
    assert agreement.error_text_ok == FAILING_GOLD_CALLS, agreement.failures


@pytest.mark.parametrize("task_id", ["64", "105"])
def test_failing_writes_fail_with_tau2s_message(domain, expected, task_id):
    """Task 64 has a failing exchange before the succeeding modify; task 105's only write fails."""
    task = domain.task(task_id)
    outcomes = replay_gold(domain.episode(seed=task.seed, task=task), task)
    gold = expected[task_id]["gold_calls"]
    failing = [(o, g) for o, g in zip(outcomes, gold, strict=True) if g["error"]]
    assert failing and all(not o.ok for o, _ in failing)
    for outcome, g in failing:
        assert domain.tools[outcome.name].writes
        assert f"Error: {outcome.error}" == g["output"]


def test_read_outputs_agree(agreement):
    figure = f"{agreement.outputs_data_ok}/{agreement.outputs} as data, {agreement.outputs_text_ok}/{agreement.outputs} as text"
    print(f"tau2-retail output agreement: {figure}")
    assert agreement.outputs == OUTPUTS_AGREEING
    assert agreement.outputs_data_ok >= OUTPUTS_AGREEING, figure
    assert agreement.outputs_text_ok >= OUTPUTS_AGREEING, figure


def test_domain_folder_is_what_the_script_generates(tmp_path):
    """domains/tau2-retail is generated; a hand edit (or a stale build) shows up here."""
    port.build(PEER, tmp_path)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    shipped = sorted(p.relative_to(DOMAIN) for p in DOMAIN.rglob("*") if p.is_file())
    assert made == shipped
    stale = [str(p) for p in made if (tmp_path / p).read_bytes() != (DOMAIN / p).read_bytes()]
    assert not stale, f"rerun `python scripts/port_tau2_retail.py build`: {stale}"


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("3131.1 + 4777.75 + 367.38", "8276.23"),
        ("135.24 - 153.23", "-17.99"),
        ("2 + 2", "4.0"),  # str(round(float(value), 2))
        ("7 // 2", "3.0"),
        ("10 ** 20", "1e+20"),
        ("1 / 3", "0.33"),
    ],
)
def test_calculate_formats_like_tau2(domain, expression, result):
    assert domain.episode().call("calculate", {"expression": expression}) == result


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("2 ^ 3", "Invalid characters in expression"),
        ("sqrt(4)", "Invalid characters in expression"),
        ("1\t+ 1", "Invalid characters in expression"),
        ("$5 + 1", "Invalid characters in expression"),
        ("1 / 0", "Cannot evaluate"),
        ("(1 + 2", "Cannot evaluate"),
    ],
)
def test_calculate_rejects_like_tau2(domain, expression, message):
    with pytest.raises(ToolError, match=message.replace("$", r"\$")):
        domain.episode().call("calculate", {"expression": expression})


def test_transfers_are_visible_to_the_state_diff(domain):
    """tau2 records no transfer; here a `handoffs` row does, so task 10 is no longer passed by doing nothing."""
    from scoring import Rollout, RolloutCall, score_rollout

    task = domain.task("10")
    gold = Rollout(
        format="toolgym", calls=[RolloutCall(name=c.name, arguments=c.arguments) for c in task.calls]
    )
    other_summary = Rollout(
        format="toolgym",
        calls=[
            RolloutCall(name="transfer_to_human_agents", arguments={"summary": "Customer needs a human."})
        ],
    )
    assert score_rollout(domain, gold, task).reward == 1.0
    assert score_rollout(domain, other_summary, task).reward == 1.0  # the summary text is not compared
    assert score_rollout(domain, Rollout(format="toolgym"), task).reward == 0.0


def test_tau2_nl_assertions_are_kept_as_notes(domain):
    tasks = {t.id: t for t in domain.tasks}
    assert any(n.startswith("tau2 NL assertion:") for n in tasks["105"].notes)
    assert any(n.startswith("tau2 open issue") for n in tasks["4"].notes)
    assert json.dumps(tasks["10"].ignore_columns) == json.dumps(["handoffs.summary", "handoffs.created_at"])
