"""`toolgym score`: score transcripts against their task's expected state, one by one or a runs directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from scoring.batch import BatchScorer

from ..app import LIBRARY_ERRORS, JsonOpt, app, describe, err, error_line, fail, out, output_file, print_json


@app.command()
def score(
    transcripts: Annotated[
        list[Path] | None,
        typer.Argument(
            exists=True,
            dir_okay=False,
            help="transcript files: toolgym JSONL, OpenAI or Anthropic messages, MCP JSON-RPC logs",
        ),
    ] = None,
    domain: Annotated[
        str | None,
        typer.Option("--domain", "-d", help="domain name or folder (default: the one the transcript names)"),
    ] = None,
    task: Annotated[str | None, typer.Option(help="task id (default: the transcript header's)")] = None,
    seed: Annotated[
        int | None, typer.Option(help="episode seed (default: the transcript's, else the task's)")
    ] = None,
    runs: Annotated[
        Path | None,
        typer.Option(
            "--runs",
            exists=True,
            file_okay=False,
            help="batch mode: score every *.jsonl / *.json under this directory",
        ),
    ] = None,
    out_file: Annotated[
        Path | None,
        typer.Option("--out", callback=output_file, help="write one JSON result line per transcript here"),
    ] = None,
    manifest: Annotated[
        list[Path] | None,
        typer.Option(
            "--manifest",
            exists=True,
            dir_okay=False,
            help="refuse tasks not in these validated manifests (`toolgym validate --manifest-dir`)",
        ),
    ] = None,
    key_file: Annotated[
        Path | None,
        typer.Option(
            "--key",
            help="the server's runs key, to verify its labels (default: .toolgym-key beside each transcript)",
        ),
    ] = None,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="batch mode: the whole explanation of each rollout that did not pass (default: its first sentence)",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Score transcripts: replay the agent's calls and the task's gold calls, diff the states,
    check the answer facts. Prints reward, partial credit, the diff and an explanation.

    Formats: toolgym JSONL (what `serve` writes), OpenAI or Anthropic message lists, MCP JSON-RPC
    logs. A chat log may be wrapped as {"domain": "bank", "task": "bank-007", "seed": 0,
    "messages": [...], "truncated": false, "termination_reason": "done"} (all keys but messages
    optional); `truncated: true` or a step-limit termination reason scores 0.0.

    Only labels the server signed (checked with its key) make a call an infrastructure fault; a
    rollout such a fault decided is failed-infra (reward null), a server transcript without its
    end record is incomplete (reward null), never scored 0. Batch mode prints mean reward, pass
    rate and infra-failure rate per domain and per task, then each rollout that did not pass
    (reward below 1.0, or not scored) with the first sentence of its explanation (`--explain`:
    all of it), and exits 1 if any transcript could not be scored; a `toolgym rollout` folder's
    results.jsonl is not taken for a transcript. A JSONL transcript is read a line at a time and
    its calls replayed as they are read, so memory stays flat however long it is; transcripts over
    64 MiB are refused (TOOLGYM_MAX_TRANSCRIPT_BYTES).

    Example: toolgym score run.jsonl --domain bank --task bank-001

    Example: toolgym score --runs runs/ --out results.jsonl

    Example: toolgym score --runs runs/ --explain
    """
    from scoring.batch import BatchScorer
    from scoring.validation.manifest import load_manifest
    from simulator.serve.labels import load_key

    manifests = [load_manifest(p) for p in manifest] if manifest else None
    try:
        key = load_key(key_file) if key_file is not None else None
    except (OSError, ValueError) as exc:
        raise fail(f"--key: {exc}", 2) from None
    scorer = BatchScorer(domain=domain, task=task, seed=seed, manifests=manifests, key=key)
    try:
        if runs is not None:
            if transcripts:
                raise fail("give transcripts or --runs DIR, not both", 2)
            _batch(scorer, runs, out_file, as_json, explain)
        elif not transcripts:
            raise fail("give one or more transcripts, or --runs DIR (see --help)", 2)
        else:
            _single(scorer, transcripts, out_file, as_json)
    finally:
        scorer.close()


def _single(scorer: BatchScorer, paths: list[Path], out_file: Path | None, as_json: bool) -> None:
    from scoring.report import render

    reports = []
    failed = 0
    for path in paths:  # one bad file is reported, and the others are still scored
        try:
            reports.append(scorer.report(path))
        except LIBRARY_ERRORS as exc:
            failed += 1
            message = describe(exc)
            error_line(message if str(path) in message else f"{path}: {message}")
    if not reports:
        raise typer.Exit(1)
    if out_file is not None:
        lines = (json.dumps(r.model_dump(mode="json"), ensure_ascii=False) + "\n" for r in reports)
        out_file.write_text("".join(lines), encoding="utf-8")
        err.print(f"results: {out_file}", highlight=False)
    if as_json:
        dumped = [r.model_dump(mode="json") for r in reports]
        print_json(dumped[0] if len(dumped) == 1 else dumped)
    else:
        for report in reports:
            for part in render(report):
                out.print(part, highlight=False)
    if failed:
        raise fail(f"{failed} of {len(paths)} transcripts could not be scored (listed above)")


def _batch(scorer: BatchScorer, runs: Path, out_file: Path | None, as_json: bool, explain: bool) -> None:
    from scoring.batch import find_transcripts, summarize

    if not runs.is_dir():
        raise fail(f"{runs} is not a directory", 2)
    paths = find_transcripts(runs, exclude=[out_file] if out_file else [])
    if not paths:
        raise fail(f"no *.jsonl or *.json transcripts under {runs}")
    lines: list[dict[str, Any]] = []
    handle = out_file.open("w", encoding="utf-8") if out_file else None
    columns = (TextColumn("scoring"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    try:
        with Progress(*columns, console=err, transient=True) as progress:
            bar = progress.add_task("scoring", total=len(paths))
            for path in paths:
                line = scorer.score(path)
                lines.append(line)
                if handle is not None:
                    handle.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
                progress.advance(bar)
    finally:
        if handle is not None:
            handle.close()
    summary = summarize(lines)
    errors = [line for line in lines if line["status"] == "error"]
    for line in errors:
        err.print(f"[bold red]error:[/] {line['error']}", highlight=False, soft_wrap=True)
    if as_json:
        print_json(summary)
    else:
        _print_summary(summary, out_file)
        _print_not_passed(summary["not_passed"], runs, explain)
    if errors:
        raise typer.Exit(1)


def _fmt(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.0%}" if percent else f"{value:.3f}"


_COLUMNS = ("transcripts", "scored", "reward", "pass", "partial", "infra-failed", "errors")


def _cells(s: dict[str, Any]) -> list[str]:
    return [
        str(s["transcripts"]),
        str(s["scored"]),
        _fmt(s["mean_reward"]),
        _fmt(s["pass_rate"], True),
        _fmt(s["mean_partial"]),
        f"{s['failed_infra']} ({_fmt(s['infra_rate'], True)})",
        str(s["errors"]),
    ]


def _print_summary(summary: dict[str, Any], out_file: Path | None) -> None:
    """Per task, per domain and overall: mean reward, pass rate, mean partial credit, infra failures."""
    tasks = Table(title="by task", title_justify="left")
    domains = Table(title="by domain", title_justify="left")
    for table, keys in ((tasks, ("domain", "task")), (domains, ("domain",))):
        for key in keys:
            table.add_column(key, no_wrap=True)
        for name in _COLUMNS:
            table.add_column(name, justify="right")
    for domain, per_task in summary["tasks"].items():
        for task, s in per_task.items():
            tasks.add_row(domain, task, *_cells(s))
    for domain, s in summary["domains"].items():
        domains.add_row(domain, *_cells(s))
    domains.add_section()
    domains.add_row("[bold]all[/]", *_cells(summary["overall"]))
    out.print(tasks)
    out.print(domains)
    if out_file is not None:
        out.print(f"results: {out_file}", highlight=False)


def _name(transcript: str | None, runs: Path) -> str:
    """A transcript's path relative to the runs folder."""
    if transcript is None:
        return "-"
    try:
        return str(Path(transcript).relative_to(runs))
    except ValueError:
        return transcript


def _outcome(line: dict[str, Any]) -> str:
    return f"reward {line['reward']:.1f}" if line["status"] == "scored" else line["status"]


def _print_not_passed(lines: list[dict[str, Any]], runs: Path, explain: bool) -> None:
    """Each rollout below 1.0 (or not scored): a table row with its first sentence of explanation,
    or, with `explain`, a heading line and its whole explanation under it."""
    if not lines:
        return
    title = f"not passed: {len(lines)} rollout(s) below 1.0 or not scored"
    if explain:
        out.print(f"[bold]{title}[/]", highlight=False)
        for line in lines:
            partial = _fmt(line["partial"])
            out.print(
                f"[bold]{_name(line['transcript'], runs)}[/]  task {line['task']}: {_outcome(line)}, "
                f"partial {partial}",
                highlight=False,
                soft_wrap=True,
            )
            for sentence in line["explanation"] or [line["why"]]:
                out.print(f"  - {sentence}", highlight=False, markup=False, soft_wrap=True)
        return
    table = Table(title=title, title_justify="left")
    for name in ("transcript", "task", "outcome", "partial"):
        table.add_column(name, no_wrap=name != "transcript", justify="right" if name == "partial" else "left")
    table.add_column("why (--explain: all of it)", ratio=1, min_width=30)
    for line in lines:
        table.add_row(
            _name(line["transcript"], runs),
            line["task"] or "-",
            _outcome(line),
            _fmt(line["partial"]),
            Text(line["why"]),
        )
    out.print(table)
