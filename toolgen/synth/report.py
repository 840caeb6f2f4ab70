"""The generation report (report.json, and the table `toolgym generate --out` prints).

    report = build_report(generated, results, seed=0, rows=None)
    table = report_table(report)

Operations are counted by source operation id, each once: `total` is every operation read
(normalized or not), `compiled` those that are tools of a kept domain, `skipped` the rest, each
listed with its reason (the plan's: too small and unrelated; the compiler's; or the domain's,
when the domain was left out) and counted by the kind of reason.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table

from toolgen.model import SkippedOperation
from toolgen.pipeline import Generated, summarize

from .run import PHASES, DomainResult

__all__ = ["build_report", "llm_counts", "profile", "reason_kind", "report_table"]

_NUMBER = re.compile(r"\d+")


def reason_kind(reason: str) -> str:
    """The kind of a reason: its text before the first ':' (numbers as N), for counting."""
    head = reason.split(":", 1)[0]
    return _NUMBER.sub("N", head).strip()[:120]


def build_report(
    generated: Generated,
    results: Sequence[DomainResult],
    *,
    seed: int,
    rows: int | Mapping[str, int] | None,
    skipped: Sequence[SkippedOperation] | None = None,
    toolboxes: Sequence[str] = (),
) -> dict[str, Any]:
    """The run in numbers and lists: specs, operations, domains, tasks (see the module doc).

    `skipped`: the operations no domain holds (default: the plan's); `toolboxes`: the names of
    the domains made of the plan's too-small operations."""
    summary = summarize(generated)
    left_out = generated.plan.skipped if skipped is None else skipped
    skipped_reasons: dict[str, str] = {s.id: s.reason for s in left_out}
    compiled: dict[str, str] = {}
    for result in results:
        compiled.update(result.compiled)
        for entry in result.not_compiled:
            skipped_reasons[entry.id] = entry.reason
    total = sum(len(d.operations) for d in generated.plan.domains) + len(generated.plan.skipped)
    kept = [r for r in results if r.kept]
    tasks_rejected: Counter[str] = Counter()
    for r in results:
        tasks_rejected.update(r.tasks_rejected)
    compiled_as: Counter[str] = Counter()
    for r in kept:
        compiled_as.update(r.compiled_as)
    return {
        "specs": summary["specs"],
        "failed_files": [f.model_dump() for f in generated.plan.failed_files],
        "operations": {
            "total": total,
            "compiled": len(compiled),
            "skipped": len(skipped_reasons),
            "compiled_share": len(compiled) / total if total else 0.0,
            "by_kind": summary["operations"]["by_kind"],
            "compiled_as": dict(sorted(compiled_as.items())),
            "skipped_by_reason": dict(
                Counter(reason_kind(r) for r in skipped_reasons.values()).most_common()
            ),
        },
        "domains": {
            "planned": len(generated.plan.domains),
            "toolboxes": len(toolboxes),
            "toolboxes_kept": sum(1 for r in kept if r.name in set(toolboxes)),
            "kept": len(kept),
            "left_out": len(results) - len(kept),
            "tools": sum(r.tools for r in kept),
            "tables": sum(r.tables for r in kept),
            "rows": sum(r.rows for r in kept),
            "left_out_by_reason": dict(
                Counter(reason_kind(r.reason or "") for r in results if not r.kept).most_common()
            ),
        },
        "tasks": {
            "kept": sum(r.tasks_kept for r in kept),  # (a domain left out keeps none)
            "rejected": sum(tasks_rejected.values()),
            "rejected_by_reason": dict(tasks_rejected.most_common()),
        },
        "profile": profile(results),
        "llm": llm_counts(results),
        "seed": seed,
        "rows": rows,
        "domain_results": [
            {
                "name": r.name,
                "kept": r.kept,
                "toolbox": r.name in set(toolboxes),
                "folder": r.folder,
                "tools": r.tools,
                "tables": r.tables,
                "rows": r.rows,
                "operations": len(r.operations),
                "compiled": len(r.compiled),
                "compiled_as": r.compiled_as,
                "warnings": r.warnings,
                "tasks_kept": r.tasks_kept,
                "tasks_rejected": r.tasks_rejected,
                "reason": r.reason,
                "problems": r.problems,
                "candidates": r.candidates,
                "llm": r.llm,
                "seconds": {k: round(v, 4) for k, v in r.seconds.items()},
                "cpu_seconds": round(r.cpu_seconds, 4),
            }
            for r in results
        ],
        "skipped": [{"id": i, "reason": skipped_reasons[i]} for i in sorted(skipped_reasons)],
    }


def profile(results: Sequence[DomainResult]) -> dict[str, Any]:
    """Where the domains' time went: seconds per phase summed over every domain (each in the
    process it ran in, so more than the run's wall time with several workers), the CPU seconds
    they took, and the task candidates validated."""
    seconds = {phase: round(sum(r.seconds.get(phase, 0.0) for r in results), 3) for phase in PHASES}
    return {
        "seconds": seconds,
        "cpu_seconds": round(sum(r.cpu_seconds for r in results), 3),
        "candidates_checked": sum(r.candidates for r in results),
    }


def llm_counts(results: Sequence[DomainResult]) -> dict[str, int]:
    """With `--llm`: descriptions filled (or not, on endpoint errors), requests written as a
    person's, and the templates kept, by why (empty by default)."""
    counts: Counter[str] = Counter()
    for r in results:
        counts.update(r.llm)
    return dict(sorted(counts.items()))


def report_table(report: Mapping[str, Any], out: str) -> Table:
    """The report as a two-column table for people."""
    ops, domains, tasks = report["operations"], report["domains"], report["tasks"]
    table = Table(title=f"generate: {domains['kept']} domains in {out}")
    table.add_column("")
    table.add_column("", justify="right")
    for key, value in report["specs"].items():
        shown = f"{value:.1f} s" if isinstance(value, float) else str(value)
        table.add_row(f"specs {key.replace('_', ' ')}", shown)
    table.add_row("operations", str(ops["total"]))
    table.add_row("  compiled (tools of kept domains)", f"{ops['compiled']} ({ops['compiled_share']:.1%})")
    for how, n in ops["compiled_as"].items():
        table.add_row(f"    as {how}", str(n))
    table.add_row("  skipped", str(ops["skipped"]))
    for reason, n in list(ops["skipped_by_reason"].items())[:8]:
        table.add_row(f"    {reason}", str(n))
    table.add_row("domains planned", str(domains["planned"]))
    table.add_row("toolbox domains (the plan's too-small operations)", str(domains["toolboxes"]))
    table.add_row("domains kept", str(domains["kept"]))
    for reason, n in list(domains["left_out_by_reason"].items())[:5]:
        table.add_row(f"  left out: {reason}", str(n))
    table.add_row(
        "tools / tables / seed rows", f"{domains['tools']} / {domains['tables']} / {domains['rows']}"
    )
    table.add_row("tasks kept", str(tasks["kept"]))
    table.add_row("tasks rejected", str(tasks["rejected"]))
    for reason, n in list(tasks["rejected_by_reason"].items())[:8]:
        table.add_row(f"  {reason}", str(n))
    for what, n in report.get("llm", {}).items():
        table.add_row(f"llm {what.replace('_', ' ')}", str(n))
    return table
