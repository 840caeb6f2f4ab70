"""A/B of the connection pool (`simulator/runtime/_pool.py`): an episode's open + first call, and its close.

    python benchmarks/pool.py                      # HEAD's pool.py vs the working tree's
    python benchmarks/pool.py tree tree            # the working tree against itself (the noise floor)
    python benchmarks/pool.py tree fresh unreset   # what reuse buys, what the step-count reset costs
    python benchmarks/pool.py HEAD~1 tree --domains bank --rows 1000,100000 --json pool.json
    python benchmarks/pool.py tree unreset --steps  # gold calls whose step count a reused connection changes

Each SIDE is `tree` (the working tree's pool.py), a git revision (its pool.py), `fresh` (the
working tree's, every episode on a new connection: nothing reused) or `unreset` (connections
reused without resetting their statements' step counts: only for a pool.py that still has that
reset, `_API`, as before 6 Dec 2026; since then `tree` is that). Every side's pool.py runs from its source as a module of its own, and every
side gets its own copy of each domain. Per domain, `open+call` times `domain.episode()` and the
first gold call of a task (tasks in turn; the benchmark shop: `get_customer`), the close untimed;
`cycle` times the same with the close (where the pool restores and keeps the connection). The
sides alternate (`_common.measure_interleaved`); each of `--rounds` rounds prints every side's
median, then the median of the rounds' medians and the ratio to the first side, with the load.
With `--steps` nothing is timed: each bundled task's gold calls run on a new connection, then three
times again on the same connection, and the calls that count other SQLite steps there (the step
budget's count, simulator.runtime.budget) are counted per side.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import load_shop, measure_interleaved

from scoring import load_domain
from scoring.calls import resolve_arguments
from simulator import Domain, Episode
from simulator.errors import ToolError

ROOT = Path(__file__).resolve().parent.parent
POOL = "simulator/runtime/_pool.py"
BUNDLED = ("bank", "tau2-retail", "office", "logistics")


class _UnresetStatements:
    """Stands in for pool.py's `_API`: every connection passes, no step count is reset."""

    def check(self, conn: Any) -> bool:
        return True

    def settle(self, conn: Any) -> bool:
        return True


def pool_module(side: str, tag: int) -> types.ModuleType:
    """The side's pool.py run from its source as `simulator.runtime._ab_pool_<tag>`."""
    if side in ("tree", "fresh", "unreset"):
        source = (ROOT / POOL).read_text(encoding="utf-8")
    else:
        proc = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{side}:{POOL}"], capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise SystemExit(f"error: cannot read {POOL} at {side!r}: {proc.stderr.strip()}")
        source = proc.stdout
    module = types.ModuleType(f"simulator.runtime._ab_pool_{tag}")
    module.__package__ = "simulator.runtime"
    sys.modules[module.__name__] = module  # (dataclasses look their module up)
    exec(compile(source, f"<{POOL} {side}>", "exec"), module.__dict__)  # noqa: S102
    if side == "unreset":
        if not hasattr(module, "_API"):
            raise SystemExit("error: side 'unreset' needs a pool.py that resets step counts (`_API`)")
        module._API = _UnresetStatements()
    if side == "fresh":
        module.ConnectionPool.give = lambda self, conn, snapshot, changes=(): conn.close()
    return module


def with_pool(domain: Domain, module: types.ModuleType) -> Domain:
    """`domain`, its pool made the side's (as `Domain.pool` makes it)."""
    metadata = next(iter(domain.tables.values())).sa_table.metadata
    domain._pool = module.ConnectionPool(domain.tables, [t.name for t in metadata.sorted_tables])
    return domain


def first_calls(domain: Domain) -> list[tuple[int, str, Any]]:
    """(seed, tool, arguments) of each task's first gold call."""
    out = []
    for task in domain.tasks:
        if task.calls:
            call = task.calls[0]
            out.append((task.seed, call.name, resolve_arguments(call.arguments, [], task.id, 0)))
    return out


def open_and_call(domain: Domain, calls: list[tuple[int, str, Any]]) -> Callable[[int], Episode]:
    def run(i: int) -> Episode:
        seed, tool, args = calls[i % len(calls)]
        ep = domain.episode(seed=seed)
        try:
            ep.call(tool, args)
        except ToolError:
            pass
        return ep

    return run


def cycle(domain: Domain, calls: list[tuple[int, str, Any]]) -> Callable[[int], None]:
    opened = open_and_call(domain, calls)
    return lambda i: opened(i).close()


def gold_steps(domain: Domain, task: Any) -> list[int]:
    """The SQLite steps counted after each of a task's gold calls, in one episode."""
    counts: list[int] = []
    with domain.episode(seed=task.seed) as ep:
        results: list[Any] = []
        for i, call in enumerate(task.calls):
            try:
                results.append(ep.call(call.name, resolve_arguments(call.arguments, results, task.id, i)))
            except ToolError:
                results.append(None)
            counts.append(ep.meter.sqlite_steps)
    return counts


def steps_report(sides: list[str], domains: dict[str, list[Domain]]) -> None:
    """Per domain and side: gold calls, and those counted otherwise on a reused connection."""
    for name, per_side in domains.items():
        cells = []
        for side, domain in zip(sides, per_side, strict=True):
            calls = differ = 0
            for task in domain.tasks:
                domain.pool().close()  # no idle connection: the first replay gets a new one
                fresh = gold_steps(domain, task)
                for _ in range(3):
                    again = gold_steps(domain, task)
                    calls += len(again)
                    differ += sum(a != b for a, b in zip(fresh, again, strict=True))
            cells.append(f"{side} {differ}")
        print(f"  {name:14s} {calls} calls; counted otherwise when reused: " + "  ".join(cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "sides", nargs="*", default=["HEAD", "tree"], help="tree, fresh, unreset or a git revision"
    )
    parser.add_argument("--domains", default=",".join(BUNDLED), help="bundled domains (comma-separated)")
    parser.add_argument("--rows", default="1000", help="benchmark shop sizes (comma-separated; '' for none)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--seconds", type=float, default=3.0, help="time per operation and round (default 3)")
    parser.add_argument("--json", metavar="PATH", help="write the medians as JSON here")
    parser.add_argument("--steps", action="store_true", help="compare step counts, not times")
    args = parser.parse_args(argv)
    if len(args.sides) < 2 and not args.steps:
        parser.error("give at least two sides")
    modules = [pool_module(side, i) for i, side in enumerate(args.sides)]
    if args.steps:
        names = filter(None, args.domains.split(","))
        steps_report(args.sides, {name: [with_pool(load_domain(name), m) for m in modules] for name in names})
        return 0
    workdir = Path(tempfile.mkdtemp(prefix="toolgym-pool-"))
    subjects: list[tuple[str, list[Domain], list[tuple[int, str, Any]]]] = []
    for name in filter(None, args.domains.split(",")):
        domains = [with_pool(load_domain(name), m) for m in modules]
        subjects.append((name, domains, first_calls(domains[0])))
    for rows in filter(None, args.rows.split(",")):
        domains, ids = [], None
        for m in modules:
            domain, ids = load_shop(workdir, int(rows))
            domains.append(with_pool(domain, m))
        assert ids is not None
        subjects.append(
            (f"shop {rows}", domains, [(0, "get_customer", {"customer_id": c}) for c in ids.customers])
        )

    medians: dict[tuple[str, str], list[list[float]]] = {}
    loads = []
    for r in range(args.rounds):
        loads.append(os.getloadavg())
        print(f"round {r + 1}: load {' '.join(f'{x:.2f}' for x in loads[-1])}")
        for name, domains, calls in subjects:
            for op in ("open+call", "cycle"):
                if op == "open+call":
                    fns: list[Callable[[int], Any]] = [open_and_call(d, calls) for d in domains]
                    downs: list[Callable[[Any], None] | None] = [Episode.close] * len(domains)
                else:
                    fns, downs = [cycle(d, calls) for d in domains], [None] * len(domains)
                timings = measure_interleaved(
                    fns, teardowns=downs, reps=5000, warmup=50, max_seconds=args.seconds
                )
                row = [t.median_us for t in timings]
                medians.setdefault((name, op), []).append(row)
                print(
                    f"  {name:14s} {op:10s} "
                    + "  ".join(f"{s} {m:8.1f}" for s, m in zip(args.sides, row, strict=True))
                )
    loads.append(os.getloadavg())
    print(
        f"\nmedian of {args.rounds} rounds' medians, us (ratio to {args.sides[0]}); load after {loads[-1][0]:.2f}"
    )
    results = []
    for (name, op), rows in medians.items():
        mids = [statistics.median(col) for col in zip(*rows, strict=True)]
        cells = "  ".join(f"{s} {m:8.1f} ({m / mids[0]:.2f}x)" for s, m in zip(args.sides, mids, strict=True))
        print(f"  {name:14s} {op:10s} {cells}")
        results.append(
            {"domain": name, "op": op, "median_us": dict(zip(args.sides, mids, strict=True)), "rounds": rows}
        )
    if args.json:
        report = {"suite": "pool", "sides": args.sides, "loadavg": loads, "results": results}
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
