"""`toolgym quality`: how good each environment is for training, from rollouts of several policies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from scoring.rollouts.layout import RESULTS

from ..app import JsonOpt, app, err, out, output_dir, output_file, print_json

if TYPE_CHECKING:
    from scoring.quality.metrics import DomainQuality


@app.command()
def quality(
    runs: Annotated[
        Path,
        typer.Argument(
            exists=True, help=f"a runs folder of `toolgym rollout` (its {RESULTS}) or a results file"
        ),
    ],
    train: Annotated[
        str | None,
        typer.Option(help="the policy being trained (trainability); default: a model policy, else random"),
    ] = None,
    tolerance: Annotated[
        float,
        typer.Option(
            min=0.0, max=1.0, help="flag a domain when more than this share of tasks is broken or trivial"
        ),
    ] = 0.1,
    min_tau: Annotated[
        float,
        typer.Option(min=-1.0, max=1.0, help="flag a domain whose baseline order agrees less (Kendall tau)"),
    ] = 0.6,
    html_out: Annotated[
        Path | None,
        typer.Option("--html", callback=output_file, help="write a self-contained HTML page with charts"),
    ] = None,
    manifest_dir: Annotated[
        Path | None,
        typer.Option(
            "--manifest-dir",
            callback=output_dir,
            help="write NAME@VERSION.manifest.json (kept tasks) for every unflagged domain",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Difficulty, trainability, discriminative power and health per domain and task; flags.

    Pass rate per policy; the share of tasks the trained policy solves sometimes but not always and
    the reward spread within each group of k; whether gold > gold-corrupt > random >= noop holds
    (Kendall tau); infra-failure and timeout rates, injected and real apart. Domains that are
    trivial (noop or random pass), broken (gold fails) or non-discriminating are flagged and left
    out of the manifests, which `serve --manifest` and `rollout --manifest` take. Each verdict
    (flags, and trainability, which only warns) is printed with its reason.

    Example: toolgym quality results.jsonl --html quality.html --manifest-dir kept
    """
    from scoring.quality import manifests, render_html
    from scoring.quality import quality as build_report
    from scoring.rollouts.runner import read_lines

    path = runs / RESULTS if runs.is_dir() else runs
    if not path.is_file():
        raise typer.BadParameter(
            f"{runs} holds no {RESULTS} (run `toolgym rollout ... --out {runs}` first)", param_hint="RUNS"
        )
    report = build_report(read_lines(path), str(path), train, tolerance, min_tau)
    if html_out is not None:
        html_out.write_text(render_html(report), encoding="utf-8")
        err.print(f"report: {html_out}", highlight=False)
    if manifest_dir is not None:
        for m in manifests(report):
            target = manifest_dir / f"{m.domain}.manifest.json"
            target.write_text(m.model_dump_json(indent=2) + "\n", encoding="utf-8")
            err.print(f"manifest: {target}", highlight=False)
    if as_json:
        print_json(json.loads(report.model_dump_json()))
        return
    policies = sorted({p for d in report.domains for p in d.policies})
    table = Table(title=f"environment quality ({path})")
    for col in (
        "domain",
        "tasks",
        "kept",
        *(f"pass {p}" for p in policies),
        "partial order",
        "tau",
        "trainable",
        "infra (injected/real)",
        "flags",
    ):
        table.add_column(col)
    for d in report.domains:
        h = d.health
        table.add_row(
            d.domain,
            str(len(d.tasks)),
            str(len(d.kept_tasks)),
            *(
                ""
                if p not in d.policies or d.policies[p].pass_rate is None
                else f"{d.policies[p].pass_rate:.0%}"
                for p in policies
            ),
            d.order,
            "" if d.tau is None else f"{d.tau:.2f}",
            "" if d.trainable_share is None else f"{d.trainable_share:.0%} ({d.train})",
            f"{h.infra_failure_rate:.1%} ({h.injected_failure_rate:.1%}/{h.real_failure_rate:.1%})",
            _flags(d),
        )
    out.print(table)
    if report.tiers:
        tiers = Table(title="pass rate by task tier")
        for col in ("tier", *policies):
            tiers.add_column(col)
        for tier, stats in report.tiers.items():
            tiers.add_row(
                tier,
                *(
                    ""
                    if p not in stats or stats[p].pass_rate is None
                    else f"{stats[p].pass_rate:.0%} ({stats[p].scored})"
                    for p in policies
                ),
            )
        out.print(tiers)
    mark = {"ok": "[green]✓[/]", "flag": "[red]✗[/]", "warning": "[yellow]![/]"}
    for d in report.domains:
        out.print(f"[bold]{escape(d.domain)}[/]", highlight=False)
        for v in d.verdicts:
            out.print(f"  {mark[v.status]} [bold]{escape(v.label)}[/]: {escape(v.reason)}", highlight=False)


def _flags(d: DomainQuality) -> str:
    """The domain's flags, else ok, with its warnings (e.g. `ok (not trainable)`)."""
    warnings = [v.label for v in d.verdicts if v.status == "warning"]
    flags = ", ".join(d.flags) or "ok"
    return f"{flags} ({', '.join(warnings)})" if warnings else flags
