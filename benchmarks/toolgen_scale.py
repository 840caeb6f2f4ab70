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
Beside wall time, each domain's CPU seconds are summed: on a shared machine the wall time says
how much of the cores the run got, the CPU seconds what the work costs (`projected_wall_s`: the
plan's wall time plus the domains' CPU seconds spread over the workers, i.e. the run on cores of
its own). `--log PATH` appends one JSON line per finished domain as it finishes, and
`--summarize PATH` prints the same figures from such a log (a run stopped early included).
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
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # runnable from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))

from toolgen.pipeline import generate  # noqa: E402
from toolgen.synth.leftovers import toolbox_domains  # noqa: E402
from toolgen.synth.report import build_report, reason_kind  # noqa: E402
from toolgen.synth.run import PHASES, DomainResult, synthesize  # noqa: E402

SHARED = ROOT.parent / "shared" if (ROOT.parent / "shared").is_dir() else Path("/work/shared")
SCALE = SHARED / "corpus" / "scale" / "scale_corpus.tar.gz"
GOAL = {"domains": 1000, "tasks": 10_000, "min_tasks": 5, "wall_s": 3600.0}


def load() -> str:
    """`uptime`'s load averages (1, 5, 15 min)."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def entry(result: DomainResult, elapsed: float) -> dict[str, Any]:
    """One finished domain as a log line."""
    return {
        "name": result.name,
        "kept": result.kept,
        "tools": result.tools,
        "tasks": result.tasks_kept,
        "rejected": result.tasks_rejected,
        "candidates": result.candidates,
        "seconds": {k: round(v, 4) for k, v in result.seconds.items()},
        "cpu_seconds": round(result.cpu_seconds, 4),
        "checks_cpu_seconds": round(result.checks_cpu_seconds, 4),
        "reason": reason_kind(result.reason) if result.reason else None,
        "elapsed_s": round(elapsed, 2),
    }


def figures(entries: list[dict[str, Any]], *, planned: int, plan_s: float, workers: int) -> dict[str, Any]:
    """The figures the module doc lists, from the finished domains' log lines."""
    kept = [e for e in entries if e["kept"]]
    synth_s = max((e["elapsed_s"] for e in entries), default=0.0)
    phases = {p: round(sum(e["seconds"].get(p, 0.0) for e in entries), 1) for p in PHASES}
    work = sum(phases.values()) or 1.0
    cpu = sum(e["cpu_seconds"] for e in entries)
    candidates = sum(e["candidates"] for e in entries)
    tasks = sum(e["tasks"] for e in kept)
    rejected: Counter[str] = Counter()
    for e in entries:
        rejected.update(e["rejected"])

    def per_s(n: float, s: float) -> float:
        return round(n / s, 3) if s else 0.0

    return {
        "workers": workers,
        "wall_s": round(plan_s + synth_s, 1),
        "plan_s": round(plan_s, 1),
        "domains_s": round(synth_s, 1),
        "domains_planned": planned,
        "domains_done": len(entries),
        "domains_kept": len(kept),
        "left_out_by_reason": dict(Counter(e["reason"] for e in entries if not e["kept"]).most_common()),
        "tools": sum(e["tools"] for e in kept),
        "tasks_valid": tasks,
        "min_tasks_per_kept_domain": min((e["tasks"] for e in kept), default=0),
        "tasks_rejected_by_reason": dict(rejected.most_common()),
        "domains_per_s": per_s(len(entries), synth_s),
        "candidates_validated": candidates,
        "candidates_per_s": per_s(candidates, synth_s),
        "valid_tasks_per_s": per_s(tasks, synth_s),
        "cpu_s": round(cpu, 1),
        "cpu_s_per_domain": round(cpu / len(entries), 3) if entries else 0.0,
        "domains_per_cpu_s": per_s(len(entries), cpu),
        "candidates_per_s_validating": per_s(candidates, phases["checks"]),
        "candidates_per_cpu_s": per_s(candidates, sum(e.get("checks_cpu_seconds", 0.0) for e in entries))
        if any("checks_cpu_seconds" in e for e in entries)
        else None,  # (a log from before it was recorded)
        "cpu_share_of_workers": round(cpu / (synth_s * workers), 3) if synth_s else 0.0,
        "projected_wall_s": round(plan_s + cpu * planned / max(1, len(entries)) / workers, 1),
        "phases_s": phases,
        "phases_share": {k: round(v / work, 3) for k, v in phases.items()},
    }


def measure(
    corpus: list[Path],
    out: Path,
    *,
    workers: int,
    seed: int,
    sample: int | None,
    progress: bool,
    log: Path | None,
) -> dict[str, Any]:
    """One run: plan, toolbox domains, every domain; the figures."""
    before = load()
    started = time.perf_counter()
    generated = generate(corpus, seed=seed, workers=workers)
    extra, still = toolbox_domains(generated.plan, generated.operations)
    domains = [*generated.plan.domains, *extra]
    if sample is not None and sample < len(domains):
        picked = set(random.Random(seed).sample(range(len(domains)), sample))
        domains = [d for i, d in enumerate(domains) if i in picked]
    planned = time.perf_counter()
    cores = workers or os.cpu_count() or 1
    entries: list[dict[str, Any]] = []
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(
            json.dumps({"planned": len(domains), "plan_s": planned - started, "workers": cores}) + "\n"
        )

    def done(result: DomainResult) -> None:
        entries.append(entry(result, time.perf_counter() - planned))
        if log is not None:
            with log.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(entries[-1]) + "\n")
        n = len(entries)
        if progress and (n % 50 == 0 or n == len(domains)):
            rate = n / (time.perf_counter() - planned)
            print(f"  {n}/{len(domains)} domains, {rate:.2f}/s, load {load()}", file=sys.stderr, flush=True)

    results = synthesize(domains, generated.operations, out, seed=seed, workers=workers, on_result=done)
    report = build_report(
        generated, results, seed=seed, rows=None, skipped=still, toolboxes=[d.name for d in extra]
    )
    (out / "report.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    got = figures(entries, planned=len(domains), plan_s=planned - started, workers=cores)
    return {"corpus": [str(p) for p in corpus], "load_before": before, "load_after": load(), **got}


def summarize(log: Path) -> dict[str, Any]:
    """The figures of a run from its `--log` (finished or not)."""
    head, *lines = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines() if x.strip()]
    got = figures(lines, planned=head["planned"], plan_s=head["plan_s"], workers=head["workers"])
    return {"log": str(log), "load_now": load(), **got}


def show(f: dict[str, Any]) -> None:
    if "load_before" in f:
        print(
            f"load (uptime) before {f['load_before']}, after {f['load_after']}; {f['workers']} worker processes"
        )
    else:
        print(f"from {f['log']} (load now {f['load_now']}); {f['workers']} worker processes")
    print(f"wall {f['wall_s']} s = plan {f['plan_s']} s + domains {f['domains_s']} s")
    print(
        f"domains {f['domains_done']} of {f['domains_planned']} done, {f['domains_kept']} kept "
        f"({f['domains_per_s']}/s); tools {f['tools']}; valid tasks {f['tasks_valid']} "
        f"(fewest per kept domain {f['min_tasks_per_kept_domain']})"
    )
    print(f"left out: {f['left_out_by_reason']}")
    print(
        f"validation: {f['candidates_validated']} candidates, {f['candidates_per_s']}/s wall, "
        f"{f['candidates_per_s_validating']}/s per second spent validating, "
        f"{f['candidates_per_cpu_s']}/s per CPU-second validating; "
        f"{f['valid_tasks_per_s']} valid tasks/s"
    )
    print(
        f"CPU: {f['cpu_s']} s ({f['cpu_s_per_domain']} s a domain, {f['domains_per_cpu_s']} domains per "
        f"CPU-second); the workers got {f['cpu_share_of_workers']:.0%} of their cores; "
        f"on cores of its own the run would take {f['projected_wall_s']} s"
    )
    print(f"rejected: {f['tasks_rejected_by_reason']}")
    print("where the time goes (wall seconds in the workers, summed over domains; share):")
    for phase in PHASES:
        print(f"  {phase:<13} {f['phases_s'][phase]:>9.1f} s  {f['phases_share'][phase]:6.1%}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", nargs="*", type=Path, default=[SCALE])
    parser.add_argument("--out", type=Path, help="folder for the domain folders and report.json")
    parser.add_argument("--workers", type=int, default=0, help="processes (0: one per core)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample", type=int, default=None, help="only a seeded random sample of N domains")
    parser.add_argument(
        "--log", type=Path, default=None, help="append one JSON line per finished domain here"
    )
    parser.add_argument("--summarize", type=Path, default=None, help="print the figures of a --log and exit")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 unless the issue's goal holds")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    if args.summarize is not None:
        got = summarize(args.summarize)
    elif args.out is None:
        parser.error("give --out DIR (or --summarize LOG)")
    else:
        got = measure(
            args.corpus,
            args.out,
            workers=args.workers,
            seed=args.seed,
            sample=args.sample,
            progress=not args.quiet,
            log=args.log,
        )
    show(got)
    if args.json is not None:
        args.json.write_text(json.dumps(got, indent=2) + "\n", encoding="utf-8")
    if not args.check:
        return 0
    goals = [
        ("domains", got["domains_kept"], GOAL["domains"], got["domains_kept"] >= GOAL["domains"]),
        ("valid tasks", got["tasks_valid"], GOAL["tasks"], got["tasks_valid"] >= GOAL["tasks"]),
        (
            "fewest tasks per kept domain",
            got["min_tasks_per_kept_domain"],
            GOAL["min_tasks"],
            got["min_tasks_per_kept_domain"] >= GOAL["min_tasks"],
        ),
        ("wall seconds", got["wall_s"], GOAL["wall_s"], got["wall_s"] <= GOAL["wall_s"]),
    ]
    broken = [f"{what} {value} (goal {want})" for what, value, want, ok in goals if not ok]
    for line in broken:
        print(f"goal not met: {line}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
