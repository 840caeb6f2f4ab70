"""`toolgym generate`: API specs → PLAN.json (domains of operations) and/or domain folders (--out)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from scoring.executor import EXECUTORS
from simulator.format.folders import BUNDLED

from ..app import (
    JsonOpt,
    app,
    choice,
    count,
    err,
    error_line,
    fail,
    out,
    output_dir,
    output_file,
    print_json,
)

if TYPE_CHECKING:
    from toolgen.model import FailedFile
    from toolgen.synth.llm import LLMOptions


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


def _http_url(url: str | None) -> str | None:
    """--llm: an http(s) URL."""
    if url is not None and not url.startswith(("http://", "https://")):
        raise typer.BadParameter(f"not an http(s) URL of a chat endpoint: {url!r}")
    return url


def _from_data(
    specs: list[Path],
    data: Path,
    out_dir: Path | None,
    name: str | None,
    as_json: bool,
    llm: LLMOptions | None,
) -> None:
    """`generate SPEC --data SNAPSHOT --out DIR`: one domain from a tool list and real records
    (`--llm`: a model proposes steps for what the rules leave not modelled)."""
    from simulator.errors import SpecError
    from toolgen.fromdata import domain_name, generate_domain
    from toolgen.proposals import proposer

    if len(specs) != 1 or not specs[0].is_file():
        raise typer.BadParameter("--data takes one spec file (the tool list of one domain)")
    if out_dir is None:
        raise typer.BadParameter("--data writes a domain folder: give --out DIR")
    label = name or domain_name(data)
    try:
        refine = proposer(llm) if llm is not None else None
        result = generate_domain(specs[0], data, out_dir / label, name=label, overwrite=True, refine=refine)
    except SpecError as exc:
        raise fail(f"cannot generate from {specs[0]} and {data}:\n{exc}") from None
    report = {"domain": str(result.folder), **result.report()}
    if as_json:
        print_json(report)
        return
    table = Table(title=f"generate --data: {len(result.tools)} tools in {result.folder}")
    for column in ("tool", "kind", "does", "not modelled"):
        table.add_column(column)
    for tool, bound in result.tools.items():
        table.add_row(tool, bound.kind, "; ".join(bound.does) or "checks only", str(len(bound.not_modelled)))
    for tool, why in result.not_compiled.items():
        table.add_row(tool, "-", why, "all")
    out.print(table)
    if result.llm:
        out.print("--llm proposals: " + ", ".join(f"{k} {n}" for k, n in sorted(result.llm.items())))


def _outside_bundled(path: Path | None) -> Path | None:
    """--out: an output folder never inside the bundled domains."""
    if path is not None:
        resolved = path.resolve()
        if resolved == BUNDLED or BUNDLED in resolved.parents:
            raise typer.BadParameter(f"{path} is inside the bundled domains ({BUNDLED}); give another folder")
    return output_dir(path)


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
        Path | None, typer.Option("--plan", callback=output_file, help="write the plan (PLAN.json) here")
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            callback=_outside_bundled,
            help="write one domain folder per kept domain here, and report.json",
        ),
    ] = None,
    min_tools: Annotated[int, typer.Option(min=1, help="fewest tools in a domain")] = 5,
    max_tools: Annotated[int, typer.Option(min=1, help="most tools in a domain")] = 40,
    seed: Annotated[int, typer.Option(help="seed of community detection and of the seed data")] = 0,
    rows: Annotated[
        int | None,
        typer.Option(min=1, help="seed rows per table (default: 25, more for tables with parents)"),
    ] = None,
    workers: Annotated[int, typer.Option(min=0, help="processes (0: one per core), or Ray CPUs")] = 0,
    executor: Annotated[
        str,
        typer.Option(
            callback=choice(*EXECUTORS),
            help="local (a process pool) or ray (a Ray cluster; RAY_ADDRESS or a local one)",
        ),
    ] = "local",
    toolboxes: Annotated[
        bool,
        typer.Option(
            help="with --out, group the plan's too-small operations by api, file, then folder "
            "into toolbox domains"
        ),
    ] = True,
    tasks: Annotated[
        bool,
        typer.Option(
            help="with --out, generate and validate tasks (a domain with fewer than 5 valid ones is "
            "left out); --no-tasks writes the domains without tasks"
        ),
    ] = True,
    llm: Annotated[
        str | None,
        typer.Option(
            "--llm",
            metavar="URL",
            callback=_http_url,
            help="with --out, an OpenAI-compatible chat endpoint (e.g. http://127.0.0.1:8000/v1) that "
            "writes each kept task's request as a person who uses the API would send it, from the task's "
            "facts (kept only when it states every fact, passes the instruction checks and the task is "
            "still valid; otherwise the template stays) and fills descriptions the specs lack; "
            "with --data, proposes steps for what a tool's description says and the rules leave not "
            "modelled (kept only when they pass the checks of toolgen.proposals)",
        ),
    ] = None,
    llm_model: Annotated[str, typer.Option(help="the model name sent to --llm")] = "default",
    llm_cache: Annotated[
        Path | None,
        typer.Option(
            callback=output_dir,
            help="where --llm replies are cached by request, so reruns agree (default: "
            "$XDG_CACHE_HOME/toolgym/llm)",
        ),
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            exists=True,
            metavar="SNAPSHOT",
            help="real records to seed from: one JSON document of collections (as tau2's db.json), a "
            "folder of .json/.jsonl/.csv files, or a SQLite file. The one spec's tools become one domain "
            "in --out DIR/NAME, bound to these records (no synthetic rows, no tasks)",
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option(help="with --data, the domain's name (default: from the data)")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Read API specs, cluster their operations into domains (PLAN.json) and write each domain's folder.

    Every operation lands in exactly one domain of --min-tools to --max-tools tools whose entities
    are connected, or in the plan's `skipped` with the reason. A file that cannot be read, or a
    file named here that is not an API spec, is listed (and in the plan's `failed_files`) and the
    others are still read; the command then exits 1. The same inputs and seed give a
    byte-identical plan. With --out, each domain becomes a folder (domain.yaml, seed/, policy.md,
    README.md) that `toolgym check` accepts, or is left out with the reason; DIR/report.json counts
    operations compiled and skipped (by source operation id), domains and tasks. When no domain is
    kept, nothing is written to DIR and the command exits 1.

    With --data SNAPSHOT, the one spec's tools become one domain seeded with those records, each
    tool bound to the tables by its argument names; what a description says that the domain does
    not do is listed per tool as "not modelled" (README.md and report.json in the folder).

    Example: toolgym generate specs --out generated --seed 0 --workers 2

    With a model: toolgym generate specs --out generated --llm http://127.0.0.1:8000/v1 --llm-model qwen2.5-7b-instruct

    From real records: toolgym generate tools.json --data db.json --out generated
    """
    from toolgen.synth.llm import LLMOptions, default_cache

    llm_options = (
        LLMOptions(url=llm, model=llm_model, cache=str(llm_cache or default_cache()))
        if llm is not None
        else None
    )
    if data is not None:
        _from_data(specs, data, out_dir, name, as_json, llm_options)
        return
    from toolgen.pipeline import generate as run_generate
    from toolgen.pipeline import summarize
    from toolgen.synth.leftovers import toolbox_domains
    from toolgen.synth.report import build_report, report_table
    from toolgen.synth.run import synthesize

    if max_tools < min_tools:
        raise typer.BadParameter(f"--max-tools {max_tools} is below --min-tools {min_tools}")
    if plan is None and out_dir is None:
        raise typer.BadParameter("give --plan PLAN.json, --out DIR, or both")
    chosen = next(e for e in EXECUTORS if e == executor)
    row_count = rows
    if llm is not None and (out_dir is None or not tasks):
        raise typer.BadParameter("--llm writes the tasks of written domains: give --out DIR (with tasks)")
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True, disable=as_json) as bar:
        task = bar.add_task("reading specs", total=None)
        generated = run_generate(
            specs,
            min_tools=min_tools,
            max_tools=max_tools,
            seed=seed,
            workers=workers,
            progress=_progress_callback(bar, task),
            require_specs=True,
        )
        if plan is not None:
            plan.write_text(generated.plan.model_dump_json(indent=2) + "\n", encoding="utf-8")
        report, kept = None, False
        if out_dir is not None:
            extra, still_skipped = (
                toolbox_domains(generated.plan, generated.operations) if toolboxes else ([], None)
            )
            domains = [*generated.plan.domains, *extra]
            bar.update(task, description="writing domains", completed=0, total=len(domains))
            results = synthesize(
                domains,
                generated.operations,
                out_dir,
                seed=seed,
                rows=row_count,
                workers=workers,
                progress=_progress_callback(bar, task),
                with_tasks=tasks,
                executor=chosen,
                llm=llm_options,
            )
            report = build_report(
                generated,
                results,
                seed=seed,
                rows=row_count,
                skipped=still_skipped,
                toolboxes=[d.name for d in extra],
            )
            kept = any(r.kept for r in results)
            if kept:
                (out_dir / "report.json").write_text(
                    json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
                )
    if report is not None and out_dir is not None:
        if as_json:
            brief = {k: v for k, v in report.items() if k not in ("domain_results", "skipped")}
            print_json(
                {
                    "out": str(out_dir) if kept else None,
                    "report": str(out_dir / "report.json") if kept else None,
                    "plan": str(plan) if plan else None,
                    **brief,
                }
            )
        else:
            out.print(report_table(report, str(out_dir)))
    else:
        summary = summarize(generated)
        if as_json:
            print_json({"plan": str(plan), **summary})
        else:
            out.print(_table(summary, plan or Path("-")))
    _report_failures(generated.plan.failed_files, generated.stats.get("files", 0))
    if out_dir is not None and not kept:
        raise fail(f"no domain was generated, so nothing was written to {out_dir}")
    if generated.plan.failed_files:
        raise typer.Exit(1)


def _report_failures(failed: list[FailedFile], files: int) -> None:
    """One line per input that could not be used (the first ten), then the error line."""
    from toolgen.ingest.files import NOT_A_SPEC

    for failure in failed[:10]:
        why = failure.reason.removeprefix(f"{NOT_A_SPEC}: ")
        what = NOT_A_SPEC if why != failure.reason else "failed"
        err.print(f"{what}: {failure.path}: {why}", highlight=False, markup=False, soft_wrap=True)
    if len(failed) > 10:
        err.print(f"… and {len(failed) - 10} more failed files (see the plan or report)", highlight=False)
    if failed:
        error_line(f"{len(failed)} of {count(files, 'input file')} could not be used (listed above)")
