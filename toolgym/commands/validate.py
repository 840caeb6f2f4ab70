"""`toolgym validate`: check every task before training uses it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from scoring.executor import EXECUTORS
from scoring.validation import DEFAULT_CALLS

if TYPE_CHECKING:
    from scoring.validation.domains import ValidationReport

from ..app import JsonOpt, app, choice, domain_errors, err, out, output_dir, print_json, progress_bar


@app.command()
def validate(
    domains: Annotated[list[str], typer.Argument(help="bundled domain names or domain folder paths")],
    reruns: Annotated[
        int,
        typer.Option(min=1, help="runs of each gold solution, in separate worker processes; they must agree"),
    ] = 2,
    workers: Annotated[int, typer.Option(min=1, help="worker processes (or Ray CPUs)")] = 2,
    executor: Annotated[
        str,
        typer.Option(
            callback=choice(*EXECUTORS),
            help="local (a process pool) or ray (a Ray cluster; RAY_ADDRESS or a local one)",
        ),
    ] = "local",
    manifest_dir: Annotated[
        Path | None,
        typer.Option(
            "--manifest-dir",
            callback=output_dir,
            help="write NAME@VERSION.manifest.json (fingerprint + valid task ids) here",
        ),
    ] = None,
    fuzz: Annotated[
        int,
        typer.Option(
            min=0,
            help="calls per tool with schema-valid arguments (seeded); findings are tool errors; 0 skips",
        ),
    ] = DEFAULT_CALLS,
    strict: Annotated[
        bool, typer.Option(help="exit 1 if any task is invalid or any tool has a fuzz finding")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Validate every task before training uses it (gold, reruns, no-op, verifier, orders, network, reachability),
    and fuzz every tool.

    Gold passes and reruns in separate processes agree; doing nothing fails; the verifier catches
    corrupted solutions; independent calls can be reordered; no network; every identifier is reachable.
    Each tool gets --fuzz calls with schema-valid arguments (seeded: the same verdicts every run); a
    tool that raises anything but a precise tool error is listed with the arguments and the error.

    Statuses: valid, broken-gold, flaky, network, no-op-passes, unreachable-answer, weak-verifier,
    weak-answer, order-sensitive, unreachable-fact. The report names each domain's fingerprint (version + hash of schema, tools,
    seed and tasks); the manifest lists the valid tasks, for `serve --manifest` and `score --manifest`.

    Example: toolgym validate bank office --reruns 3 --workers 2 --manifest-dir runs/manifests
    """
    from scoring.tasks import check_domain
    from scoring.validation.domains import manifest, validate_domains

    chosen = next(e for e in EXECUTORS if e == executor)
    loaded = []
    for ref in domains:
        checked = check_domain(ref, warnings=False)
        if checked.domain is None:
            raise domain_errors(ref, checked.errors)
        loaded.append(checked.domain)
    total = sum(len(d.tasks) * reruns + (len(d.tools) if fuzz else 0) for d in loaded)
    progress = progress_bar("validating", as_json)
    with progress:
        bar = progress.add_task("validate", total=total)
        report = validate_domains(
            domains,
            reruns=reruns,
            workers=workers,
            executor=chosen,
            on_result=lambda *_: progress.advance(bar),
            fuzz=fuzz,
        )
    if manifest_dir is not None:
        for result in report.domains:
            path = manifest_dir / f"{result.domain}.manifest.json"
            path.write_text(manifest(result).model_dump_json(indent=2) + "\n", encoding="utf-8")
            err.print(f"manifest: {path}", highlight=False)
    if as_json:
        print_json(json.loads(report.model_dump_json()))
    else:
        show(report)
    if strict and report.failures:
        raise typer.Exit(1)


def show(report: ValidationReport) -> None:
    summary = Table(
        title=f"validation ({report.reruns} runs a task, {report.workers} {report.executor} workers, {report.seconds:.1f} s)"
    )
    for col in (
        "domain",
        "fingerprint",
        "tasks",
        "valid",
        "invalid by status",
        "weak verifier",
        "tool findings",
    ):
        summary.add_column(col)
    for d in report.domains:
        bad = ", ".join(f"{k}: {v}" for k, v in sorted(d.summary.items()) if k != "valid") or "-"
        summary.add_row(
            d.domain,
            d.fingerprint,
            str(len(d.tasks)),
            str(d.summary.get("valid", 0)),
            bad,
            f"{d.weak_verifier_rate:.0%}",
            f"{len(d.tool_findings)} ({sum(t.calls for t in d.tools)} calls)" if report.fuzz else "skipped",
        )
    out.print(summary)
    for d in report.domains:
        for t in d.tasks:
            if not t.valid:
                out.print(
                    f"[red]{t.status}[/] {d.domain} {t.task}: {t.findings[0].message}",
                    highlight=False,
                    soft_wrap=True,
                )
        for f in d.tool_findings:
            out.print(
                f"[red]tool finding[/] {d.domain} {f.tool}: {f.error} (arguments: {f.arguments})",
                highlight=False,
                soft_wrap=True,
                markup=True,
            )
