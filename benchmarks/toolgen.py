"""The generator at scale: specs → plan on the scale corpus (2,315 OpenAPI specs, 62,355 operations).

    python benchmarks/toolgen.py [CORPUS...] [--plan plan.json] [--workers N] [--seed S]
                                 [--json report.json] [--check]

Runs the code of `toolgym generate` (`toolgen.pipeline.generate`) once and prints: wall time, peak
memory summed over all its processes (the resident memory of this process and every descendant,
read from /proc every 0.1 s and summed; getrusage's peaks of self and of the largest child are
reported beside it), the number of domains, tools per domain min / median /
p90 / max, the share of domains drawn from a single api, the skipped share, and ten random (seeded)
domains with their tool names. `--check` exits 1 when an issue limit is broken: ≤ 120 s wall,
≤ 2 GiB peak, skipped ≤ 5%, every domain 5–40 tools with a connected entity graph.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # runnable from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))

from toolgen.graph import is_connected  # noqa: E402
from toolgen.pipeline import generate, summarize  # noqa: E402

SHARED = ROOT.parent / "shared" if (ROOT.parent / "shared").is_dir() else Path("/work/shared")
SCALE = SHARED / "corpus" / "scale" / "scale_corpus.tar.gz"
LIMITS = {"wall_s": 120.0, "peak_mib": 2048.0, "skipped_share": 0.05, "min_tools": 5, "max_tools": 40}


def _rss_tree_kib(root: int) -> int:
    """The resident memory of `root` and all its descendants now (KiB, from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        kids = [child for child, parent in parents.items() if parent == pid and child not in tree]
        tree.update(kids)
        frontier.extend(kids)
    total = 0
    for pid in tree:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


class TreeSampler(threading.Thread):
    """Samples the summed resident memory of this process and its descendants every `every` s."""

    def __init__(self, every: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.every, self.peak_kib, self.stopped = every, 0, threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            self.peak_kib = max(self.peak_kib, _rss_tree_kib(os.getpid()))
            self.stopped.wait(self.every)


def peak_mib(workers: int, sampled_kib: int) -> dict[str, float]:
    """Peak memory (MiB): summed over the process tree as sampled, and getrusage's peaks (self, the
    largest child) with the bound self + workers x largest child."""
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    n = workers or os.cpu_count() or 1
    return {
        "summed": sampled_kib / 1024,
        "self": me,
        "largest_child": children,
        "bound": me + n * children,
    }


def run(paths: list[Path], workers: int, seed: int, plan_path: Path | None) -> dict[str, Any]:
    sampler = TreeSampler()
    sampler.start()
    start = time.perf_counter()
    generated = generate(paths, min_tools=5, max_tools=40, seed=seed, workers=workers)
    wall = time.perf_counter() - start
    sampler.stopped.set()
    sampler.join()
    plan = generated.plan
    if plan_path is not None:
        plan_path.write_text(plan.model_dump_json(indent=2) + "\n", encoding="utf-8")
    ops = {op.id: op for op in generated.operations}
    disconnected = [d.name for d in plan.domains if not is_connected([ops[i] for i in d.operations])]
    out_of_bounds = [d.name for d in plan.domains if not 5 <= len(d.operations) <= 40]
    # operation names clash across apis; the plan's per-domain tool names must not
    clashes = [d.name for d in plan.domains if len({ops[i].name for i in d.operations}) < len(d.operations)]
    unresolved = [d.name for d in plan.domains if len(set(d.tools.values())) < len(d.operations)]
    rnd = random.Random(seed)
    sample = rnd.sample(plan.domains, min(10, len(plan.domains)))
    return {
        "corpus": [str(p) for p in paths],
        "wall_s": round(wall, 2),
        "peak_mib": {k: round(v, 1) for k, v in peak_mib(workers, sampler.peak_kib).items()},
        **summarize(generated),
        "disconnected_domains": disconnected,
        "out_of_bounds_domains": out_of_bounds,
        "tool_name_clash_domains": clashes,
        "tool_name_clashes_left": unresolved,
        "sample": [
            {"name": d.name, "apis": d.apis, "tools": [d.tools.get(i, ops[i].name) for i in d.operations]}
            for d in sample
        ],
    }


def broken(report: dict[str, Any]) -> list[str]:
    problems = []
    if report["wall_s"] > LIMITS["wall_s"]:
        problems.append(f"wall {report['wall_s']} s > {LIMITS['wall_s']} s")
    peak = max(report["peak_mib"]["summed"], report["peak_mib"]["self"])
    if peak > LIMITS["peak_mib"]:
        problems.append(f"peak {peak} MiB > {LIMITS['peak_mib']} MiB")
    if report["skipped_share"] > LIMITS["skipped_share"]:
        problems.append(f"skipped {report['skipped_share']:.2%} > {LIMITS['skipped_share']:.0%}")
    if report["disconnected_domains"]:
        problems.append(f"{len(report['disconnected_domains'])} domains with a disconnected entity graph")
    if report["out_of_bounds_domains"]:
        problems.append(f"{len(report['out_of_bounds_domains'])} domains outside 5-40 tools")
    if report["tool_name_clashes_left"]:
        problems.append(f"{len(report['tool_name_clashes_left'])} domains with two tools of one name")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "corpus", nargs="*", type=Path, default=[SCALE], help="specs (default: the scale corpus)"
    )
    parser.add_argument("--plan", type=Path, help="write the plan here")
    parser.add_argument("--workers", type=int, default=0, help="reading processes (0: one per core)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the report here")
    parser.add_argument("--check", action="store_true", help="exit 1 when a limit of the issue is broken")
    args = parser.parse_args(argv)
    report = run(args.corpus, args.workers, args.seed, args.plan)
    sizes = report["tools_per_domain"]
    print(f"corpus: {', '.join(report['corpus'])}")
    print(f"wall: {report['wall_s']} s   peak: {report['peak_mib']} MiB")
    print(f"specs: {report['specs']}")
    print(f"operations: {report['operations']}")
    print(
        f"domains: {report['domains']}   tools per domain min/median/p90/max: {' / '.join(f'{v:g}' for v in sizes.values())}"
    )
    print(
        f"single-api domains: {report['single_api_share']:.1%}   skipped: {report['skipped']} ({report['skipped_share']:.2%})"
    )
    print(
        f"domains where two apis' operations share a name: {len(report['tool_name_clash_domains'])} "
        f"(left unresolved by the plan's tool names: {len(report['tool_name_clashes_left'])})"
    )
    for d in report["sample"]:
        print(f"- {d['name']} ({len(d['tools'])} tools; {', '.join(d['apis'])}): {', '.join(d['tools'])}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    problems = broken(report)
    for problem in problems:
        print(f"LIMIT BROKEN: {problem}")
    return 1 if args.check and problems else 0


if __name__ == "__main__":
    sys.exit(main())
