"""`toolgym export-sft DOMAIN... --out FILE.jsonl`: gold solutions as chat transcripts for SFT."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

if TYPE_CHECKING:
    from scoring.validation.manifest import Manifest

from ..app import JsonOpt, app, err, out, output_file, print_json


def _manifest_for(manifests: list[Manifest], name: str) -> Manifest | None:
    for manifest in manifests:
        if manifest.domain.partition("@")[0] == name:
            return manifest
    return None


@app.command("export-sft")
def export_sft(
    domains: Annotated[
        list[str],
        typer.Argument(help="bundled domains' names (see `toolgym domains`) or domain folders' paths"),
    ],
    out_file: Annotated[
        Path,
        typer.Option("--out", callback=output_file, help="the JSONL file to write, one transcript a line"),
    ],
    manifest: Annotated[
        list[Path] | None,
        typer.Option(
            "--manifest",
            exists=True,
            dir_okay=False,
            help="export only the tasks these validated manifests list (`toolgym validate --manifest-dir`); "
            "every domain given needs one",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Write the tasks' gold solutions as OpenAI chat transcripts for supervised warm-up.

    One line per task: {"domain", "version", "task", "seed", "tools", "messages"}, the messages
    being the system prompt (the domain policy), the instruction, then per gold call an assistant
    `tool_calls` message and the tool's real result (the gold calls are replayed on a fresh
    episode through the environment API), then the answer through `submit_answer`. A solution is
    written only when it scores 1.0 as `toolgym score` scores it; a task whose gold fails or does
    not score 1.0 is listed, not exported. With --manifest, only the validated tasks.

    Example: toolgym export-sft bank office --out sft.jsonl
    """
    from scoring.tasks import load_domain
    from scoring.validation.manifest import load_manifest

    from ..env.sft import export_domain

    manifests = [load_manifest(p) for p in manifest] if manifest else []
    loaded = []
    for ref in domains:
        domain = load_domain(ref)
        chosen = _manifest_for(manifests, domain.name)
        if manifests and chosen is None:
            raise typer.BadParameter(
                f"no manifest given is for domain {domain.name} (give one per domain, or none)",
                param_hint="'--manifest'",
            )
        if chosen is not None:
            chosen.check(domain, None)
        loaded.append((domain, chosen.valid_tasks if chosen is not None else None))
    total = sum(len(ids) if ids is not None else len(d.tasks) for d, ids in loaded)
    written, skipped = 0, list[dict[str, str | None]]()
    columns = (TextColumn("exporting"), BarColumn(), MofNCompleteColumn())
    with (
        out_file.open("w", encoding="utf-8") as handle,
        Progress(*columns, console=err, transient=True) as bar,
    ):
        progress = bar.add_task("exporting", total=total)
        for domain, ids in loaded:
            for item in export_domain(domain, ids):
                if item.transcript is not None:
                    handle.write(json.dumps(item.transcript, ensure_ascii=False) + "\n")
                    written += 1
                else:
                    skipped.append({"domain": domain.name, "task": item.task, "reason": item.reason})
                bar.advance(progress)
    for entry in skipped:
        err.print(
            f"skipped {entry['domain']}/{entry['task']}: {entry['reason']}", highlight=False, soft_wrap=True
        )
    if as_json:
        print_json({"out": str(out_file), "written": written, "skipped": skipped})
    else:
        out.print(f"wrote {written} transcripts to {out_file} ({len(skipped)} skipped)", highlight=False)
