"""`toolgym curate` and `toolgym report`: training mixtures from pass rates; environment health."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..app import JsonOpt, app, err, out, output_file, print_json


def _mix(text: str | None) -> str | None:
    """--mix, --tier-mix: NAME=WEIGHT entries (a usage error if not)."""
    from scoring.curation.curate import parse_mix

    try:
        parse_mix(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).removeprefix("--mix ")) from None
    return text


@app.command()
def curate(
    results: Annotated[
        Path,
        typer.Argument(
            exists=True,
            dir_okay=False,
            help="rollout results, one JSON object a line (domain, task, reward or status)",
        ),
    ],
    min_pass: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="drop tasks solved less often than this (never solved)")
    ] = 0.1,
    max_pass: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="drop tasks solved more often than this (always solved)")
    ] = 0.9,
    mix: Annotated[
        str | None,
        typer.Option(callback=_mix, help="target weights per domain, e.g. bank=2,office=1 (default: equal)"),
    ] = None,
    size: Annotated[
        int | None,
        typer.Option(
            min=1, help="tasks in the mixture (default: the most every domain can fill without repeats)"
        ),
    ] = None,
    tier_mix: Annotated[
        str | None,
        typer.Option(
            callback=_mix,
            help="weights per task tier, e.g. tier-0=1,tier-3=2,tier-4=2 (unnamed tiers weigh 1; 0 drops)",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="sampling seed")] = 0,
    policy: Annotated[
        str | None,
        typer.Option(help="only the rollouts of this policy (`toolgym rollout` results hold several)"),
    ] = None,
    manifest: Annotated[
        list[Path] | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="only the tasks these manifests list (`toolgym validate` or `toolgym quality --manifest-dir`)",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--out", callback=output_file, help="write the mixture manifest (JSON) here"),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Build a seeded training mixture from rollout results, filtered and bucketed by pass rate.

    Computes per-task pass rates over the samples, drops always- and never-solved tasks, buckets the
    rest by difficulty (hard < 1/3 <= medium < 2/3 <= easy) and samples across domains by weight.
    Infrastructure failures count toward the domain's error rate, never toward a pass rate.

    Example: toolgym curate results.jsonl --mix bank=2,office=1 --tier-mix tier-0=0.5,tier-4=2 --out mix.json
    """
    from scoring.curation.curate import curate as build_mixture
    from scoring.curation.curate import parse_mix, read_results
    from scoring.validation.manifest import load_manifest

    rows = [r for r in read_results(results) if policy is None or r.get("policy") == policy]
    if manifest:
        listed = {(m.domain, task) for m in map(load_manifest, manifest) for task in m.valid_tasks}
        rows = [r for r in rows if (str(r["domain"]), str(r["task"])) in listed]
    mixture = build_mixture(rows, min_pass, max_pass, parse_mix(mix), seed, size, parse_mix(tier_mix))
    if output is not None:
        output.write_text(mixture.model_dump_json(indent=2) + "\n", encoding="utf-8")
        err.print(f"mixture manifest: {output}", highlight=False)
    if as_json:
        print_json(json.loads(mixture.model_dump_json()))
        return
    table = Table(title=f"curation: {mixture.size} tasks in the mixture (seed {seed})")
    for col in ("domain", "rollouts", "infra error rate", "tasks", "kept", "in mixture", "weight"):
        table.add_column(col)
    for d in mixture.domains:
        n = sum(1 for e in mixture.mixture if e.domain == d.domain)
        table.add_row(
            d.domain,
            str(d.rollouts),
            f"{d.error_rate:.1%}",
            str(d.tasks),
            str(d.kept),
            str(n),
            str(mixture.weights.get(d.domain, 0)),
        )
    out.print(table)
    dropped = [t for t in mixture.tasks if not t.kept]
    for t in dropped[:20]:
        out.print(f"  dropped {t.domain} {t.task}: {t.reason}", highlight=False)
    if len(dropped) > 20:
        out.print(f"  ... and {len(dropped) - 20} more dropped", highlight=False)


@app.command()
def report(
    runs: Annotated[
        Path,
        typer.Argument(
            exists=True,
            file_okay=False,
            help="a folder of transcripts (RUNS/*.jsonl, as `serve --runs` writes)",
        ),
    ],
    results: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="score results of those rollouts (`toolgym score --runs ... --out`)",
        ),
    ] = None,
    html_out: Annotated[
        Path | None,
        typer.Option("--html", callback=output_file, help="write a self-contained HTML page here"),
    ] = None,
    threshold: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="quarantine domains whose infrastructure error rate passes this"),
    ] = 0.05,
    as_json: JsonOpt = False,
) -> None:
    """Environment health per domain, as a table, JSON or a self-contained HTML page.

    Calls, error and timeout rates, injected faults, infrastructure-failure rate, reward
    distribution, pass-rate histogram, and the list of domains quarantined over the threshold.

    Example: toolgym report runs --results runs-results.jsonl --html health.html
    """
    from scoring.curation.health import health, render_html

    result = health(runs, results, threshold)
    if html_out is not None:
        html_out.write_text(render_html(result), encoding="utf-8")
        err.print(f"report: {html_out}", highlight=False)
    if as_json:
        print_json(json.loads(result.model_dump_json()))
        return
    table = Table(title=f"environment health ({runs})")
    for col in (
        "domain",
        "sessions",
        "calls",
        "error rate",
        "timeouts",
        "injected",
        "infra error rate",
        "infra-failed rollouts",
        "mean reward",
        "status",
    ):
        table.add_column(col)
    for d in result.domains:
        table.add_row(
            d.domain,
            str(d.sessions),
            str(d.calls),
            f"{d.error_rate:.1%}",
            f"{d.timeout_rate:.1%}",
            str(d.injected),
            f"{d.infra_error_rate:.1%}",
            f"{d.infra_failure_rate:.1%}",
            "" if d.mean_reward is None else f"{d.mean_reward:.2f}",
            "[red]quarantined[/]" if d.quarantined else "ok",
        )
    out.print(table)
