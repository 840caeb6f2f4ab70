"""The quality report as one self-contained HTML page: inline SVG charts, tables, no scripts.

Charts show pass rate and partial credit per policy per domain, and the spread of the trained
policy's rewards per task; tables show each domain's verdicts and every per-task field.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import html
import re

from .metrics import DomainQuality, PolicyStats, QualityReport, TaskQuality
from .verdicts import Verdict

COLOURS = ("#2f6fbd", "#e07b39", "#3a9d5d", "#b8443f", "#7d5bb5", "#8c6d31", "#c1609f", "#5b8f9e")
BINS = 10
#: a character's width in ems, on the generous side: labels wrapped with it never overflow
EM = 0.75
#: the bar charts' width in pixels
CHART_WIDTH = 620
#: the per-task table's columns for each policy (PolicyStats fields, with their headings)
STAT_COLUMNS = (
    ("rollouts", "rollouts"),
    ("scored", "scored"),
    ("infra", "infra"),
    ("pass_rate", "pass"),
    ("mean_partial", "partial"),
)
_BREAK = re.compile(r"(?<=[-_@./: ])")


def _colours(policies: list[str]) -> dict[str, str]:
    return {p: COLOURS[i % len(COLOURS)] for i, p in enumerate(policies)}


def wrap(text: str, width: float, font: float) -> list[str]:
    """`text` in lines that fit `width` pixels at `font` px (EM per character), broken after
    `-`, `_`, `@`, `.`, `/`, `:` or a space where one falls in the line, else anywhere."""
    most = max(1, int(width / (font * EM)))
    lines: list[str] = []
    line = ""
    for piece in _BREAK.split(text):
        while len(piece) > most:  # a piece longer than a line: cut it
            room = most - len(line)
            lines.append(line + piece[:room])
            line, piece = "", piece[room:]
        if len(line) + len(piece) > most:
            lines.append(line)
            line = ""
        line += piece
    return [*lines, line] if line or not lines else lines


def _text(x: float, y: float, lines: list[str], font: int, extra: str = "") -> str:
    """An SVG text of several lines (one tspan each), the first with its baseline at y."""
    spans = "".join(
        f'<tspan x="{x}" dy="{0 if i == 0 else round(font * 1.25, 1)}">{html.escape(line)}</tspan>'
        for i, line in enumerate(lines)
    )
    return f'<text x="{x}" y="{y:.1f}" font-size="{font}"{extra}>{spans}</text>'


def grouped_bars(domains: list[DomainQuality], policies: list[str], metric: str, title: str) -> str:
    """Bars of `metric` (pass_rate or mean_partial) in [0, 1]: a group per domain, under its whole
    name (wrapped to the chart's width), a bar per policy with its value beside it."""
    colours = _colours(policies)
    width, left, value_room, bar, label_font = CHART_WIDTH, 24, 60, 14, 12
    plot = width - left - value_room
    body: list[str] = []
    y = 50.0
    for d in domains:
        lines = wrap(d.domain, width - left, label_font)
        body.append(_text(left, y + label_font, lines, label_font, ' font-weight="600"'))
        y += label_font * 1.25 * len(lines) + 6
        for p in policies:
            stats = d.policies.get(p)
            value = getattr(stats, metric) if stats is not None else None
            if value is not None:
                w = max(1.0, plot * value)
                body.append(
                    f'<rect x="{left}" y="{y:.1f}" width="{w:.1f}" height="{bar - 3}" fill="{colours[p]}">'
                    f"<title>{html.escape(d.domain)} · {html.escape(p)}: {value:.3f}</title></rect>"
                )
                shown = f"{value:.0%}" if metric == "pass_rate" else f"{value:.2f}"
                body.append(_text(left + w + 4, y + bar - 4, [shown], 10))
            y += bar
        y += 14
    axis = [_text(left, 18, wrap(title, width - left, 13), 13, ' font-weight="600"')]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        x = left + plot * tick
        axis.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="38" y2="{y - 10:.1f}" stroke="#e3e3e3"/>'
            + _text(round(x, 1), 34, [f"{tick:.2f}"], 10, ' text-anchor="middle"')
        )
    return (
        f'<svg width="{width}" height="{y:.0f}" role="img" aria-label="{html.escape(title)}">'
        + "".join(axis + body)
        + "</svg>"
    )


def legend(policies: list[str]) -> str:
    colours = _colours(policies)
    return "".join(
        f'<span class="key"><i style="background:{colours[p]}"></i>{html.escape(p)}</span>' for p in policies
    )


def spread_histogram(d: DomainQuality) -> str:
    """Tasks by the standard deviation of the trained policy's rewards within their group."""
    spreads = [t.spread for t in d.tasks if t.spread is not None]
    counts = [0] * BINS
    for s in spreads:  # a 0/1 reward's std is at most 0.5
        counts[min(BINS - 1, int(s / 0.5 * BINS))] += 1
    width, height, pad = 260, 90, 16
    most = max(counts, default=0) or 1
    step = (width - 2 * pad) / BINS
    parts = [f'<svg width="{width}" height="{height + 18}" role="img" aria-label="reward spread">']
    for i, c in enumerate(counts):
        h = (height - pad) * c / most
        parts.append(
            f'<rect x="{pad + i * step:.1f}" y="{height - h:.1f}" width="{step - 2:.1f}" height="{h:.1f}" fill="#4a7bd0">'
            f"<title>std {i * 0.05:.2f}-{(i + 1) * 0.05:.2f}: {c} tasks</title></rect>"
        )
        if c:
            parts.append(_text(round(pad + i * step + 2, 1), height - h - 3, [str(c)], 10))
    parts.append(
        _text(pad, height + 13, ["0"], 10)
        + _text(width - pad, height + 13, ["0.5"], 10, ' text-anchor="end"')
    )
    parts.append("</svg>")
    caption = f"tasks by reward std within groups of {html.escape(d.train or '-')}"
    return f"<figure>{''.join(parts)}<figcaption>{caption}</figcaption></figure>"


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:.1%}"


def verdict_list(verdicts: list[Verdict]) -> str:
    """Each verdict, its label in bold and its reason beside it."""
    items = "".join(
        f'<li class="{v.status}"><b>{html.escape(v.label)}</b>: {html.escape(v.reason)}</li>'
        for v in verdicts
    )
    return f'<ul class="verdicts">{items}</ul>'


def _stat(stats: PolicyStats | None, field: str) -> str:
    value = getattr(stats, field) if stats is not None else None
    if value is None:
        return ""
    if field == "pass_rate":
        return f"{value:.0%}"
    return f"{value:.3f}" if field == "mean_partial" else str(value)


def _task_flags(t: TaskQuality) -> str:
    if not t.flags:
        return "kept"
    return "<br>".join(f"<b>{html.escape(f)}</b>: {html.escape(t.reasons.get(f, ''))}" for f in t.flags)


def task_table(d: DomainQuality, policies: list[str]) -> str:
    """Every task of a domain with the fields `--json` gives, a row per policy: rollouts, scored,
    infra, pass rate and mean partial credit; the trained policy's spread; flags with their reasons."""
    mine = [p for p in policies if p in d.policies]
    train = html.escape(d.train or "-")
    head = "".join(f"<th>{name}</th>" for _, name in STAT_COLUMNS)
    groups = []
    for t in d.tasks:
        cls = ' class="bad"' if t.flags else ""
        n = len(mine)
        spread = "" if t.spread is None else f"{t.spread:.3f}"
        rows = []
        for i, p in enumerate(mine):
            cells = "".join(f"<td>{_stat(t.policies.get(p), f)}</td>" for f, _ in STAT_COLUMNS)
            first = (
                f'<td class="name" rowspan="{n}">{html.escape(t.task)}</td>'
                f'<td class="why" rowspan="{n}">{_task_flags(t)}</td>'
                if i == 0
                else ""
            )
            last = f'<td rowspan="{n}">{spread}</td>' if i == 0 else ""
            rows.append(f'<tr>{first}<td class="name">{html.escape(p)}</td>{cells}{last}</tr>')
        groups.append(f"<tbody{cls}>{''.join(rows)}</tbody>")
    return (
        '<table class="tasks"><thead><tr><th class="l">task</th><th class="l">flags</th><th class="l">policy</th>'
        f"{head}<th>spread ({train})</th></tr></thead>{''.join(groups)}</table>"
    )


def _domain_section(d: DomainQuality, policies: list[str]) -> str:
    return (
        f"<section><h2>{html.escape(d.domain)}</h2>{spread_histogram(d)}"
        f"<h3>Tasks ({len(d.tasks)}, {len(d.kept_tasks)} kept)</h3>"
        f"{task_table(d, policies)}</section>"
    )


STYLE = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td{white-space:nowrap}th{background:#f4f4f4}th.l{text-align:left}
td.name,td.why{text-align:left;white-space:normal}td.name{overflow-wrap:anywhere;min-width:8em;max-width:20em}
td.why{min-width:20em;max-width:60em}tbody.bad{background:#fde2e2}tbody{border-top:2px solid #aaa}
table.tasks{font-size:13px}table.tasks td,table.tasks th{padding:3px 6px}table.tasks td.why{max-width:32em}
section{margin:2em 0}h2{overflow-wrap:anywhere}
figure{margin:0.5em 0}figcaption{font-size:12px;max-width:260px;overflow-wrap:anywhere}
.key{margin-right:1.2em;font-size:13px;overflow-wrap:anywhere}
.key i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
.charts svg{margin:0 2em 1em 0;vertical-align:top}
ul.verdicts{margin:0;padding-left:1.2em}ul.verdicts li{margin:2px 0}
li.ok::marker{content:"✓ ";color:#3a9d5d}li.flag::marker{content:"✗ ";color:#b8443f}
li.warning::marker{content:"! ";color:#c27c0e}li.flag b{color:#b8443f}li.warning b{color:#a5670a}"""


def tier_table(report: QualityReport, policies: list[str]) -> str:
    """Pass rate per task tier and policy (with the scored rollouts), or nothing when no result
    line named a tier."""
    if not report.tiers:
        return ""
    head = "".join(f"<th>pass {html.escape(p)}</th>" for p in policies)
    body = "".join(
        f'<tr><td class="name">{html.escape(tier)}</td>'
        + "".join(
            "<td></td>"
            if p not in stats or stats[p].pass_rate is None
            else f"<td>{_pct(stats[p].pass_rate)} ({stats[p].scored})</td>"
            for p in policies
        )
        + "</tr>"
        for tier, stats in report.tiers.items()
    )
    return (
        "<h2>Pass rate by task tier</h2><p>Tiers come from each task's structure (0: one call … 4: eleven or more).</p>"
        f'<table class="tiers"><thead><tr><th class="l">tier</th>{head}</tr></thead><tbody>{body}</tbody></table>'
    )


def render_html(report: QualityReport) -> str:
    policies = sorted({p for d in report.domains for p in d.policies})
    rows = []
    for d in report.domains:
        cls = ' class="bad"' if d.flags else ""
        h = d.health
        cells = [
            str(len(d.tasks)),
            str(len(d.kept_tasks)),
            *(_pct(d.policies[p].pass_rate) if p in d.policies else "" for p in policies),
            _pct(d.trainable_share),
            "" if d.tau is None else f"{d.tau:.2f}",
            _pct(h.infra_failure_rate),
            _pct(h.injected_failure_rate),
            _pct(h.real_failure_rate),
            _pct(h.timeout_rate),
        ]
        rows.append(
            f'<tbody{cls}><tr><td class="name" rowspan="2">{html.escape(d.domain)}</td>'
            + "".join(f"<td>{c}</td>" for c in cells)
            + f'</tr><tr><td class="why" colspan="{len(cells)}">{verdict_list(d.verdicts)}</td></tr></tbody>'
        )
    head = "".join(f"<th>pass {html.escape(p)}</th>" for p in policies)
    sections = "".join(_domain_section(d, policies) for d in report.domains)
    flagged = ", ".join(html.escape(f) for f in report.flagged) or "none"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>toolgym environment quality</title>
<style>{STYLE}</style></head>
<body><h1>toolgym environment quality</h1>
<p>Results: <code>{html.escape(report.results)}</code>. Expected order of the baselines:
gold &gt; gold-corrupt &gt; random &ge; noop (Kendall tau on mean partial credit; flagged below {report.min_tau:.2f}).
A domain is flagged broken or trivial when over {report.tolerance:.0%} of its tasks are. Flagged: <b>{flagged}</b>.
✓ passed, ✗ flagged (no manifest), ! worth a look (not flagged).</p>
<p>{legend(policies)}</p>
<div class="charts">{grouped_bars(report.domains, policies, "pass_rate", "pass rate per policy")}
{grouped_bars(report.domains, policies, "mean_partial", "mean partial credit per policy")}</div>
<table class="domains"><thead><tr><th class="l">domain</th><th>tasks</th><th>kept</th>{head}<th>trainable</th><th>tau</th>
<th>infra-failed</th><th>injected</th><th>real</th><th>timeouts</th></tr></thead>
{"".join(rows)}</table>
{tier_table(report, policies)}
{sections}
</body></html>
"""
