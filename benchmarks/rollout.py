"""Rollout throughput: baseline rollouts per second, in-process and over MCP, against bare calls.

    python benchmarks/rollout.py --json out/rollout.json [--domain bank] [--seconds 20] [--quick]

Every row is one whole rollout of `toolgym rollout` (`scoring.rollouts.runner.rollout_unit`): the
policy acting on a fresh session (signed transcript written per call), the scoring of that
transcript (replay, gold replay cached, state diff) and its results line. The tasks of the
domain are cycled through. The baseline is the bare cost of the same work without any of that:
a fresh episode and the task's gold calls run on it directly (`replay_gold`). All rows are
measured interleaved, in rounds, in one process, so machine noise hits them alike.

| name | what one iteration is |
|---|---|
| gold_inprocess / gold_mcp | a gold rollout on the server's session registry / through a real MCP client (in memory) |
| random_inprocess / random_mcp | the random baseline (schema-drawn arguments) the same two ways |
| noop_inprocess | a rollout that only hands in an empty answer: the fixed cost of a rollout |

`ratio` is the row's median over the bare gold calls' median; rollouts/s = 1e6 / median_us
(printed in the `rollouts_per_s` part of the report).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

# This folder holds mcp.py (a benchmark): it must come after site-packages, or `import mcp` finds it.
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if p not in ("", _HERE)] + [_HERE]

from _common import build_report, measure_interleaved, print_results, result_row, write_report  # noqa: E402

from scoring import load_domain  # noqa: E402
from scoring.rollouts.runner import Options, Via, rollout_unit  # noqa: E402
from scoring.validation.gold import replay_gold  # noqa: E402

ROWS: list[tuple[str, Via]] = [
    ("gold", "inprocess"),
    ("gold", "mcp"),
    ("random", "inprocess"),
    ("random", "mcp"),
    ("noop", "inprocess"),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--domain", default="bank")
    parser.add_argument("--seconds", type=float, default=30.0, help="time budget for all rows together")
    parser.add_argument("--quick", action="store_true", help="a short run (smoke test)")
    parser.add_argument("--json", dest="json_out", help="write the report here")
    args = parser.parse_args(argv)
    seconds = 3.0 if args.quick else args.seconds
    domain = load_domain(args.domain)
    tasks = [t for t in domain.tasks if t.calls]
    counter = itertools.count()

    def bare(i: int) -> None:
        task = tasks[i % len(tasks)]
        with domain.episode(seed=task.seed) as episode:
            replay_gold(episode, task)

    with tempfile.TemporaryDirectory(prefix="toolgym-bench-rollout-") as tmp:

        def subject(policy: str, via: Via) -> Callable[[int], None]:
            options = Options(runs=str(Path(tmp) / via), via=via)

            def one(i: int) -> None:
                task = tasks[i % len(tasks)]
                line = rollout_unit(args.domain, task.id, policy, next(counter), options)
                if line["status"] == "error":
                    raise RuntimeError(f"{policy} {via} {task.id}: {line['error']}")

            return one

        fns = [bare, *(subject(p, v) for p, v in ROWS)]
        timings = measure_interleaved(
            fns,
            reps=400 if not args.quick else 20,
            warmup=len(tasks) if not args.quick else 2,
            max_seconds=seconds,
            min_reps=5,
        )
    base = timings[0].median_us
    results = [result_row("bare_gold_calls", len(tasks), base)]
    results += [
        result_row(f"{p}_{v}", len(tasks), t.median_us, "bare_gold_calls", base)
        for (p, v), t in zip(ROWS, timings[1:], strict=True)
    ]
    per_second = {r["name"]: round(1e6 / r["median_us"], 1) for r in results}
    report = build_report(
        "rollout", results, domain=domain.ref, tasks=len(tasks), seconds=seconds, rollouts_per_s=per_second
    )
    print_results(report, f"rollouts on {domain.ref} ({len(tasks)} tasks cycled)")
    print("rollouts/s:", ", ".join(f"{k} {v}" for k, v in per_second.items()))
    if args.json_out:
        write_report(report, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
