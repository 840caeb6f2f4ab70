"""A/B of the step engine: `simulator/plan/runsteps.py`, `readsteps.py` and `writesteps.py` at a git revision against the working tree, interleaved.

    python benchmarks/ab_steps.py HEAD~1            # HEAD~1's step engine vs the working tree's
    python benchmarks/ab_steps.py --aa              # the working tree against itself (the harness's bias)
    python benchmarks/ab_steps.py HEAD --rows 1000 --calls 500 --json ab.json

Both sides are loaded the same way, so that the comparison measures the code and not the harness:
each side's engine files (`ENGINE`, in `simulator/plan/`; at a revision, those of them it has: a
revision before the stage folders of issue #27 has none) are executed from their source as modules of the side's own, their imports of
each other rewritten to the side's modules (`from .runsteps import` -> `from ._ab_a_runsteps import`;
every other import resolves to the working tree's package), and every step of the side's own copy
of the benchmark shop (`_common.write_shop_domain`) is given the side's class of its name, its
operations and loops the side's `compile_steps`; so each side's classes, `isinstance`/`type` checks and
generated bodies are its own. (Swapping in only the old side's classes, or subclassing the new ones,
slowed the swapped side by 0.5-2 us per call: its steps failed the working tree's checks.) Calls of
transfer_credit and place_order (2 items) alternate between the sides, one call each in turn; the
report gives each side's median, the difference and the machine's load. Run `--aa` first: its
differences are the noise floor.
"""

from __future__ import annotations

import argparse
import graphlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from _common import load_shop
from core import order_arguments

from simulator import Domain
from simulator.plan import runsteps as live_steps

ROOT = Path(__file__).resolve().parent.parent
#: the step engine's files, in `FOLDER` (the package `PACKAGE`); `runsteps.py` is the one a side must have
ENGINE = ("runsteps", "readsteps", "writesteps")
FOLDER = "simulator/plan"
PACKAGE = "simulator.plan"
STEPS = f"{FOLDER}/runsteps.py"


def rewrite(source: str, tag: str, names: Iterable[str]) -> tuple[str, set[str]]:
    """An engine file's source with its imports of the engine files `names` made imports of side
    `tag`'s modules; the names it imports."""
    used: set[str] = set()

    def side(match: re.Match[str]) -> str:
        used.add(match[2])
        return f"{match[1]}from ._ab_{tag}_{match[2]} import"

    pattern = rf"^(\s*)from \.({'|'.join(map(re.escape, names))}) import"
    return re.sub(pattern, side, source, flags=re.MULTILINE), used


def engine_modules(sources: dict[str, str], tag: str) -> dict[str, types.ModuleType]:
    """Each engine file's source (by name) run as a module of the `simulator` package, named
    `simulator.plan._ab_<tag>_<name>` and importing the side's engine files instead of the working tree's
    (each after those it imports); the modules by name."""
    rewritten, needs = {}, {}
    for name, source in sources.items():
        rewritten[name], needs[name] = rewrite(source, tag, sources)
    modules: dict[str, types.ModuleType] = {}
    for name in graphlib.TopologicalSorter(needs).static_order():
        module = types.ModuleType(f"{PACKAGE}._ab_{tag}_{name}")
        module.__package__ = PACKAGE
        sys.modules[module.__name__] = module  # (dataclasses look their module up; siblings import it)
        try:
            exec(compile(rewritten[name], f"<{FOLDER}/{name}.py {tag}>", "exec"), module.__dict__)  # noqa: S102
        except ImportError as exc:  # (only the engine is the side's own: the rest is the working tree's)
            raise SystemExit(
                f"error: {FOLDER}/{name}.py of side {tag.upper()} needs what the working tree lacks: {exc}"
            ) from None
        modules[name] = module
    return modules


def sources_at(rev: str | None) -> dict[str, str]:
    """The engine files' sources at a git revision (None: the working tree), by name: those of
    `ENGINE` that exist there; `runsteps.py` must."""
    if rev is None:
        files = {name: ROOT / FOLDER / f"{name}.py" for name in ENGINE}
        return {name: path.read_text(encoding="utf-8") for name, path in files.items() if path.exists()}
    proc = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{STEPS}"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"error: cannot read {STEPS} at {rev!r}: {proc.stderr.strip()}")
    out = {"runsteps": proc.stdout}
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-tree", "--name-only", rev, "--", *(f"{FOLDER}/{n}.py" for n in ENGINE)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in ENGINE[1:]:
        path = f"{FOLDER}/{name}.py"
        if path in listed:
            out[name] = subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True, check=True
            ).stdout
    return out


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


def _compiler(steps: types.ModuleType) -> Any:
    """The side's step-list compiler (`straight` before it was named `compile_steps`)."""
    return getattr(steps, "compile_steps", None) or steps.straight


def adopt(domain: Domain, modules: dict[str, types.ModuleType]) -> dict[str, str]:
    """Give every step of `domain` the class of the same name defined in the side's `modules`, and
    every operation its body made by the side's `compile_steps`; the classes adopted, each with the
    engine file that defines it."""
    classes = {
        name: (obj, file)
        for file, module in modules.items()
        for name, obj in vars(module).items()
        if isinstance(obj, type) and obj.__module__ == module.__name__
    }
    adopted: dict[str, str] = {}
    for step in _steps_of(domain):
        cls, file = classes.get(type(step).__name__, (None, ""))
        if cls is None:
            raise SystemExit(
                f"error: {type(step).__name__} is not defined in the other side's {', '.join(modules)}"
            )
        step.__class__ = cls
        if hasattr(step, "_body"):
            step._body = None  # (made by its own module's compiler on its first run)
        post = getattr(cls, "__post_init__", None)
        if post is not None:
            post(step)  # (what the side's class derives from the fields is its own)
        adopted[cls.__name__] = file
    for tool in domain.tools.values():
        tool._body = _compiler(modules["runsteps"])(tool.steps, whole=True)
    return dict(sorted(adopted.items()))


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
    mod_a = engine_modules(sources_at(None if opts.aa else opts.rev), "a")
    mod_b = engine_modules(sources_at(None), "b")
    with tempfile.TemporaryDirectory(prefix="toolgym-ab-steps-") as tmp:  # (removed afterwards)
        work = Path(tmp)
        dom_a, shop_ids = load_shop(work / "a", opts.rows)
        dom_b, _ = load_shop(work / "b", opts.rows)
        engine = {"a": adopt(dom_a, mod_a), "b": adopt(dom_b, mod_b)}
        assert _compiler(live_steps) is not _compiler(mod_b["runsteps"])  # (each side runs its own copy)
        report: dict[str, Any] = {"a": label_a, "b": "working tree", "rows": opts.rows, "tools": {}}
        report["engine"] = {
            side: {"files": list(mods), "classes": engine[side]}
            for side, mods in (("a", mod_a), ("b", mod_b))
        }
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
