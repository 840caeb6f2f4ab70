"""The scoring benchmark: diffing a rollout of ~20 changed rows against its expected state.

    python benchmarks/score.py --json score.json          # 1k, 10k and 100k seed rows
    python benchmarks/score.py --quick --json score.json  # 1k rows, few repetitions (smoke test)

On the benchmark shop (`_common.write_shop_domain`) scaled to N seed rows, a gold solution of
five writes (three two-item orders and two notes: 20 changed rows) is replayed as the expected
episode; the agent makes the same writes in another order, so its orders and items get other
generated ids and must be matched by content. Timed, interleaved, in the same process:

| name  | toolgym                                           | baseline                                         |
|-------|---------------------------------------------------|--------------------------------------------------|
| diff  | `diff_states(expected, actual, ignore)`           | `expected.full_digest() == actual.full_digest()`: hash both whole databases and compare |
| score | `score_rollout(...)` with no expected state cached (the process cache is emptied before each call): replay the gold calls, replay the agent's, diff, facts | the same two replays, then hash both whole databases |
| score_warm | `score_rollout(...)` with the task's expected state cached (`scoring.expected`, as from the second rollout of a task on): replay the agent's calls, diff, facts | the agent's replay, then hash its whole database against the expected one's hash |

The diff reads only the changed rows, so its time stays flat while the full-database baseline
grows with the database: the ratio falls as N grows. Target: diff <= 1 ms median at every size.
"""

from __future__ import annotations

from typing import Any

from _common import (
    ShopIds,
    Target,
    measure_pair,
    result_row,
    shop_suite_main,
)

from scoring import Rollout, RolloutCall, diff_states, expected_episode, replay, score_rollout
from scoring.expected import clear_expected_states, expected_state
from scoring.tasks import Call, Task
from simulator import Domain

TARGETS = (Target("diff", "median_us", 1000.0, "diff of a ~20-row change <= 1 ms median"),)
IGNORE = ["orders.created_at"]  # the clock depends on the order of the writes


def gold_task(ids: ShopIds) -> Task:
    """Three two-item orders (6 rows each) and two notes: 20 changed rows, no row touched twice."""
    n, s = len(ids.customers), len(ids.skus)
    calls = [
        Call(
            name="place_order",
            arguments={
                "customer_id": ids.customers[(k * 7 + 1) % n],
                "items": [
                    {"sku": ids.skus[(2 * k) % s], "quantity": 1},
                    {"sku": ids.skus[(2 * k + 1) % s], "quantity": 2},
                ],
            },
        )
        for k in range(3)
    ]
    calls += [
        Call(name="set_note", arguments={"customer_id": ids.customers[(k * 7 + 2) % n], "notes": f"note {k}"})
        for k in range(2)
    ]
    return Task(id="bench", instruction="benchmark", calls=calls, ignore_columns=IGNORE)


def agent_rollout(task: Task) -> Rollout:
    """The gold calls in reverse order: the same state, other generated ids."""
    calls = [RolloutCall(name=c.name, arguments=c.arguments) for c in reversed(task.calls)]
    return Rollout(format="toolgym", domain="bench_shop", task=task.id, seed=0, calls=calls)


def bench_size(
    domain: Domain, ids: ShopIds, rows: int, reps: int, seconds: float, warmup: int
) -> list[dict[str, Any]]:
    task = gold_task(ids)
    rollout = agent_rollout(task)
    calls = [(c.name, c.arguments) for c in rollout.calls]
    opts: dict[str, Any] = {"reps": reps, "max_seconds": seconds, "warmup": warmup}
    expected = expected_episode(domain, task, seed=0)
    actual, _ = replay(domain, calls, seed=0)
    try:
        diff = diff_states(expected, actual, IGNORE)
        changed = len(expected.changes())
        if not diff.empty or diff.expected_changes != 20 or changed != 20:
            raise AssertionError(f"the benchmark rollout should match 20 changed rows: {diff}")
        diff_t, digest_t = measure_pair(
            lambda i: diff_states(expected, actual, IGNORE),
            lambda i: expected.full_digest() == actual.full_digest(),
            **{**opts, "reps": max(20, reps // 2)},
        )

        expected_digest = expected.full_digest()

        def replay_and_digest(i: int) -> bool:
            episode, _ = replay(domain, calls, seed=0)
            try:
                return episode.full_digest() == expected_digest
            finally:
                episode.close()

        def both_and_digest(i: int) -> bool:
            gold = expected_episode(domain, task, seed=0)
            try:
                episode, _ = replay(domain, calls, seed=0)
                try:
                    return episode.full_digest() == gold.full_digest()
                finally:
                    episode.close()
            finally:
                gold.close()

        def score_cold(i: int) -> Any:
            clear_expected_states()
            return score_rollout(domain, rollout, task)

        slow: dict[str, Any] = {**opts, "reps": max(10, reps // 20), "warmup": min(warmup, 3)}
        score_t, full_t = measure_pair(score_cold, both_and_digest, **slow)
        expected_state(domain, task, 0)
        warm_t, warm_full_t = measure_pair(
            lambda i: score_rollout(domain, rollout, task), replay_and_digest, **slow
        )
    finally:
        expected.close()
        actual.close()
    assert digest_t is not None and full_t is not None and warm_full_t is not None
    return [
        result_row("diff", rows, diff_t.median_us, "digest both, compare", digest_t.median_us),
        result_row("score", rows, score_t.median_us, "replay both, digest both", full_t.median_us),
        result_row("score_warm", rows, warm_t.median_us, "replay, digest it", warm_full_t.median_us),
    ]


def main(argv: list[str] | None = None) -> int:
    return shop_suite_main(
        "score",
        __doc__,
        bench_size,
        TARGETS,
        argv,
        reps=1000,
        quick_reps=100,
        warmup=50,
        quick_warmup=10,
        changed_rows=20,
    )


if __name__ == "__main__":
    raise SystemExit(main())
