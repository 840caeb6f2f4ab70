"""The process's expected-state cache (scoring.expected) never answers for another key.

Hypothesis interleaves lookups over two domains that differ in one seed value (other
fingerprints), tasks that share an id but not their calls, and seeds (generated ids depend on
them); every answer must equal the state replayed afresh for exactly that domain, task and seed.
The cache also stays within its bounds, and a scored rollout gets the same report from a cold and
a warm cache.
"""

from __future__ import annotations

import json
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import Rollout, RolloutCall, load_domain, score_rollout
from scoring import expected as expected_mod
from scoring.expected import cached_states, capture, clear_expected_states, expected_state
from scoring.replay import expected_episode
from scoring.tasks import Call, Task
from simulator import Domain
from tests.conftest import FIXTURES

TASKS = [
    Task(
        id="same-id",
        instruction="Place an order.",
        calls=[
            Call(
                name="place_order",
                arguments={"customer_id": "C-0002", "items": [{"sku": "SKU-001", "quantity": 1}]},
            )
        ],
    ),
    Task(  # the same id, other calls: another entry
        id="same-id",
        instruction="Place an order.",
        calls=[
            Call(
                name="place_order",
                arguments={"customer_id": "C-0002", "items": [{"sku": "SKU-002", "quantity": 2}]},
            )
        ],
    ),
    Task(
        id="notes",
        instruction="Note it, then order.",
        calls=[
            Call(name="set_note", arguments={"customer_id": "C-0001", "notes": "called"}),
            Call(
                name="place_order",
                arguments={"customer_id": "C-0001", "items": [{"sku": "SKU-003", "quantity": 1}]},
            ),
        ],
        answer_facts=["Customer 1"],
    ),
]


@pytest.fixture(scope="module")
def domains(shop: Domain, tmp_path_factory: pytest.TempPathFactory) -> list[Domain]:
    """The shop, and a copy whose first customer has another balance (another fingerprint)."""
    folder = tmp_path_factory.mktemp("shop") / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    path = folder / "seed" / "customers.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows[0]["balance"] = 150.0
    rows[1]["balance"] = 250.0
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    other = load_domain(folder)
    assert other.fingerprint() != shop.fingerprint()
    return [shop, other]


def fresh(domain: Domain, task: Task, seed: int) -> expected_mod.ExpectedState:
    with expected_episode(domain, task, seed) as episode:
        return capture(episode, task)


@settings(max_examples=25)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, len(TASKS) - 1), st.integers(0, 2)), max_size=12))
def test_the_cache_answers_only_for_its_own_domain_task_and_seed(domains, lookups):
    clear_expected_states()
    for d, t, seed in lookups:
        domain, task = domains[d], TASKS[t]
        got = expected_state(domain, task, seed)
        want = fresh(domain, task, seed)
        assert got.domain.fingerprint() == domain.fingerprint() and got.seed == seed
        assert got.rows == want.rows and got.ruled == want.ruled
        assert got.task_digest == want.task_digest
    assert cached_states() == len({(d, t, s) for d, t, s in lookups})


def test_the_cache_is_bounded(shop, monkeypatch):
    clear_expected_states()
    monkeypatch.setattr(expected_mod, "MAX_STATES", 2)
    for seed in range(5):
        expected_state(shop, TASKS[0], seed)
    assert cached_states() == 2
    monkeypatch.setattr(expected_mod, "MAX_STATES", 100)
    monkeypatch.setattr(expected_mod, "MAX_ROWS", 1)  # every state has more: only the newest stays
    expected_state(shop, TASKS[2], 0)
    assert cached_states() == 1
    clear_expected_states()


def test_a_cold_and_a_warm_cache_score_alike(shop):
    task = TASKS[2]
    rollout = Rollout(
        format="toolgym",
        calls=[RolloutCall(name=c.name, arguments=c.arguments) for c in task.calls],
        final_message="Done for Customer 1.",
    )
    clear_expected_states()
    cold = score_rollout(shop, rollout, task)
    warm = score_rollout(shop, rollout, task)
    with expected_episode(shop, task, 0) as episode:  # an episode passed in, as before the cache
        passed = score_rollout(shop, rollout, task, expected=episode)
    assert cold.reward == 1.0
    assert cold.model_dump() == warm.model_dump() == passed.model_dump()


def test_a_broken_task_is_not_cached(shop):
    clear_expected_states()
    broken = Task(
        id="broken", instruction="x", calls=[Call(name="get_customer", arguments={"customer_id": "C-9999"})]
    )
    for _ in range(2):
        with pytest.raises(Exception, match="broken"):
            expected_state(shop, broken, 0)
    assert cached_states() == 0
