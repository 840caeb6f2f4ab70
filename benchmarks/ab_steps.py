"""A/B of the step engine: `simulator/steps.py` at a git revision against the working tree, interleaved.

    python benchmarks/ab_steps.py HEAD~1            # HEAD~1's steps.py vs the working tree's
    python benchmarks/ab_steps.py --aa              # the working tree against itself (the harness's bias)
    python benchmarks/ab_steps.py HEAD --rows 1000 --calls 500 --json ab.json

Both sides are loaded the same way, so that the comparison measures the code and not the harness:
each side's `steps.py` is executed from its source into a module of its own, and every step of its
own copy of the benchmark shop (`_common.write_shop_domain`) is given that module's class, its
operations and loops that module's `straight`. (Swapping in only the old side's classes, or
subclassing the new ones, slowed the swapped side by 0.5-2 us per call: its steps failed the
working tree's `isinstance`/`type` checks.) Calls of transfer_credit and place_order (2 items)
alternate between the sides, one call each in turn; the report gives each side's median, the
difference and the machine's load. Run `--aa` first: its differences are the noise floor.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _common import load_shop
from core import order_arguments

from simulator import Domain
from simulator import steps as live_steps

ROOT = Path(__file__).resolve().parent.parent
STEPS = "simulator/steps.py"


def steps_module(source: str, tag: str) -> types.ModuleType:
    """`steps.py`'s source run as a module of the `simulator` package (its relative imports resolve
    to the loaded package; only the step engine itself is the side's own)."""
    module = types.ModuleType(f"simulator._ab_steps_{tag}")
    module.__package__ = "simulator"
    sys.modules[module.__name__] = module  # (dataclasses look their module up)
    try:
        exec(compile(source, f"<{STEPS} {tag}>", "exec"), module.__dict__)  # noqa: S102
    except ImportError as exc:  # (only steps.py is the side's own: the rest is the working tree's)
        raise SystemExit(
            f"error: {STEPS} of side {tag.upper()} needs what the working tree lacks: {exc}"
        ) from None
    return module


def source_at(rev: str | None) -> str:
    """`steps.py` at a git revision (None: the working tree)."""
    if rev is None:
        return (ROOT / STEPS).read_text(encoding="utf-8")
    proc = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{STEPS}"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"error: cannot read {STEPS} at {rev!r}: {proc.stderr.strip()}")
    return proc.stdout


def _steps_of(domain: Domain) -> Iterator[Any]:
    for tool in domain.tools.values():
        stack = list(tool.steps)
        while stack:
            step = stack.pop()
            yield step
            stack.extend(getattr(step, "steps", None) or [])
            inner = getattr(step, "inner", None)
            if inner is not None:
                stack.append(inner)


def adopt(domain: Domain, module: types.ModuleType) -> int:
    """Give every step of `domain` the class of the same name in `module`, and every operation its
    body made by `module.straight`; the number of steps adopted."""
    n = 0
    for step in _steps_of(domain):
        cls = getattr(module, type(step).__name__, None)
        if cls is None:
            raise SystemExit(f"error: {type(step).__name__} is not defined in the other {STEPS}")
        step.__class__ = cls
        if isinstance(step, module.ForEachRun):
            step._body = None  # (made by its own module's straight on its first run)
        n += 1
    for tool in domain.tools.values():
        tool._body = module.straight(tool.steps, whole=True)
    return n


def calls(domain: Domain, shop_ids: Any) -> dict[str, Callable[[Any, int], Any]]:
    orders, cs = order_arguments(shop_ids), shop_ids.customers

    def transfer(ep: Any, i: int) -> Any:
        args = {
            "from_customer_id": cs[i % len(cs)],
            "to_customer_id": cs[(i * 7 + 3) % len(cs)],
            "amount": 0.01,
        }
        return ep.call("transfer_credit", args)

    return {
        "transfer_credit": transfer,
        "place_order": lambda ep, i: ep.call("place_order", orders[i % len(orders)]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("rev", nargs="?", default="HEAD", help="the git revision of side A (default HEAD)")
    parser.add_argument(
        "--aa", action="store_true", help="the working tree on both sides (the harness's bias)"
    )
    parser.add_argument("--rows", type=int, default=10_000, help="seed rows of the benchmark shop")
    parser.add_argument("--calls", type=int, default=6000, help="timed calls per side and tool")
    parser.add_argument("--json", metavar="PATH", help="write the report as JSON here")
    opts = parser.parse_args(argv)
    label_a = "working tree" if opts.aa else opts.rev
    mod_a = steps_module(source_at(None if opts.aa else opts.rev), "a")
    mod_b = steps_module(source_at(None), "b")
    with tempfile.TemporaryDirectory(prefix="toolgym-ab-steps-") as tmp:  # (removed afterwards)
        work = Path(tmp)
        dom_a, shop_ids = load_shop(work / "a", opts.rows)
        dom_b, _ = load_shop(work / "b", opts.rows)
        adopt(dom_a, mod_a)
        adopt(dom_b, mod_b)
        assert live_steps.straight is not mod_b.straight  # (each side runs its own copy)
        report: dict[str, Any] = {"a": label_a, "b": "working tree", "rows": opts.rows, "tools": {}}
        clock = time.perf_counter_ns
        for tool, fn in calls(dom_a, shop_ids).items():
            ep_a, ep_b = dom_a.episode(), dom_b.episode()
            for i in range(300):  # warm: statements prepared, bodies made
                fn(ep_a, i)
                fn(ep_b, i)
            times: tuple[list[int], list[int]] = ([], [])
            for i in range(300, 300 + opts.calls):
                order = (
                    ((ep_a, times[0]), (ep_b, times[1])) if i % 2 else ((ep_b, times[1]), (ep_a, times[0]))
                )
                for ep, out in order:
                    t0 = clock()
                    fn(ep, i)
                    out.append(clock() - t0)
            ep_a.close()
            ep_b.close()
            med_a, med_b = (statistics.median(t) / 1000 for t in times)
            report["tools"][tool] = {
                "a_us": round(med_a, 2),
                "b_us": round(med_b, 2),
                "diff_us": round(med_b - med_a, 2),
            }
            print(
                f"{tool:16s} A ({label_a}) {med_a:7.2f} us   B (working tree) {med_b:7.2f} us   B - A {med_b - med_a:+.2f} us"
            )
    report["load"] = os.getloadavg()[0]
    print(f"load {report['load']:.2f}, {opts.calls} calls per side and tool, {opts.rows:,} seed rows")
    if opts.json:
        Path(opts.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
