"""`toolgym generate`: API specs → PLAN.json (domains of operations), stopping after clustering."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from toolgen.pipeline import generate as run_generate
from toolgen.pipeline import summarize

from ..app import JsonOpt, app, err, out, output_file, print_json


def _progress_callback(bar: Progress, task: Any) -> Any:
    """An ingest progress callback (done, total, …) that moves the bar."""

    def update(done: int, total: int | None = None, *_: Any, **__: Any) -> None:
        bar.update(task, completed=done, total=total)

    return update


def _table(summary: dict[str, Any], plan: Path) -> Table:
    table = Table(title=f"generate: {summary['domains']} domains planned in {plan}")
    table.add_column("")
    table.add_column("", justify="right")
    for key, value in summary["specs"].items():
        shown = f"{value:.1f} s" if isinstance(value, float) else str(value)
        table.add_row(f"specs {key.replace('_', ' ')}", shown)
    ops = summary["operations"]
    table.add_row("operations read", str(ops["read"]))
    table.add_row("operations normalized", str(ops["normalized"]))
    for kind, n in ops["by_kind"].items():
        table.add_row(f"  {kind}", str(n))
    table.add_row("domains", str(summary["domains"]))
    sizes = summary["tools_per_domain"]
    table.add_row("tools per domain min / median / p90 / max", " / ".join(f"{sizes[k]:g}" for k in sizes))
    table.add_row("domains from a single api", f"{summary['single_api_share']:.1%}")
    table.add_row("operations skipped", f"{summary['skipped']} ({summary['skipped_share']:.1%})")
    return table


@app.command()
def generate(
    specs: Annotated[
        list[Path],
        typer.Argument(
            exists=True,
            help="API spec files, folders of them, or .tar.gz archives (OpenAPI, Swagger, tool lists, MCP)",
        ),
    ],
    plan: Annotated[
        Path, typer.Option("--plan", callback=output_file, help="write the plan (PLAN.json) here")
    ],
    min_tools: Annotated[int, typer.Option(min=1, help="fewest tools in a domain")] = 5,
    max_tools: Annotated[int, typer.Option(min=1, help="most tools in a domain")] = 40,
    seed: Annotated[int, typer.Option(help="community detection seed")] = 0,
    workers: Annotated[int, typer.Option(min=0, help="processes reading files (0: one per core)")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """Read API specs, normalize their operations and cluster them into domains (PLAN.json).

    Every operation lands in exactly one domain of --min-tools to --max-tools tools whose entities
    are connected, or in the plan's `skipped` with the reason; unreadable files are listed in
    `failed_files` with theirs. The same inputs and seed give a byte-identical plan.

    Example: toolgym generate specs --plan plan.json --min-tools 5 --max-tools 40
    """
    if max_tools < min_tools:
        raise typer.BadParameter(f"--max-tools {max_tools} is below --min-tools {min_tools}")
    columns = (TextColumn("reading specs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True, disable=as_json) as bar:
        task = bar.add_task("read", total=None)
        generated = run_generate(
            specs,
            min_tools=min_tools,
            max_tools=max_tools,
            seed=seed,
            workers=workers,
            progress=_progress_callback(bar, task),
        )
    plan.write_text(generated.plan.model_dump_json(indent=2) + "\n", encoding="utf-8")
    summary = summarize(generated)
    if as_json:
        print_json({"plan": str(plan), **summary})
        return
    out.print(_table(summary, plan))
    for failure in generated.plan.failed_files[:10]:
        err.print(f"failed: {failure.path}: {failure.reason}", highlight=False, markup=False)
    if len(generated.plan.failed_files) > 10:
        err.print(f"… and {len(generated.plan.failed_files) - 10} more failed files (see {plan})")
