"""Core commands: domains, check, call."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from simulator import SpecError, list_domain_dirs, load_domain
from simulator.loader import domain_folders, local_roots

from ..app import DomainArg, JsonOpt, app, err, fail, out, print_json


@app.command()
def domains(as_json: JsonOpt = False) -> None:
    """List the bundled and local domains with version, tools, seed rows and tasks.

    Local domains are found in the folders named by $TOOLGYM_DOMAINS (os.pathsep-separated): each
    is a domain folder itself, or a folder of domain folders.

    Example: toolgym domains --json
    """
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
    """Load a domain and list every problem with its file and location; exit 1 if there is any.

    Checks the YAML, tables and foreign keys, tools (unknown tables or columns, invalid JSON
    Schemas, duplicate names, expressions naming unknown values), seed rows against the schema,
    and tasks (unknown tools, arguments their tool's schema rejects).

    Example: toolgym check domains/bank
    """
    try:
        d = load_domain(path)
    except SpecError as exc:
        if as_json:
            print_json({"ok": False, "problems": [p.__dict__ for p in exc.problems]})
        elif len(exc.problems) == 1:
            raise fail(str(exc.problems[0])) from None
        else:
            err.print(f"[bold red]{len(exc.problems)} problems[/] in {path}:", highlight=False)
            for p in exc.problems:
                err.print(f"  {p}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    summary = {
        "ok": True,
        "domain": d.ref,
        "fingerprint": d.fingerprint(),
        "tables": len(d.tables),
        "tools": len(d.tools),
        "rows": d.row_count(),
        "tasks": len(d.tasks),
    }
    if as_json:
        print_json(summary)
    else:
        out.print(
            f"[green]ok[/] {d.ref}: {summary['tables']} tables, {summary['rows']} seed rows, {summary['tools']} tools, {summary['tasks']} tasks",
            highlight=False,
        )


@app.command()
def call(
    domain: DomainArg,
    tool: Annotated[str, typer.Argument(help="the tool's name")],
    arguments: Annotated[str, typer.Argument(help="the arguments as a JSON object")] = "{}",
    seed: Annotated[int, typer.Option(help="episode seed (generated ids depend on it)")] = 0,
) -> None:
    """Run one tool call on a fresh episode; print the result as JSON, or the error and exit 1.

    Example: toolgym call bank get_customer '{"customer_id": "CUS-090075c2"}'
    """
    try:
        args = json.loads(arguments)
    except json.JSONDecodeError as exc:
        raise fail(
            f"the arguments are not valid JSON ({exc.msg} at position {exc.pos}): {arguments}"
        ) from None
    d = load_domain(domain)
    with d.episode(seed=seed) as ep:
        result = ep.call(tool, args)
    print_json(result)
