"""Core commands: domains, check, call."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from simulator.format.folders import domain_folders, local_roots

from ..app import DomainArg, JsonOpt, app, count, domain_errors, err, out, print_json


@app.command()
def domains(as_json: JsonOpt = False) -> None:
    """List the bundled and local domains with version, tools, seed rows and tasks.

    Local domains are found in the folders named by $TOOLGYM_DOMAINS (os.pathsep-separated): each
    is a domain folder itself, or a folder of domain folders.

    Example: toolgym domains --json
    """
    from scoring.tasks import load_domain
    from simulator import SpecError, list_domain_dirs

    for root in local_roots():
        if not root.is_dir():
            err.print(f"warning: $TOOLGYM_DOMAINS names {root}, which is not a folder", highlight=False)
        elif not domain_folders(root):
            err.print(
                f"warning: $TOOLGYM_DOMAINS names {root}, which is neither a domain folder (with domain.yaml) "
                "nor a folder of them",
                highlight=False,
                soft_wrap=True,
            )
    rows: list[dict[str, Any]] = []
    for folder in list_domain_dirs():
        try:
            d = load_domain(folder)
            rows.append(
                {
                    "name": d.name,
                    "version": d.version,
                    "tools": len(d.tools),
                    "write_tools": sum(1 for t in d.tools.values() if t.writes),
                    "tables": len(d.tables),
                    "rows": d.row_count(),
                    "tasks": len(d.tasks),
                    "path": str(folder),
                    "ok": True,
                }
            )
        except SpecError as exc:
            rows.append(
                {"name": folder.name, "path": str(folder), "ok": False, "problems": len(exc.problems)}
            )
    if as_json:
        print_json(rows)
        return
    table = Table(title="toolgym domains")
    for col in ("name", "version", "tables", "tools", "rows", "tasks", "path"):
        table.add_column(col, justify="right" if col in ("tables", "tools", "rows", "tasks") else "left")
    for r in rows:
        if r["ok"]:
            table.add_row(
                r["name"],
                r["version"],
                str(r["tables"]),
                f"{r['tools']} ({r['write_tools']} write)",
                str(r["rows"]),
                str(r["tasks"]),
                r["path"],
            )
        else:
            table.add_row(
                r["name"],
                "[red]invalid[/]",
                "",
                "",
                "",
                "",
                f"{r['path']} ({r['problems']} problems: toolgym check)",
            )
    out.print(table)


@app.command()
def check(path: DomainArg, as_json: JsonOpt = False) -> None:
    """Load a domain and list every problem, once, at its source (file and location); exit 1 if any.

    Errors: the YAML, tables and foreign keys, tools (unknown tables or columns, invalid JSON
    Schemas, duplicate names, expressions naming unknown values, literals their column can never
    hold), seed rows against the schema, and tasks (unknown tools, arguments their tool's schema
    rejects). A mistake is reported where it is made, never again in what depends on it.
    Warnings (the domain still loads): values that are lost, and old spellings (with the new form).

    Example: toolgym check domains/bank
    """
    from scoring.tasks import check_domain

    report = check_domain(path)
    errors = [p.__dict__ for p in report.errors]
    warnings = [p.__dict__ for p in report.warnings]
    d = report.domain
    if as_json:
        summary: dict[str, Any] = {"ok": d is not None, "errors": errors, "warnings": warnings}
        if d is not None:
            summary |= {
                "domain": d.ref,
                "fingerprint": d.fingerprint(),
                "tables": len(d.tables),
                "tools": len(d.tools),
                "rows": d.row_count(),
                "tasks": len(d.tasks),
            }
        print_json(summary)
        if d is None:
            raise typer.Exit(1)
        return
    if report.warnings:
        err.print(f"[bold yellow]{count(report.warnings, 'warning')}[/] in {path}:", highlight=False)
        for p in report.warnings:
            err.print(f"  warning: {p}", highlight=False, soft_wrap=True)
    if d is None:
        raise domain_errors(path, report.errors, alone=not report.warnings)
    out.print(
        f"[green]ok[/] {d.ref}: {len(d.tables)} tables, {d.row_count()} seed rows, {len(d.tools)} tools, "
        f"{len(d.tasks)} tasks" + (f", {count(report.warnings, 'warning')}" if report.warnings else ""),
        highlight=False,
    )


def _json_object(text: str) -> str:
    """The `arguments` of `call`: a JSON object, or a usage error saying what is wrong with it."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"not valid JSON ({exc.msg} at position {exc.pos}): {text}") from None
    if not isinstance(value, dict):
        raise typer.BadParameter(f"not a JSON object: {text}")
    return text


@app.command()
def call(
    domain: DomainArg,
    tool: Annotated[str, typer.Argument(help="the tool's name")],
    arguments: Annotated[
        str, typer.Argument(callback=_json_object, help="the arguments as a JSON object")
    ] = "{}",
    seed: Annotated[int, typer.Option(help="episode seed (generated ids depend on it)")] = 0,
) -> None:
    """Run one tool call on a fresh episode; print the result as JSON, or the error and exit 1.

    Example: toolgym call bank get_customer '{"customer_id": "CUS-090075c2"}'
    """
    from scoring.tasks import load_domain

    d = load_domain(domain)
    with d.episode(seed=seed) as ep:
        result = ep.call(tool, json.loads(arguments))
    print_json(result)
