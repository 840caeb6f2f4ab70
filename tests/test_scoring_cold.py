"""What a process's first scoring pays: seed rows read by key (no whole seed index for a diff of a
few rows), and the same answers as the slow ways."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from scoring import Rollout, RolloutCall, load_domain, score_rollout
from scoring.statements import SIZES, chunks
from scoring.validation.gold import replay_gold

from .tables_kit import build
from .test_tables_keys import SEED, TABLES, TOOLS


@given(values=st.lists(st.integers(), max_size=700))
def test_chunks_hold_every_value_in_order_in_a_few_sizes(values):
    got = list(chunks(values))
    assert all(len(c) in SIZES for c in got)
    flat, start = [], 0
    for c in got:  # each chunk: the next values, then its last value repeated
        size = min(len(c), len(values) - start)
        assert c[:size] == values[start : start + size] and set(c[size:]) <= {c[size - 1]}
        flat += c[:size]
        start += size
    assert flat == values
    assert len(got) == (0 if not values else -(-len(values) // SIZES[-1]) if len(values) > SIZES[-1] else 1)


def test_seed_lookup_is_the_seed_index_by_key(tmp_path):
    domain = build(tmp_path / "d", TABLES, TOOLS, seed=SEED)
    wanted: dict[str, list[Any]] = {"seats": [("F2", 1), ("F1", 2), ("F9", 9)], "flights": ["F1", "nope"]}
    before = {table: domain.seed_lookup(table, keys) for table, keys in wanted.items()}
    again = domain.seed_lookup("seats", [("F1", 2), ("F1", 1), ("F9", 9)])  # kept and new keys
    assert domain._seed_index is None  # read by key, not by building the index
    index = domain.seed_index()
    for table, keys in wanted.items():
        assert before[table] == {k: index[table][k] for k in keys if k in index[table]}
        assert domain.seed_lookup(table, keys) == before[table]
    assert list(before["seats"]) == [("F2", 1), ("F1", 2)]
    assert again == {k: index["seats"][k] for k in [("F1", 2), ("F1", 1)]}


def test_scoring_a_rollout_reads_only_the_rows_it_needs():
    """Scoring a write on a fresh domain object diffs a few rows: the seed index is never built,
    and the episode's connection goes back to the pool for the next one."""
    domain = load_domain("bank")
    tools = {name for name, t in domain.tools.items() if t.spec.kind == "write"}
    task = next(t for t in domain.tasks if any(c.name in tools for c in t.calls) and not t.answer_facts)
    with domain.episode(seed=task.seed) as ep:
        calls = [RolloutCall(name=o.name, arguments=o.arguments) for o in replay_gold(ep, task)]
    (conn,) = domain.pool().idle
    rollout = Rollout(format="toolgym", task=task.id, seed=task.seed, calls=calls, final_message="done")
    report = score_rollout(domain, rollout, task)
    assert report.status == "scored" and report.diff is not None and report.diff.expected_changes
    assert domain._seed_index is None
    assert conn in domain.pool().idle
