"""`toolgym migrate PATH`: rewrite a domain folder's old spellings to the new ones."""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from ..app import DomainArg, JsonOpt, app, err, out, print_json


def _verified(folder: Path, text: str) -> None:
    """Load the migrated domain.yaml beside the folder's other files; a problem stops the migration."""
    from scoring.tasks import check_domain
    from simulator import SpecError

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / folder.name
        copy.mkdir()
        for entry in folder.iterdir():
            if entry.name != "domain.yaml":
                (copy / entry.name).symlink_to(entry.resolve())
        (copy / "domain.yaml").write_text(text, encoding="utf-8", newline="")
        report = check_domain(copy)
    if report.errors:
        raise SpecError(report.errors)


def _write(path: Path, text: str) -> None:
    """Replace the file's text at once (a crash leaves the old file or the new one, never half)."""
    tmp = path.with_name(f".{path.name}.migrate")
    tmp.write_text(text, encoding="utf-8", newline="")
    os.replace(tmp, path)


@app.command()
def migrate(
    path: DomainArg,
    check: Annotated[
        bool,
        typer.Option("--check", help="write nothing; show the diff, exit 1 if any old spelling is there"),
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="write nothing; show the diff")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Rewrite a domain's old spellings (those `toolgym check` warns about) to the new ones, in place.

    Only the old words change: comments, key order, quoting and layout stay as written. The new
    spelling names the same operator, so the domain behaves identically; the rewritten domain.yaml
    is loaded before it replaces the old one. A domain with errors is not migrated.

    Example: toolgym migrate domains/bank --dry-run
    """
    from scoring.tasks import check_domain
    from simulator import SpecError
    from simulator.format.migrate import apply, plan

    report = check_domain(path)
    if report.errors:
        raise SpecError(report.errors)
    file = report.folder / "domain.yaml"
    with file.open(encoding="utf-8", newline="") as fh:  # line endings kept as written
        text = fh.read()
    edits, missed = plan(text, report.spellings)
    new = apply(text, edits)
    diff = "".join(
        difflib.unified_diff(
            text.splitlines(keepends=True), new.splitlines(keepends=True), "a/domain.yaml", "b/domain.yaml"
        )
    )
    write = bool(edits) and not (check or dry_run)
    if write:
        _verified(report.folder, new)
        _write(file, new)
    if as_json:
        body: dict[str, Any] = {
            "path": str(file),
            "changes": [{"old": e.old, "new": e.new, "offset": e.start} for e in edits],
            "not_found": [s.__dict__ for s in missed],
            "written": write,
            "diff": diff,
        }
        print_json(body)
    else:
        for s in missed:
            err.print(
                f"warning: {s.at}: `{s.old}` not found in the text; rewrite it by hand", highlight=False
            )
        if check or dry_run:
            out.out(diff, end="", highlight=False)
        what = "would rewrite" if check or dry_run else "rewrote"
        summary = f"{what} {len(edits)} old spelling{'' if len(edits) == 1 else 's'} in {file}"
        err.print(summary if edits else f"nothing to migrate in {file}", highlight=False)
    if check and (edits or missed):  # (an old spelling left for a person to rewrite fails too)
        raise typer.Exit(1)
