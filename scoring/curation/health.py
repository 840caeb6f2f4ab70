"""Environment health: per-domain call, error, timeout and fault rates, rewards, pass rates, quarantine.

Built from a runs folder of transcripts (`scoring.curation.metrics.collect`) and, optionally, the score
results of those rollouts (`toolgym score --runs ... --out results.jsonl`). A domain whose
infrastructure error rate passes the threshold is quarantined: its rollouts should not feed
training until it is fixed. `render_html` writes one self-contained page (inline SVG, no scripts).
"""

from __future__ import annotations

import html
from pathlib import Path

from pydantic import BaseModel, Field

from simulator.errors import INFRA_KINDS, ErrorKind

from .curate import read_results, task_stats
from .metrics import collect

BINS = 10


class DomainHealth(BaseModel):
    domain: str
    sessions: int = 0
    calls: int = 0
    tool_errors: int = 0
    infra_errors: int = 0
    injected: int = 0
    timeouts: int = 0
    error_rate: float = Field(default=0.0, description="calls that failed for any reason / calls")
    infra_error_rate: float = Field(
        default=0.0, description="infrastructure failures (injected, infra, internal) / calls"
    )
    timeout_rate: float = 0.0
    rollouts: int = 0
    infra_failed_rollouts: int = 0
    infra_failure_rate: float = Field(default=0.0, description="rollouts kept out of rewards / rollouts")
    mean_reward: float | None = None
    reward_histogram: list[int] = Field(default_factory=list, description=f"{BINS} bins over [0, 1]")
    pass_rate_histogram: list[int] = Field(
        default_factory=list, description=f"tasks by pass rate, {BINS} bins over [0, 1]"
    )
    latency_p50_us: float | None = None
    latency_p99_us: float | None = None
    quarantined: bool = False


class HealthReport(BaseModel):
    runs: str
    threshold: float
    domains: list[DomainHealth]
    quarantine: list[str]
    errors: list[str] = Field(default_factory=list, description="transcripts that could not be read, and why")


def _histogram(values: list[float]) -> list[int]:
    bins = [0] * BINS
    for v in values:
        bins[min(BINS - 1, max(0, int(v * BINS)))] += 1
    return bins


def health(runs: str | Path, results: str | Path | None = None, threshold: float = 0.05) -> HealthReport:
    metrics = collect(runs)
    by_domain: dict[str, DomainHealth] = {}
    for row in metrics["domains"]:
        errors = row["errors"]
        d = by_domain.setdefault(row["domain"], DomainHealth(domain=row["domain"]))
        d.sessions, d.calls = row["sessions"], row["calls"]
        d.tool_errors = errors.get(ErrorKind.TOOL, 0)
        d.injected = errors.get(ErrorKind.INJECTED, 0)
        d.infra_errors = sum(errors.get(kind, 0) for kind in INFRA_KINDS)
        d.latency_p50_us, d.latency_p99_us = row["latency"]["p50_us"], row["latency"]["p99_us"]
        d.timeouts = row["timeouts"]
    if results is not None:
        rows = read_results(results)
        stats = task_stats(rows, 0.0, 1.0)
        for ref in sorted({str(r["domain"]) for r in rows}):
            d = by_domain.setdefault(ref, DomainHealth(domain=ref))
            mine = [r for r in rows if str(r["domain"]) == ref]
            scored = [float(r["reward"]) for r in mine if r.get("status") != "failed-infra"]
            d.rollouts, d.infra_failed_rollouts = len(mine), len(mine) - len(scored)
            d.infra_failure_rate = round(d.infra_failed_rollouts / len(mine), 4)
            d.mean_reward = round(sum(scored) / len(scored), 4) if scored else None
            d.reward_histogram = _histogram(scored)
            d.pass_rate_histogram = _histogram(
                [t.pass_rate for t in stats if t.domain == ref and t.pass_rate is not None]
            )
    for d in by_domain.values():
        if d.calls:
            d.error_rate = round((d.tool_errors + d.infra_errors) / d.calls, 4)
            d.infra_error_rate = round(d.infra_errors / d.calls, 4)
            d.timeout_rate = round(d.timeouts / d.calls, 4)
        d.quarantined = d.infra_error_rate > threshold or d.infra_failure_rate > threshold
    domains = sorted(by_domain.values(), key=lambda d: d.domain)
    return HealthReport(
        runs=str(runs),
        threshold=threshold,
        domains=domains,
        quarantine=[d.domain for d in domains if d.quarantined],
        errors=[e["error"] for e in metrics["errors"]],
    )


def _bars(values: list[int], label: str) -> str:
    """An inline SVG bar chart of histogram counts over [0, 1]."""
    width, height, pad = 320, 120, 18
    top = max(values, default=0) or 1
    bar = (width - 2 * pad) / max(1, len(values))
    parts = [f'<svg width="{width}" height="{height + 30}" role="img" aria-label="{html.escape(label)}">']
    for i, v in enumerate(values):
        h = (height - pad) * v / top
        x = pad + i * bar
        parts.append(
            f'<rect x="{x:.1f}" y="{height - h:.1f}" width="{bar - 2:.1f}" height="{h:.1f}" fill="#4a7bd0"><title>{i / len(values):.1f}-{(i + 1) / len(values):.1f}: {v}</title></rect>'
        )
        if v:
            parts.append(
                f'<text x="{x + bar / 2 - 4:.1f}" y="{height - h - 3:.1f}" font-size="10">{v}</text>'
            )
    parts.append(
        f'<text x="{pad}" y="{height + 14}" font-size="10">0</text><text x="{width - pad - 6}" y="{height + 14}" font-size="10">1</text>'
    )
    parts.append(
        f'<text x="{width / 2 - 40:.0f}" y="{height + 28}" font-size="11">{html.escape(label)}</text></svg>'
    )
    return "".join(parts)


def render_html(report: HealthReport) -> str:
    rows = []
    for d in report.domains:
        flag = ' class="bad"' if d.quarantined else ""
        rows.append(
            f"<tr{flag}><td>{html.escape(d.domain)}</td><td>{d.sessions}</td><td>{d.calls}</td><td>{d.error_rate:.1%}</td>"
            f"<td>{d.timeout_rate:.1%}</td><td>{d.injected}</td><td>{d.infra_error_rate:.1%}</td><td>{d.infra_failure_rate:.1%}</td>"
            f"<td>{'' if d.mean_reward is None else f'{d.mean_reward:.2f}'}</td><td>{'' if d.latency_p50_us is None else f'{d.latency_p50_us:.0f}'}</td>"
            f"<td>{'quarantined' if d.quarantined else 'ok'}</td></tr>"
        )
    charts = "".join(
        f"<section><h3>{html.escape(d.domain)}</h3>{_bars(d.reward_histogram or [0] * BINS, 'reward')}{_bars(d.pass_rate_histogram or [0] * BINS, 'task pass rate')}</section>"
        for d in report.domains
    )
    quarantine = ", ".join(html.escape(q) for q in report.quarantine) or "none"
    errors = (
        "<h2>Transcripts that could not be read</h2><ul>"
        + "".join(f"<li>{html.escape(e)}</li>" for e in report.errors)
        + "</ul>"
        if report.errors
        else ""
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>toolgym environment health</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;color:#222}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}td:first-child{{text-align:left}}
tr.bad{{background:#fde2e2}}section{{display:inline-block;margin:1em 2em 0 0;vertical-align:top}}</style></head>
<body><h1>toolgym environment health</h1>
<p>Runs: <code>{html.escape(report.runs)}</code>. Quarantine threshold: infrastructure error rate over {report.threshold:.0%}.
Quarantined: <b>{quarantine}</b>.</p>
<table><tr><th>domain</th><th>sessions</th><th>calls</th><th>error rate</th><th>timeout rate</th><th>injected faults</th>
<th>infra error rate</th><th>infra-failed rollouts</th><th>mean reward</th><th>p50 latency (µs)</th><th>status</th></tr>
{"".join(rows)}</table>
<h2>Rewards and pass rates</h2>{charts}{errors}
</body></html>
"""
