"""The generator end to end at scale: every cluster of the scale corpus → a domain folder with validated tasks.

    python benchmarks/toolgen_scale.py [CORPUS...] --out DIR [--workers N] [--seed S]
                                       [--sample N] [--json PATH] [--check]

Runs what `toolgym generate CORPUS --out DIR` runs (plan, toolbox domains, then every domain:
schema and tools, seed rows, folder, `toolgym check`, task walks, validation of every candidate)
and prints: wall time (plan and domains apart), domains planned / kept / left out (with why),
tools, valid tasks (and the fewest in a kept domain), domains per second, validation throughput
(candidates validated per second, valid tasks per second; per core as well) and where the time
goes: seconds per phase summed over every domain (the CPU-seconds of work in the worker
processes), as a share. `uptime`'s load is printed before and after: the machine is shared.
`--sample N` generates a seeded random sample of N of the planned domains (a quick measurement);
`--check` exits 1 unless the issue's goal holds: ≥ 1,000 domains, ≥ 10,000 valid tasks, ≥ 5 per
kept domain, ≤ 1 hour.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # runnable from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))

from toolgen.pipeline import generate  # noqa: E402
from toolgen.synth.leftovers import toolbox_domains  # noqa: E402
from toolgen.synth.report import build_report  # noqa: E402
from toolgen.synth.run import PHASES, synthesize  # noqa: E402

SHARED = ROOT.parent / "shared" if (ROOT.parent / "shared").is_dir() else Path("/work/shared")
SCALE = SHARED / "corpus" / "scale" / "scale_corpus.tar.gz"
GOAL = {"domains": 1000, "tasks": 10_000, "min_tasks": 5, "wall_s": 3600.0}


def load() -> str:
    """`uptime`'s load averages (1, 5, 15 min)."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def measure(
    corpus: list[Path], out: Path, *, workers: int, seed: int, sample: int | None, progress: bool
) -> dict[str, Any]:
    """One run; the figures the module doc lists."""
    before = load()
    started = time.perf_counter()
    generated = generate(corpus, seed=seed, workers=workers)
    extra, still = toolbox_domains(generated.plan, generated.operations)
    domains = [*generated.plan.domains, *extra]
    if sample is not None and sample < len(domains):
        picked = set(random.Random(seed).sample(range(len(domains)), sample))
        domains = [d for i, d in enumerate(domains) if i in picked]
    planned = time.perf_counter()

    def tick(done: int, total: int) -> None:
        if progress and (done % 50 == 0 or done == total):
            rate = done / (time.perf_counter() - planned)
            print(f"  {done}/{total} domains, {rate:.2f}/s, load {load()}", file=sys.stderr, flush=True)

    results = synthesize(domains, generated.operations, out, seed=seed, workers=workers, progress=tick)
    ended = time.perf_counter()
    report = build_report(
        generated, results, seed=seed, rows=None, skipped=still, toolboxes=[d.name for d in extra]
    )
    (out / "report.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    kept = [r for r in results if r.kept]
    synth_s = ended - planned
    cores = workers or os.cpu_count() or 1
    candidates = report["profile"]["candidates_checked"]
    tasks = sum(r.tasks_kept for r in kept)
    phases = report["profile"]["seconds"]
    work = sum(phases.values()) or 1.0
    return {
        "corpus": [str(p) for p in corpus],
        "load_before": before,
        "load_after": load(),
        "workers": cores,
        "wall_s": round(ended - started, 1),
        "plan_s": round(planned - started, 1),
        "domains_s": round(synth_s, 1),
        "domains_planned": len(domains),
        "domains_kept": len(kept),
        "left_out_by_reason": report["domains"]["left_out_by_reason"],
        "tools": sum(r.tools for r in kept),
        "tasks_valid": tasks,
        "min_tasks_per_kept_domain": min((r.tasks_kept for r in kept), default=0),
        "tasks_rejected_by_reason": report["tasks"]["rejected_by_reason"],
        "domains_per_s": round(len(domains) / synth_s, 3) if synth_s else 0.0,
        "candidates_validated": candidates,
        "candidates_per_s": round(candidates / synth_s, 2) if synth_s else 0.0,
        "valid_tasks_per_s": round(tasks / synth_s, 2) if synth_s else 0.0,
        "candidates_per_core_s": round(candidates / phases["checks"], 2) if phases["checks"] else 0.0,
        "phases_s": phases,
        "phases_share": {k: round(v / work, 3) for k, v in phases.items()},
        "plan_share_of_wall": round((planned - started) / (ended - started), 3),
    }


def show(figures: dict[str, Any]) -> None:
    f = figures
    print(
        f"load (uptime) before {f['load_before']}, after {f['load_after']}; {f['workers']} worker processes"
    )
    print(f"wall {f['wall_s']} s = plan {f['plan_s']} s + domains {f['domains_s']} s")
    print(
        f"domains {f['domains_kept']} kept of {f['domains_planned']} ({f['domains_per_s']}/s); "
        f"tools {f['tools']}; valid tasks {f['tasks_valid']} (fewest per kept domain {f['min_tasks_per_kept_domain']})"
    )
    print(f"left out: {f['left_out_by_reason']}")
    print(
        f"validation: {f['candidates_validated']} candidates, {f['candidates_per_s']}/s wall, "
        f"{f['candidates_per_core_s']}/s per core busy validating; {f['valid_tasks_per_s']} valid tasks/s"
    )
    print(f"rejected: {f['tasks_rejected_by_reason']}")
    print("where the time goes (CPU-seconds summed over domains, share):")
    for phase in PHASES:
        print(f"  {phase:<13} {f['phases_s'][phase]:>9.1f} s  {f['phases_share'][phase]:6.1%}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", nargs="*", type=Path, default=[SCALE])
    parser.add_argument(
        "--out", type=Path, required=True, help="folder for the domain folders and report.json"
    )
    parser.add_argument("--workers", type=int, default=0, help="processes (0: one per core)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample", type=int, default=None, help="only a seeded random sample of N domains")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 unless the issue's goal holds")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    figures = measure(
        args.corpus,
        args.out,
        workers=args.workers,
        seed=args.seed,
        sample=args.sample,
        progress=not args.quiet,
    )
    show(figures)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    if args.check:
        broken = [
            f"{what} {got} (goal {want})"
            for what, got, want, ok in [
                (
                    "domains",
                    figures["domains_kept"],
                    GOAL["domains"],
                    figures["domains_kept"] >= GOAL["domains"],
                ),
                (
                    "valid tasks",
                    figures["tasks_valid"],
                    GOAL["tasks"],
                    figures["tasks_valid"] >= GOAL["tasks"],
                ),
                (
                    "fewest tasks per domain",
                    figures["min_tasks_per_kept_domain"],
                    GOAL["min_tasks"],
                    figures["min_tasks_per_kept_domain"] >= GOAL["min_tasks"],
                ),
                ("wall seconds", figures["wall_s"], GOAL["wall_s"], figures["wall_s"] <= GOAL["wall_s"]),
            ]
            if not ok
        ]
        for line in broken:
            print(f"goal not met: {line}", file=sys.stderr)
        return 1 if broken else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
