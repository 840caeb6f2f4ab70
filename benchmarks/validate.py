"""Validation throughput: tasks validated per second with 1 and 2 workers, beside the peer.

    python benchmarks/validate.py --json out/validate.json [--reruns 2] [--domains bank office ...]

Validates every task of the bundled domains (and of the tau2-retail port when present) with the
full check suite (gold + reruns in fresh processes, no-op, verifier strength, alternative orders,
reachability) using 1 and then 2 local worker processes. Each row's `median_us` is the wall time
per task; the baseline is the peer's recorded cost of *scoring* one retail gold solution
(tau2-bench: 22.8 s for all 114 on this kind of machine, ../shared/peers/tau2/README.md), so the
ratio compares a full validation of a task with the peer's scoring of one. A second row measures
toolgym's own scoring of every retail gold solution, the peer figure's direct equivalent.
"""

from __future__ import annotations

import argparse
import time

import _common
from _common import build_report, print_results, result_row, write_report

from scoring import load_domain
from scoring.validation.domains import validate_domains
from simulator import SpecError

PEER_SCORE_ALL_S = 22.8
PEER_TASKS = 114


def _available(names: list[str]) -> list[str]:
    out = []
    for name in names:
        try:
            load_domain(name)
            out.append(name)
        except SpecError:
            print(f"skipping {name}: it does not load")
    return out


def score_all_gold(name: str) -> tuple[int, float]:
    """Score every task's gold solution (as a transcript) on the domain; returns (tasks, seconds)."""
    from scoring.rollout import Rollout, RolloutCall
    from scoring.score import score_rollout
    from scoring.validation.gold import replay_gold
    from scoring.validation.validate import gold_message

    domain = load_domain(name)
    started = time.perf_counter()
    for task in domain.tasks:
        with domain.episode(seed=task.seed) as ep:
            outcomes = replay_gold(ep, task)
        rollout = Rollout(
            format="toolgym",
            task=task.id,
            seed=task.seed,
            calls=[RolloutCall(name=o.name, arguments=o.arguments) for o in outcomes],
            final_message=gold_message(task),
        )
        report = score_rollout(domain, rollout, task)
        assert report.reward == 1.0 or not task.calls, (task.id, report.explanation)
    return len(domain.tasks), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", dest="json_path", help="write the JSON report here")
    parser.add_argument("--reruns", type=int, default=2)
    parser.add_argument("--domains", nargs="*", default=["bank", "office", "logistics", "tau2-retail"])
    args = parser.parse_args()
    domains = _available(args.domains)
    tasks = sum(len(load_domain(d).tasks) for d in domains)
    peer_per_task_us = PEER_SCORE_ALL_S / PEER_TASKS * 1e6
    results = []
    for workers in (1, 2):
        started = time.perf_counter()
        report = validate_domains(domains, reruns=args.reruns, workers=workers)
        seconds = time.perf_counter() - started
        valid = sum(d.summary.get("valid", 0) for d in report.domains)
        print(
            f"{workers} worker(s): {tasks} tasks in {seconds:.1f} s = {tasks / seconds:.1f} tasks/s ({valid} valid)"
        )
        results.append(
            result_row(
                f"validate a task ({workers} worker{'s' if workers > 1 else ''}, {args.reruns} runs)",
                tasks,
                seconds / tasks * 1e6,
                "tau2: score one retail gold (recorded)",
                peer_per_task_us,
            )
        )
    if "tau2-retail" in domains:
        n, seconds = score_all_gold("tau2-retail")
        print(f"score all {n} retail gold solutions: {seconds:.2f} s (tau2, recorded: {PEER_SCORE_ALL_S} s)")
        results.append(
            result_row(
                f"score all {n} retail gold solutions",
                n,
                seconds * 1e6,
                "tau2: score all 114 (recorded)",
                PEER_SCORE_ALL_S * 1e6,
            )
        )
    out = build_report(
        "validate",
        results,
        domains=domains,
        reruns=args.reruns,
        peer="tau2-bench figures recorded in ../shared/peers/tau2/README.md",
    )
    print_results(out)
    if args.json_path:
        write_report(out, args.json_path)


if __name__ == "__main__":
    _common.ROOT  # noqa: B018 - the import sets sys.path for running from a checkout
    main()
