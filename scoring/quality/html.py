"""The quality report as one self-contained HTML page: inline SVG charts, tables, no scripts.

The style is `toolgym report --html`'s (scoring.curation.health): a system font, bordered tables,
flagged rows tinted. Charts: pass rate and mean partial credit per policy per domain (grouped
bars, one colour per policy), and per domain the spread of the trained policy's rewards within
each task's group of samples (a histogram of standard deviations).
"""

from __future__ import annotations

import html

from .metrics import DomainQuality, QualityReport

COLOURS = ("#2f6fbd", "#e07b39", "#3a9d5d", "#b8443f", "#7d5bb5", "#8c6d31", "#c1609f", "#5b8f9e")
BINS = 10


def _colours(policies: list[str]) -> dict[str, str]:
    return {p: COLOURS[i % len(COLOURS)] for i, p in enumerate(policies)}


def grouped_bars(domains: list[DomainQuality], policies: list[str], metric: str, title: str) -> str:
    """Bars of `metric` (pass_rate or mean_partial) in [0, 1]: a group per domain, a bar per policy."""
    colours = _colours(policies)
    bar, gap, left, top, height = 16, 18, 44, 28, 180
    group = bar * len(policies) + gap
    width = max(340, left + group * max(1, len(domains)) + 10)
    parts = [
        f'<svg width="{width}" height="{top + height + 70}" role="img" aria-label="{html.escape(title)}">',
        f'<text x="{left}" y="16" font-size="13" font-weight="600">{html.escape(title)}</text>',
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + height * (1 - tick)
        parts.append(f'<line x1="{left - 4}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e3e3e3"/>')
        parts.append(
            f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{tick:.2f}</text>'
        )
    for g, d in enumerate(domains):
        x0 = left + g * group
        for i, p in enumerate(policies):
            stats = d.policies.get(p)
            value = getattr(stats, metric) if stats is not None else None
            if value is None:
                continue
            h = max(1.0, height * value)
            x = x0 + i * bar
            parts.append(
                f'<rect x="{x}" y="{top + height - h:.1f}" width="{bar - 2}" height="{h:.1f}" fill="{colours[p]}">'
                f"<title>{html.escape(d.domain)} · {html.escape(p)}: {value:.3f}</title></rect>"
            )
        label = html.escape(d.domain.split("@")[0])
        cx = x0 + (group - gap) / 2
        parts.append(
            f'<text x="{cx:.1f}" y="{top + height + 14}" font-size="11" text-anchor="end" '
            f'transform="rotate(-30 {cx:.1f} {top + height + 14})">{label}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


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
    parts = [f'<svg width="{width}" height="{height + 34}" role="img" aria-label="reward spread">']
    for i, c in enumerate(counts):
        h = (height - pad) * c / most
        parts.append(
            f'<rect x="{pad + i * step:.1f}" y="{height - h:.1f}" width="{step - 2:.1f}" height="{h:.1f}" fill="#4a7bd0">'
            f"<title>std {i * 0.05:.2f}-{(i + 1) * 0.05:.2f}: {c} tasks</title></rect>"
        )
        if c:
            parts.append(
                f'<text x="{pad + i * step + 2:.1f}" y="{height - h - 3:.1f}" font-size="10">{c}</text>'
            )
    parts.append(
        f'<text x="{pad}" y="{height + 13}" font-size="10">0</text>'
        f'<text x="{width - pad - 14}" y="{height + 13}" font-size="10">0.5</text>'
        f'<text x="{pad}" y="{height + 28}" font-size="11">reward std within groups ({html.escape(d.train or "-")})</text></svg>'
    )
    return "".join(parts)


def _pct(value: float | None) -> str:
    return "" if value is None else f"{value:.1%}"


def render_html(report: QualityReport) -> str:
    policies = sorted({p for d in report.domains for p in d.policies})
    rows = []
    for d in report.domains:
        cls = ' class="bad"' if d.flags else ""
        h = d.health
        rows.append(
            f"<tr{cls}><td>{html.escape(d.domain)}</td><td>{len(d.tasks)}</td><td>{len(d.kept_tasks)}</td>"
            + "".join(
                f"<td>{_pct(d.policies[p].pass_rate) if p in d.policies else ''}</td>" for p in policies
            )
            + f"<td>{_pct(d.trainable_share)}</td><td>{'' if d.tau is None else f'{d.tau:.2f}'}</td>"
            f"<td>{_pct(h.infra_failure_rate)}</td><td>{_pct(h.injected_failure_rate)}</td><td>{_pct(h.real_failure_rate)}</td>"
            f"<td>{_pct(h.timeout_rate)}</td><td>{html.escape(', '.join(d.flags) or 'ok')}</td></tr>"
        )
    head = "".join(f"<th>pass {html.escape(p)}</th>" for p in policies)
    spreads = "".join(
        f"<section><h3>{html.escape(d.domain)}</h3>{spread_histogram(d)}</section>" for d in report.domains
    )
    flagged = ", ".join(html.escape(f) for f in report.flagged) or "none"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>toolgym environment quality</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em;color:#222}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}td:first-child{{text-align:left}}
tr.bad{{background:#fde2e2}}section{{display:inline-block;margin:1em 2em 0 0;vertical-align:top}}
.key{{margin-right:1.2em;font-size:13px}}.key i{{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}}
.charts svg{{margin-right:2em}}</style></head>
<body><h1>toolgym environment quality</h1>
<p>Results: <code>{html.escape(report.results)}</code>. Expected order of the baselines:
gold &gt; gold-corrupt &gt; random &ge; noop (Kendall tau on mean partial credit; flagged below {report.min_tau:.2f}).
A domain is flagged broken or trivial when over {report.tolerance:.0%} of its tasks are. Flagged: <b>{flagged}</b>.</p>
<p>{legend(policies)}</p>
<div class="charts">{grouped_bars(report.domains, policies, "pass_rate", "pass rate per policy")}
{grouped_bars(report.domains, policies, "mean_partial", "mean partial credit per policy")}</div>
<table><tr><th>domain</th><th>tasks</th><th>kept</th>{head}<th>trainable</th><th>tau</th>
<th>infra-failed</th><th>injected</th><th>real</th><th>timeouts</th><th>flags</th></tr>
{"".join(rows)}</table>
<h2>Reward spread within groups</h2>{spreads}
</body></html>
"""
