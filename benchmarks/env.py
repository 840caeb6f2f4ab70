"""The environment API's reset against the raw-SQLite limit: a fresh episode's cost.

    python benchmarks/env.py --json env.json           # bundled domains, ~20 s
    python benchmarks/env.py --quick --json env.json   # few repetitions (smoke test)

For each bundled domain, `Environment.reset(task)` (close the last episode, deserialize a private
copy of the seed database, set it up, build the observation) is timed interleaved with the raw
limit: `sqlite3.connect(":memory:")` + `deserialize(snapshot)` of the same seed database, then
closing the previous connection. Target: reset <= 1.5x the raw deserialize at every domain.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import Any

# `import mcp` (under toolgym.env) must find the SDK, not benchmarks/mcp.py
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if p not in ("", _HERE)] + [_HERE]

from _common import Target, build_report, measure_pair, print_results, result_row, write_report  # noqa: E402

from scoring import load_domain  # noqa: E402
from toolgym.env import Environment  # noqa: E402

DOMAINS = ("bank", "office", "logistics", "tau2-retail")
TARGETS = [Target("reset", "ratio", 1.5, "reset within 1.5x of a raw sqlite3 deserialize of the seed db")]


def bench_domain(name: str, reps: int, seconds: float, warmup: int) -> dict[str, Any]:
    domain = load_domain(name)
    env = Environment(domain)
    tasks = [t.id for t in env.tasks]
    snapshot = domain.snapshot()
    last: list[sqlite3.Connection] = []

    def reset(i: int) -> Any:
        return env.reset(tasks[i % len(tasks)])

    def raw(i: int) -> Any:
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.deserialize(snapshot)
        if last:
            last.pop().close()
        last.append(conn)
        return conn

    timing, base = measure_pair(reset, raw, reps=reps, warmup=warmup, max_seconds=seconds)
    env.close()
    for conn in last:
        conn.close()
    assert base is not None
    return result_row(
        "reset", domain.row_count(), timing.median_us, f"{name}: raw deserialize", base.median_us
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="few repetitions (a smoke test)")
    parser.add_argument("--json", help="write the report here")
    parser.add_argument("--domains", nargs="*", default=list(DOMAINS))
    args = parser.parse_args(argv)
    reps, seconds, warmup = (50, 0.5, 5) if args.quick else (3000, 4.0, 100)
    results = [bench_domain(name, reps, seconds, warmup) for name in args.domains]
    report = build_report("env", results, TARGETS, quick=args.quick)
    print_results(report)
    if args.json:
        write_report(report, args.json)
    return 0 if all(t["ok"] for t in report["targets"]) else 1


if __name__ == "__main__":
    sys.exit(main())
