"""`toolgym export DOMAIN --out state.db`: an episode's state as a plain SQLite file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..app import DomainArg, app, make_parent, out, output_file


@app.command()
def export(
    domain: DomainArg,
    out_file: Annotated[
        Path,
        typer.Option("--out", callback=output_file, help="the SQLite file to write"),
    ],
    task: Annotated[
        str | None, typer.Option(help="the state after this task's gold calls (a task id)")
    ] = None,
    transcript: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="the final state of this rollout, its calls replayed (any transcript format)",
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(help="episode seed (default: the transcript's, else the task's, else 0)"),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="replace --out if it exists")] = False,
) -> None:
    """Write an episode's state as a SQLite file that sqlite3, sqlite-utils or Datasette open.

    With only DOMAIN, the seed state; with --task, the state the task's gold calls leave; with
    --transcript, the state a rollout leaves, its calls replayed as scoring replays them. The
    file has the domain's tables as declared (types, primary keys, foreign keys) and no toolgym
    bookkeeping tables. An existing --out is kept unless --force.

    Then `sqlite3 bank-001.db .tables`, `sqlite-utils tables bank-001.db` or `datasette bank-001.db`.

    Example: toolgym export bank --task bank-001 --out bank-001.db
    """
    from scoring.export import export_state
    from simulator import load_domain

    if task is not None and transcript is not None:
        raise typer.BadParameter("give --task or --transcript, not both", param_hint="'--transcript'")
    if out_file.exists() and not force:
        raise typer.BadParameter(f"{out_file} exists; pass --force to replace it", param_hint="'--out'")
    d = load_domain(domain)
    written = export_state(d, make_parent(out_file), task=task, transcript=transcript, seed=seed)
    out.print(f"wrote {written}", highlight=False)
