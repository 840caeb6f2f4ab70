"""A shotgun answer (every candidate value) fails the answer check; real answers still pass."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scoring import load_domain
from scoring.facts import fact_text, find_facts, ruled_out, shotgun
from scoring.replay import expected_episode
from scoring.rollout import Rollout, RolloutCall
from scoring.score import score_rollout
from scoring.tasks import Task
from scoring.validation.gold import replay_gold
from scoring.validation.validate import check_task, gold_message
from simulator import Domain
from tests.conftest import FIXTURES

BUNDLED = ("bank", "office", "logistics", "tau2-retail")
TASKS = [
    {
        "id": "price",
        "instruction": "How much is the Lamp 2 (SKU-002)?",
        "calls": [{"name": "search_products", "arguments": {"query": "Lamp 2"}}],
        "answer_facts": [7],
    },
    {  # orders.status holds only pending and shipped: listing both cannot be told from knowing
        "id": "status",
        "instruction": "I'm C-0001: what is the status of my order O-0001?",
        "calls": [{"name": "get_customer", "arguments": {"customer_id": "C-0001"}}],
        "answer_facts": ["shipped"],
    },
]


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("s") / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TASKS))
    return folder


def _scorer(domain: Domain, task: Task):
    """score(message) with the task's gold calls, against its expected state."""
    with domain.episode(seed=task.seed) as ep:
        calls = [RolloutCall(name=o.name, arguments=o.arguments) for o in replay_gold(ep, task)]
    expected = expected_episode(domain, task)

    def score(message: str):
        rollout = Rollout(format="toolgym", task=task.id, seed=task.seed, calls=calls, final_message=message)
        return score_rollout(domain, rollout, task, expected=expected)

    return score, expected


def test_a_shotgun_answer_fails_and_says_why(shop):
    domain = load_domain(shop)
    task = domain.task("price")
    score, expected = _scorer(domain, task)
    ruled = ruled_out(expected, task)
    assert "products.price" in ruled.columns and 7 not in ruled.values and 10.5 in ruled.values
    assert score("7").reward == 1.0
    assert score("The Lamp 2 (SKU-002) costs $7.00. Anything else I can help with?").reward == 1.0
    assert score("It costs 7, or maybe 10.5.").reward == 1.0  # one other value: not more than its facts
    shotgun = score("It is one of: " + ", ".join(fact_text(v) for v in [7, *ruled.values]))
    assert shotgun.reward == 0.0 and shotgun.facts[0].found
    assert len(shotgun.ruled_out_stated) == 5 and set(shotgun.ruled_out_stated) <= set(ruled.values)
    assert any(f"{len(ruled.values)} value(s) the task rules out" in s for s in shotgun.explanation)
    assert shotgun.partial == 0.0
    expected.close()


def test_validation_plants_a_shotgun_answer(shop):
    assert check_task(str(shop), "price").status == "valid"
    weak = check_task(str(shop), "status")
    assert weak.status == "weak-answer"
    assert "orders.status (1 value(s))" in weak.findings[0].message


def test_bundled_answers_pass_and_shotguns_fail():
    """Every bundled answer-fact task: the gold answer passes the answer check alone and inside a
    sentence; a planted shotgun answer fails it whenever its ruled-out values outnumber the facts.
    (The answer check does not depend on the calls; the test above scores it end to end.)"""
    for name in BUNDLED:
        domain = load_domain(name)
        for task in domain.tasks:
            if not task.answer_facts:
                continue
            with expected_episode(domain, task) as expected:
                message = gold_message(task)
                sentence = (
                    f"Thanks for waiting. I checked this for you: {message}. Anything else I can help with?"
                )
                for answer in (message, sentence):
                    assert all(find_facts(answer, task.answer_facts)), task.id
                    assert shotgun(expected, task, [answer]) == [], task.id
                ruled = ruled_out(expected, task)
                plant = message + " ; " + " ; ".join(fact_text(v) for v in ruled.values)
                caught = shotgun(expected, task, [plant])
                assert bool(caught) == (len(ruled.values) > len(task.answer_facts)), task.id
