"""Serving metrics computed from transcripts: per session and per domain.

    report = collect("runs")          # every RUNS/*.jsonl
    report["sessions"], report["domains"]

Counts calls and errors by kind and gives tool-execution latency percentiles, and per domain the
infrastructure error rate. Unreadable files are listed under `errors`; the others still count.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from simulator.errors import INFRA_KINDS, ErrorKind

from ..errors import TranscriptError
from ..transcripts import read_records, read_text

#: every kind, the agent's first
ERROR_KINDS = tuple(ErrorKind)
PERCENTILES = (50, 90, 99)
#: The longest error message listed.
ERROR_CHARS = 2000


def percentile(sorted_values: list[float], p: float) -> float | None:
    """The p-th percentile (nearest rank) of already sorted values; None when empty."""
    if not sorted_values:
        return None
    rank = max(1, -(-len(sorted_values) * p // 100))
    return sorted_values[min(len(sorted_values), int(rank)) - 1]


def _latency(durations: list[float]) -> dict[str, float | None]:
    ordered = sorted(durations)
    out: dict[str, float | None] = {f"p{p}_us": percentile(ordered, p) for p in PERCENTILES}
    out["max_us"] = ordered[-1] if ordered else None
    return out


def is_timeout(call: dict[str, Any]) -> bool:
    """A failed call whose error says it timed out."""
    error = call.get("error")
    text = error.lower() if isinstance(error, str) else ""
    return not call.get("ok", False) and (
        call.get("error_kind") == ErrorKind.TIMEOUT or "timed out" in text or "timeout" in text
    )


def session_stats(path: str | Path) -> dict[str, Any]:
    """The metrics of one transcript file."""
    read, _, truncated = read_records(read_text(path), str(path), cut_tail=True)
    records = [r.value for r in read]
    header = next((r for r in records if r.get("type") == "header"), None)
    if header is None:
        raise TranscriptError(f"{path}: not a toolgym transcript (no header record)")
    end = next((r for r in reversed(records) if r.get("type") == "end"), None)
    calls = [r for r in records if r.get("type") == "call"]
    errors: dict[str, int] = dict.fromkeys(ERROR_KINDS, 0)
    for call in calls:
        if not call.get("ok", False):
            kind = ErrorKind.read(call.get("error_kind")) or ErrorKind.TOOL
            errors[kind] += 1
    durations = [float(c["duration_us"]) for c in calls if isinstance(c.get("duration_us"), int | float)]
    return {
        "session": header.get("session") or Path(path).stem,
        "file": str(path),
        "domain": header.get("domain"),
        "version": header.get("version"),
        "fingerprint": header.get("fingerprint"),
        "task": header.get("task"),
        "seed": header.get("seed"),
        "transport": header.get("transport"),
        "started_at": header.get("started_at"),
        "ended_at": end.get("ended_at") if end else None,
        "end_reason": end.get("reason") if end else None,
        "calls": len(calls),
        "ok": sum(1 for c in calls if c.get("ok")),
        "errors": errors,
        "injected": errors.get(ErrorKind.INJECTED, 0),
        "timeouts": sum(1 for c in calls if is_timeout(c)),
        "truncated": truncated,
        "latency": _latency(durations),
        "_durations": durations,
    }


def _domain_rows(sessions: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for s in sessions:
        groups.setdefault(f"{s['domain']}@{s['version']}", []).append(s)
    rows = []
    for ref, members in sorted(groups.items()):
        calls = sum(s["calls"] for s in members)
        errors: dict[str, int] = dict.fromkeys(ERROR_KINDS, 0)
        for s in members:
            for kind, n in s["errors"].items():
                errors[kind] = errors.get(kind, 0) + n
        infra = sum(errors.get(k, 0) for k in INFRA_KINDS)
        durations = [d for s in members for d in s["_durations"]]
        rows.append(
            {
                "domain": ref,
                "sessions": len(members),
                "calls": calls,
                "ok": sum(s["ok"] for s in members),
                "errors": errors,
                "injected": errors.get(ErrorKind.INJECTED, 0),
                "timeouts": sum(s["timeouts"] for s in members),
                "infra_error_rate": round(infra / calls, 6) if calls else 0.0,
                "latency": _latency(durations),
            }
        )
    return rows


def collect(runs: str | Path) -> dict[str, Any]:
    """Metrics of every `*.jsonl` transcript in `runs`: {"sessions": [...], "domains": [...]}."""
    folder = Path(runs)
    if not folder.is_dir():
        raise TranscriptError(f"{folder}: no such folder of transcripts")
    sessions, errors = [], []
    for path in sorted(folder.glob("*.jsonl")):
        try:
            sessions.append(session_stats(path))
        except TranscriptError as exc:
            text = str(exc)
            if len(text) > ERROR_CHARS:
                text = f"{text[:ERROR_CHARS]}... ({len(text):,} chars in all)"
            errors.append({"file": str(path), "status": "error", "error": text})
    domains = _domain_rows(sessions)
    for s in sessions:
        del s["_durations"]
    return {"runs": str(folder), "sessions": sessions, "domains": domains, "errors": errors}
