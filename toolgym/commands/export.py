"""`toolgym export DOMAIN --out state.db`: an episode's state as a plain SQLite file, or
(`--format snapshot`) in the shape of the data the domain was seeded from."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..app import DomainArg, app, choice, make_parent, out, output_dir, output_file


def _output(path: Path | None) -> Path | None:
    """--out: a file to write, or an existing folder (only a `format: folder` snapshot takes one)."""
    return output_dir(path) if path is not None and path.is_dir() else output_file(path)


@app.command()
def export(
    domain: DomainArg,
    out_file: Annotated[
        Path,
        typer.Option(
            "--out",
            callback=_output,
            help="the file to write (a folder for a snapshot whose layout is `format: folder`)",
        ),
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
    format_: Annotated[
        str,
        typer.Option(
            "--format",
            callback=choice("sqlite", "snapshot"),
            help="sqlite: the tables as declared; snapshot: the shape of the domain's `snapshot:` layout",
        ),
    ] = "sqlite",
    force: Annotated[bool, typer.Option("--force", help="replace --out if it exists")] = False,
) -> None:
    """Write an episode's state as a SQLite file that sqlite3, sqlite-utils or Datasette open, or
    in the shape of the data the domain was seeded from.

    With only DOMAIN, the seed state; with --task, the state the task's gold calls leave; with
    --transcript, the state a rollout leaves, its calls replayed as scoring replays them. The
    SQLite file has the domain's tables as declared (types, primary keys, foreign keys) and no
    toolgym bookkeeping tables. With --format snapshot the state is nested as domain.yaml's
    `snapshot:` layout says: one JSON document of collections (tau2's db.json shape), a folder of
    JSON / JSONL / CSV files, or a SQLite file, like the source. An existing --out is kept unless --force.

    Then `sqlite3 bank-001.db .tables`, `sqlite-utils tables bank-001.db` or `datasette bank-001.db`.

    Example: toolgym export bank --task bank-001 --out bank-001.db

    Example: toolgym export tau2-retail --format snapshot --task 1 --out db-after-1.json
    """
    from scoring.export import export_snapshot, export_state, layout_of
    from scoring.tasks import load_domain

    if task is not None and transcript is not None:
        raise typer.BadParameter("give --task or --transcript, not both", param_hint="'--transcript'")
    d = load_domain(domain)
    folder = False
    if format_ == "snapshot":
        try:
            folder = layout_of(d).format == "folder"
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="'--format'") from None
    target = out_file
    if target.is_dir() and not folder:
        raise typer.BadParameter(f"{target} is a folder; give a file path to write", param_hint="'--out'")
    if target.exists() and not force:
        raise typer.BadParameter(f"{target} exists; pass --force to replace it", param_hint="'--out'")
    if format_ == "snapshot":
        if not folder:
            make_parent(target)
        written = export_snapshot(d, target, task=task, transcript=transcript, seed=seed)
    else:
        written = export_state(d, make_parent(target), task=task, transcript=transcript, seed=seed)
    out.print(f"wrote {written}", highlight=False)
