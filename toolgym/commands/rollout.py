"""`toolgym rollout`: run policies on domains' tasks, k samples each; transcripts plus results lines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from scoring.executor import EXECUTORS
from scoring.rollouts.layout import RESULTS, TRANSCRIPTS

from ..app import JsonOpt, app, choice, err, out, output_dir, print_json, progress_bar

#: how rollouts reach the server (`scoring.rollouts.runner.VIAS`; a test holds the two equal)
VIA_NAMES = ("mcp", "inprocess")


def _policies(values: list[str] | None) -> list[str] | None:
    """--policy: each a policy `scoring.rollouts.policies.parse_policy` knows (a usage error if not)."""
    from scoring.rollouts.policies import parse_policy

    for value in values or []:
        try:
            parse_policy(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    return values


@app.command()
def rollout(
    domains: Annotated[list[str], typer.Argument(help="bundled domain names or domain folder paths")],
    runs: Annotated[
        Path,
        typer.Option(
            "--out",
            callback=output_dir,
            help=f"the runs folder: {TRANSCRIPTS}/*.jsonl (signed transcripts) and {RESULTS} (one line per rollout)",
        ),
    ],
    policy: Annotated[
        list[str],
        typer.Option(
            callback=_policies,
            help="noop, random, read-only, gold, gold-corrupt:N or openai:MODEL@URL (repeat for several)",
        ),
    ],
    k: Annotated[int, typer.Option("--k", min=1, help="rollouts per task and policy")] = 8,
    tasks: Annotated[
        list[str] | None, typer.Option("--tasks", help="only these task ids (repeat, or comma-separated)")
    ] = None,
    manifest: Annotated[
        list[Path] | None,
        typer.Option(
            exists=True, dir_okay=False, help="only the tasks a validated manifest lists (repeat per domain)"
        ),
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="worker processes (or Ray CPUs); 1 runs inline")] = 1,
    executor: Annotated[
        str,
        typer.Option(
            callback=choice(*EXECUTORS), help="local (a process pool) or ray (RAY_ADDRESS or a local one)"
        ),
    ] = "local",
    via: Annotated[
        str | None,
        typer.Option(
            callback=choice(*VIA_NAMES),
            help="mcp (a real MCP client of the server; default) or inprocess (the server's sessions, no protocol; default under ray)",
        ),
    ] = None,
    fault_rate: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="inject seeded transient faults into this share of calls")
    ] = 0.0,
    fault_seed: Annotated[int, typer.Option(help="seed of the injected faults")] = 0,
    max_turns: Annotated[
        int, typer.Option(min=1, help="turns a model policy gets before it is cut off")
    ] = 30,
    seed: Annotated[int, typer.Option(help="base seed of the policies' random streams")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """Run each task k times under each policy; write transcripts and one results line per rollout.

    Every rollout is scored as `toolgym score` scores its transcript. Results lines (domain@version,
    fingerprint, task, sample, policy, status, reward, partial, infra, calls, turns, wall time) go to
    OUT/results.jsonl, which `toolgym curate`, `toolgym report --results` and `toolgym quality` read.
    Rollouts already in OUT are skipped, so a stopped run goes on where it was. An endpoint failure
    or a fault that decided the outcome marks the rollout infra-failed: kept out of rewards.

    Example: toolgym rollout bank --tasks bank-007,bank-013 --policy gold --policy random --policy noop --k 4 --out rollouts
    """
    from scoring.rollouts.runner import VIAS, Options, plan, run_rollouts
    from scoring.validation.manifest import load_manifest

    chosen = next(e for e in EXECUTORS if e == executor)
    way = via or ("inprocess" if chosen == "ray" else "mcp")
    picked = next(v for v in VIAS if v == way)
    wanted = [t.strip() for item in tasks or [] for t in item.split(",") if t.strip()] or None
    manifests = [load_manifest(m) for m in manifest or []]
    options = Options(
        runs=str(runs),
        via=picked,
        fault_rate=fault_rate,
        fault_seed=fault_seed,
        max_turns=max_turns,
        seed=seed,
    )
    total = len(plan(domains, policy, k, options, wanted, manifests).units)
    progress = progress_bar("rollouts", as_json)
    with progress:
        bar = progress.add_task("rollout", total=total)
        summary = run_rollouts(
            domains,
            policy,
            k=k,
            runs=runs,
            tasks=wanted,
            workers=workers,
            executor=chosen,
            on_result=lambda _: progress.advance(bar),
            manifests=manifests,
            via=picked,
            fault_rate=fault_rate,
            fault_seed=fault_seed,
            max_turns=max_turns,
            seed=seed,
        )
    if as_json:
        print_json(json.loads(summary.model_dump_json()))
        return
    table = Table(
        title=f"rollouts: {summary.rollouts} run, {summary.skipped} already in {runs} ({summary.seconds:.1f} s)"
    )
    for col in ("policy", "rollouts", "scored", "infra-failed", "errors", "pass rate", "mean partial"):
        table.add_column(col)
    for name, row in summary.by_policy.items():
        table.add_row(
            name,
            str(row["rollouts"]),
            str(row["scored"]),
            str(row["infra"]),
            str(row["errors"]),
            "" if row["pass_rate"] is None else f"{row['pass_rate']:.1%}",
            "" if row["mean_partial"] is None else f"{row['mean_partial']:.3f}",
        )
    out.print(table)
    err.print(f"results: {summary.results}", highlight=False)
