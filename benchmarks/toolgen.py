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

With `--out DIR` it then writes every domain folder as `toolgym generate --out` does (toolbox
domains included) and adds `synth`: the wall time, domains written and left out (with why), the
share of the corpus' operations compiled into tools of kept domains (denominator: every operation
read, each BFCL function once, as `count_ops.py` counts), and, from each folder's tasks.jsonl, the
valid tasks, the domains with write tools that have at least 5, and the share of tasks with 3 or
more gold calls where a read precedes a write, the horizon (median gold calls, the share with 10 or
more, the number with 20 or more), the share of each tier, the share of tried candidates whose
instruction passed every check, tasks validated a second per tier (100 of each validated again
and timed, with the milliseconds per gold call), policy.md rules tried on their tools
(`toolgen.synth.policy.probe_policy`; false ones listed), and the faithfulness figures of
`benchmarks/faithfulness.py` over the same folders (kinds against the spec's declarations,
request-control columns, tables not named by a noun of the spec). Its limits (`--check`): compiled ≥ 90%, no domain
left out for failing `toolgym check`, every domain with write tools ≥ 5 tasks, chains ≥ 50%, no
policy rule false.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # runnable from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))
if str(ROOT / "benchmarks") not in sys.path:  # faithfulness.py beside this file
    sys.path.append(str(ROOT / "benchmarks"))

from faithfulness import measure as measure_faithfulness  # noqa: E402
from faithfulness import print_figures  # noqa: E402

from scoring import load_domain  # noqa: E402
from scoring.tasks import Task  # noqa: E402
from scoring.validation.validate import check_loaded_task, domain_ids  # noqa: E402
from toolgen.graph import is_connected  # noqa: E402
from toolgen.pipeline import generate, summarize  # noqa: E402
from toolgen.synth.leftovers import toolbox_domains  # noqa: E402
from toolgen.synth.policy import probe_policy  # noqa: E402
from toolgen.synth.report import build_report  # noqa: E402
from toolgen.synth.run import synthesize  # noqa: E402

SHARED = ROOT.parent / "shared" if (ROOT.parent / "shared").is_dir() else Path("/work/shared")
SCALE = SHARED / "corpus" / "scale" / "scale_corpus.tar.gz"
LIMITS = {"wall_s": 120.0, "peak_mib": 2048.0, "skipped_share": 0.05, "min_tools": 5, "max_tools": 40}
SYNTH_LIMITS = {"compiled_share": 0.9, "min_tasks": 5, "chain_share": 0.5}
#: kept tasks of each tier validated again and timed (`_validation_rates`)
VALIDATED_PER_TIER = 100
_READS = frozenset(("get", "list"))


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


def _tasks(folder: Path) -> list[dict[str, Any]]:
    path = folder / "tasks.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def _chain(task: dict[str, Any], reads: set[str]) -> bool:
    """3+ gold calls where a read comes before a write."""
    names = [c["name"] for c in task.get("calls", [])]
    if len(names) < 3:
        return False
    first_read = next((i for i, n in enumerate(names) if n in reads), None)
    return first_read is not None and any(n not in reads for n in names[first_read + 1 :])


def synth(generated: Any, out: Path, workers: int, seed: int, with_tasks: bool = True) -> dict[str, Any]:
    """Every domain folder written under `out`; the rates of the issue."""
    start = time.perf_counter()
    extra, still_skipped = toolbox_domains(generated.plan, generated.operations)
    results = synthesize(
        [*generated.plan.domains, *extra],
        generated.operations,
        out,
        seed=seed,
        workers=workers,
        with_tasks=with_tasks,
    )
    wall = time.perf_counter() - start
    report = build_report(
        generated, results, seed=seed, rows=None, skipped=still_skipped, toolboxes=[d.name for d in extra]
    )
    # (as `toolgym generate --out` does: what this run kept, beside folders an earlier run left)
    (out / "report.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    tasks = chains = write_tasks = write_chains = 0
    short: list[str] = []
    lengths: list[int] = []
    tiers: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    for r in results:
        if not r.kept or r.folder is None:
            continue
        spec = yaml.safe_load((Path(r.folder) / "domain.yaml").read_text(encoding="utf-8"))
        reads = {t["name"] for t in spec["tools"] if t["kind"] == "read"}
        found = _tasks(Path(r.folder))
        fed = sum(1 for t in found if _chain(t, reads))
        lengths += [len(t.get("calls", [])) for t in found]
        tiers.update(tag for t in found for tag in t.get("tags", []) if tag.startswith("tier-"))
        kinds.update(t["tags"][-1] for t in found if t.get("tags"))
        tasks += len(found)
        chains += fed
        if len(reads) < len(spec["tools"]):
            write_tasks += len(found)
            write_chains += fed
        if len(reads) < len(spec["tools"]) and len(found) < SYNTH_LIMITS["min_tasks"]:
            short.append(r.name)
    left_check = [r.name for r in results if not r.kept and (r.reason or "").startswith("`toolgym check`")]
    kept = report["domains"]["kept"]
    folders = [Path(r.folder) for r in results if r.kept and r.folder is not None]
    return {
        "out": str(out),
        "wall_s": round(wall, 2),
        "domains_per_s": round(len(results) / wall, 2) if wall else 0.0,
        "operations": {k: v for k, v in report["operations"].items() if k != "skipped_by_reason"},
        "skipped_by_reason": dict(list(report["operations"]["skipped_by_reason"].items())[:10]),
        "domains": report["domains"],
        "domains_failing_check": left_check,
        "tasks": {
            "valid": tasks,
            "per_domain": round(tasks / kept, 2) if kept else 0.0,
            "chain_share": round(chains / tasks, 4) if tasks else 0.0,
            "chain_share_write_domains": round(write_chains / write_tasks, 4) if write_tasks else 0.0,
            "write_domains_under_min": len(short),
            "rejected_by_reason": report["tasks"].get("rejected_by_reason", {}),
            **_horizon(lengths, tiers, report["tasks"].get("rejected_by_reason", {})),
            "kinds": dict(kinds.most_common()),
            "validated_per_tier": _validation_rates(folders, seed) if with_tasks else {},
        },
        "policy": _policy_probe(folders),
    }


def _validation_rates(folders: list[Path], seed: int, per_tier: int = VALIDATED_PER_TIER) -> dict[str, Any]:
    """Tasks validated a second, per tier: up to `per_tier` kept tasks of each tier (a seeded draw),
    each validated again in this process (`check_loaded_task`, every check), timed alone; with the
    milliseconds per gold call, which stay flat across tiers when validation is linear in length."""
    drawn: dict[str, list[tuple[Path, dict[str, Any]]]] = {}
    for folder in folders:
        for task in _tasks(folder):
            tier = next((t for t in task.get("tags", []) if t.startswith("tier-")), None)
            if tier is not None:
                drawn.setdefault(tier, []).append((folder, task))
    rng = random.Random(seed)
    rates: dict[str, Any] = {}
    for tier in sorted(drawn):
        chosen = rng.sample(drawn[tier], min(per_tier, len(drawn[tier])))
        seconds = calls = 0.0
        for folder, raw in chosen:
            domain = load_domain(folder)
            ids = domain_ids(domain)
            task = Task.model_validate(raw)
            started = time.perf_counter()
            check_loaded_task(domain, task, ids=ids)
            seconds += time.perf_counter() - started
            calls += len(task.calls)
        rates[tier] = {
            "tasks": len(chosen),
            "tasks_per_s": round(len(chosen) / seconds, 1) if seconds else 0.0,
            "mean_calls": round(calls / len(chosen), 1) if chosen else 0.0,
            "ms_per_call": round(1000 * seconds / calls, 2) if calls else 0.0,
        }
    return rates


def _policy_probe(folders: list[Path]) -> dict[str, Any]:
    """Every kept domain's policy.md rules tried on the domain (`probe_policy`): how many were
    tried, how many could not be, and the false ones (the first ten)."""
    probed = untried = 0
    false: list[str] = []
    for folder in folders:
        found = probe_policy(folder)
        probed, untried, false = probed + found.probed, untried + found.untried, false + found.false
    return {"probed": probed, "untried": untried, "false": len(false), "false_rules": false[:10]}


def _horizon(lengths: list[int], tiers: Counter[str], rejected: dict[str, int]) -> dict[str, Any]:
    """Gold calls per task (median, share with 10+, count with 20+), the share of each tier, and
    the share of the candidates tried whose instruction passed every check (`toolgen.synth.checks`)."""
    n = len(lengths)
    failed = sum(v for k, v in rejected.items() if k.startswith("instruction:"))
    tried = n + sum(rejected.values())
    return {
        "median_calls": statistics.median(lengths) if lengths else 0,
        "share_10_calls": round(sum(x >= 10 for x in lengths) / n, 4) if n else 0.0,
        "tasks_20_calls": sum(x >= 20 for x in lengths),
        "tiers": {t: round(tiers[t] / n, 4) if n else 0.0 for t in sorted(tiers)},
        "instruction_checks_pass": round(1 - failed / tried, 4) if tried else 1.0,
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
        "_generated": generated,
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
    rates = report.get("synth")
    if rates is not None:
        share = rates["operations"]["compiled_share"]
        if share < SYNTH_LIMITS["compiled_share"]:
            problems.append(f"compiled {share:.1%} of operations < {SYNTH_LIMITS['compiled_share']:.0%}")
        if rates["domains_failing_check"]:
            problems.append(f"{len(rates['domains_failing_check'])} domains fail `toolgym check`")
        if rates["tasks"]["write_domains_under_min"]:
            problems.append(
                f"{rates['tasks']['write_domains_under_min']} domains with write tools have < "
                f"{SYNTH_LIMITS['min_tasks']} valid tasks"
            )
        if rates["policy"]["false"]:
            problems.append(f"{rates['policy']['false']} policy rules the tools do not enforce")
        if rates["tasks"]["chain_share"] < SYNTH_LIMITS["chain_share"]:
            problems.append(
                f"chain tasks {rates['tasks']['chain_share']:.1%} < {SYNTH_LIMITS['chain_share']:.0%}"
            )
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
    parser.add_argument("--out", type=Path, help="also write every domain folder here and measure the rates")
    parser.add_argument("--no-tasks", action="store_true", help="with --out: write the domains without tasks")
    args = parser.parse_args(argv)
    report = run(args.corpus, args.workers, args.seed, args.plan)
    generated = report.pop("_generated")
    faithful = None
    if args.out is not None:
        report["synth"] = synth(generated, args.out, args.workers, args.seed, with_tasks=not args.no_tasks)
        faithful = measure_faithfulness(args.out)
        report["faithfulness"] = faithful.as_dict()
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
    rates = report.get("synth")
    if rates is not None:
        ops, doms, tasks = rates["operations"], rates["domains"], rates["tasks"]
        print(
            f"synth: {rates['wall_s']} s ({rates['domains_per_s']} domains/s)   operations compiled into tools of "
            f"kept domains: {ops['compiled']} / {ops['total']} ({ops['compiled_share']:.1%})"
        )
        print(
            f"domains kept: {doms['kept']} of {doms['planned'] + doms['toolboxes']} "
            f"({doms['toolboxes_kept']} toolboxes); failing check: {len(rates['domains_failing_check'])}; "
            f"left out: {doms['left_out_by_reason']}"
        )
        print(
            f"tasks: {tasks['valid']} valid ({tasks['per_domain']} per domain), chains {tasks['chain_share']:.1%} "
            f"({tasks['chain_share_write_domains']:.1%} in domains with write tools), "
            f"domains with write tools under {SYNTH_LIMITS['min_tasks']}: {tasks['write_domains_under_min']}"
        )
        print(
            f"horizon: median {tasks['median_calls']} gold calls, {tasks['share_10_calls']:.1%} with 10+, "
            f"{tasks['tasks_20_calls']} with 20+; tiers {tasks['tiers']}; instructions of tried candidates "
            f"passing every check {tasks['instruction_checks_pass']:.1%}"
        )
        print(f"kinds: {tasks['kinds']}")
        for tier, rate in tasks["validated_per_tier"].items():
            print(
                f"validated {tier}: {rate['tasks_per_s']} tasks/s over {rate['tasks']} "
                f"(mean {rate['mean_calls']} gold calls, {rate['ms_per_call']} ms a call)"
            )
        print(f"skipped by reason: {rates['skipped_by_reason']}")
        policy = rates["policy"]
        print(
            f"policy rules tried on their tools: {policy['probed']} ({policy['untried']} could not be), "
            f"false: {policy['false']}"
        )
        for rule in policy["false_rules"]:
            print(f"  false: {rule}")
    if faithful is not None:
        print_figures(faithful)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    problems = broken(report)
    for problem in problems:
        print(f"LIMIT BROKEN: {problem}")
    return 1 if args.check and problems else 0


if __name__ == "__main__":
    sys.exit(main())
