"""Curation: pass rates over k samples, a difficulty filter, and a seeded training mixture.

Input: rollout results, one JSON object a line, each with `domain`, `task`, and either a `reward`
or `status: failed-infra` (the lines `toolgym score --runs` writes). Infrastructure failures count
toward the domain's error rate, never toward a task's pass rate. Tasks that are always solved
(pass rate above `max_pass`) or never solved (below `min_pass`) teach nothing and are dropped;
the rest are bucketed by difficulty and sampled, per domain, into a mixture with target weights.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..errors import TranscriptError

BUCKETS = (("hard", 0.0, 1 / 3), ("medium", 1 / 3, 2 / 3), ("easy", 2 / 3, 1.01))


class TaskStats(BaseModel):
    domain: str
    task: str
    samples: int = Field(description="scored rollouts (infrastructure failures excluded)")
    passes: int
    infra_failures: int
    pass_rate: float | None
    bucket: str | None = None
    kept: bool = False
    reason: str = ""
    tier: str | None = Field(default=None, description="the task's tier tag, from its results lines")


class DomainStats(BaseModel):
    domain: str
    rollouts: int
    infra_failures: int
    error_rate: float = Field(description="infrastructure failures / rollouts")
    tasks: int
    kept: int


class MixtureEntry(BaseModel):
    domain: str
    task: str
    bucket: str
    pass_rate: float
    tier: str | None = None


class CurationManifest(BaseModel):
    """The curated mixture: which tasks, from which domains, in what proportions."""

    seed: int
    min_pass: float
    max_pass: float
    weights: dict[str, float]
    tier_weights: dict[str, float] = Field(
        default_factory=dict, description="weight per task tier (a tier not named weighs 1; 0 leaves it out)"
    )
    size: int
    mixture: list[MixtureEntry]
    domains: list[DomainStats]
    tasks: list[TaskStats]


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Result lines; a line that is not a JSON object with domain and task is an error naming it."""
    out = []
    for lineno, text in enumerate(Path(path).read_text(encoding="utf-8").split("\n"), start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TranscriptError(f"{path}: line {lineno}: not valid JSON ({exc.msg})") from None
        if isinstance(row, dict) and row.get("status") in ("error", "incomplete"):
            continue  # not a rollout's score: a transcript that could not be scored, or was cut short
        if not isinstance(row, dict) or not row.get("domain") or row.get("task") is None:
            raise TranscriptError(f"{path}: line {lineno}: a result needs `domain` and `task`")
        if row.get("status") != "failed-infra" and not isinstance(row.get("reward"), int | float):
            raise TranscriptError(
                f"{path}: line {lineno}: a result needs a numeric `reward` or `status: failed-infra`"
            )
        out.append(row)
    return out


def _bucket(rate: float) -> str:
    return next(name for name, lo, hi in BUCKETS if lo <= rate < hi)


def task_stats(results: list[dict[str, Any]], min_pass: float, max_pass: float) -> list[TaskStats]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in results:
        groups.setdefault((str(row["domain"]), str(row["task"])), []).append(row)
    stats = []
    for (domain, task), rows in sorted(groups.items()):
        infra = sum(1 for r in rows if r.get("status") == "failed-infra")
        scored = [r for r in rows if r.get("status") != "failed-infra"]
        passes = sum(1 for r in scored if r["reward"] >= 1.0)
        rate = passes / len(scored) if scored else None
        s = TaskStats(
            domain=domain,
            task=task,
            samples=len(scored),
            passes=passes,
            infra_failures=infra,
            pass_rate=rate,
            tier=next((str(r["tier"]) for r in rows if r.get("tier")), None),
        )
        if rate is None:
            s.reason = "no scored rollouts (only infrastructure failures)"
        elif rate > max_pass:
            s.reason = f"always solved (pass rate {rate:.2f} > {max_pass})"
        elif rate < min_pass:
            s.reason = f"never solved (pass rate {rate:.2f} < {min_pass})"
        else:
            s.kept, s.bucket = True, _bucket(rate)
        stats.append(s)
    return stats


def domain_stats(results: list[dict[str, Any]], tasks: list[TaskStats]) -> list[DomainStats]:
    out = []
    for domain in sorted({str(r["domain"]) for r in results}):
        rows = [r for r in results if str(r["domain"]) == domain]
        infra = sum(1 for r in rows if r.get("status") == "failed-infra")
        mine = [t for t in tasks if t.domain == domain]
        out.append(
            DomainStats(
                domain=domain,
                rollouts=len(rows),
                infra_failures=infra,
                error_rate=round(infra / len(rows), 4),
                tasks=len(mine),
                kept=sum(t.kept for t in mine),
            )
        )
    return out


def parse_mix(text: str | None) -> dict[str, float]:
    """`bank=2,office=1` -> {"bank": 2.0, "office": 1.0}."""
    if not text:
        return {}
    weights = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = -1.0
        if not sep or not name.strip() or weight < 0:
            raise ValueError(f"--mix entry {part!r} is not NAME=WEIGHT with a weight >= 0")
        weights[name.strip()] = weight
    return weights


def _tier_weight(task: TaskStats, tiers: dict[str, float]) -> float:
    return tiers.get(task.tier or "", 1.0) if tiers else 1.0


def _matches(domain: str, name: str) -> bool:
    return domain == name or domain.split("@", 1)[0] == name


def curate(
    results: list[dict[str, Any]],
    min_pass: float = 0.1,
    max_pass: float = 0.9,
    mix: dict[str, float] | None = None,
    seed: int = 0,
    size: int | None = None,
    tiers: dict[str, float] | None = None,
) -> CurationManifest:
    """Filter by pass rate and sample a seeded mixture across domains with target weights; within
    a domain, `tiers` weighs each task by its tier (weighted sampling without repeats)."""
    tasks = task_stats(results, min_pass, max_pass)
    tiers = tiers or {}
    kept: dict[str, list[TaskStats]] = {}
    for t in tasks:
        if t.kept and _tier_weight(t, tiers) <= 0:
            t.kept, t.reason = False, f"its tier ({t.tier}) has weight 0 in the tier mix"
        if t.kept:
            kept.setdefault(t.domain, []).append(t)
    weights = (
        {d: 1.0 for d in kept}
        if not mix
        else {d: next((w for n, w in mix.items() if _matches(d, n)), 0.0) for d in kept}
    )
    unknown = [n for n in (mix or {}) if not any(_matches(d, n) for d in kept)]
    if unknown:
        raise ValueError(
            f"--mix names domains with no kept tasks: {', '.join(unknown)} (domains with kept tasks: {', '.join(sorted(kept)) or 'none'})"
        )
    total = sum(weights.values())
    live = {d: w for d, w in weights.items() if w > 0}
    if size is None:  # the largest mixture every domain can fill without repeating a task
        size = int(min((len(kept[d]) * total / w for d, w in live.items()), default=0))
    rng = random.Random(seed)
    mixture: list[MixtureEntry] = []
    for domain in sorted(live):
        want = round(size * live[domain] / total) if total else 0
        pool = sorted(kept[domain], key=lambda t: t.task)
        rng.shuffle(pool)
        if tiers:  # weighted order without repeats: key u^(1/w), largest first (Efraimidis-Spirakis)
            keyed = [(rng.random() ** (1 / _tier_weight(t, tiers)), i) for i, t in enumerate(pool)]
            pool = [pool[i] for _, i in sorted(keyed, reverse=True)]
        picks = [pool[i % len(pool)] for i in range(want)]
        mixture += [
            MixtureEntry(
                domain=domain, task=t.task, bucket=t.bucket or "", pass_rate=t.pass_rate or 0.0, tier=t.tier
            )
            for t in picks
        ]
    rng.shuffle(mixture)
    return CurationManifest(
        seed=seed,
        min_pass=min_pass,
        max_pass=max_pass,
        weights=weights,
        tier_weights=tiers,
        size=len(mixture),
        mixture=mixture,
        domains=domain_stats(results, tasks),
        tasks=tasks,
    )
