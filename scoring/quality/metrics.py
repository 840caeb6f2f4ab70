"""Environment quality from the rollouts of several policies (`toolgym quality`).

Per domain and per task: difficulty, trainability, discriminative power and health. Tasks and
domains are flagged broken, trivial, non-discriminating or unmeasured, each with its reason.
`manifests()` gives a validated-manifest file of the kept tasks of every unflagged domain.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Any

from pydantic import BaseModel, Field

from ..validation.manifest import Manifest
from .verdicts import Verdict, count_verdict, order_verdict, task_reasons, train_verdict

#: the baselines' expected order (higher is stronger); other policies are left out of tau
EXPECTED_RANK = {"gold": 3, "gold-corrupt": 2, "random": 1, "read-only": 1, "noop": 0}
WEAK = ("noop", "random", "read-only")
#: the policy of results lines that name none (`toolgym score --runs` writes such lines)
UNNAMED = "(unnamed)"


def family(policy: str) -> str:
    """`gold-corrupt:2` -> `gold-corrupt`; `openai:m@u` -> `openai`."""
    return policy.partition(":")[0]


def kendall_tau(xs: list[float], ys: list[float]) -> float | None:
    """Kendall's tau-b of two paired lists (ties handled); None when either has no spread."""
    concordant = discordant = ties_x = ties_y = 0
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            dx, dy = xs[i] - xs[j], ys[i] - ys[j]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                ties_x += 1
            elif dy == 0:
                ties_y += 1
            elif (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    n = concordant + discordant
    denominator = math.sqrt((n + ties_x) * (n + ties_y))
    return round((concordant - discordant) / denominator, 4) if denominator else None


class PolicyStats(BaseModel):
    rollouts: int = 0
    scored: int = 0
    infra: int = 0
    pass_rate: float | None = None
    mean_partial: float | None = None


class TaskQuality(BaseModel):
    task: str
    policies: dict[str, PolicyStats]
    spread: float | None = Field(
        default=None, description="mean std of rewards within the train policy's groups"
    )
    flags: list[str] = Field(default_factory=list)
    reasons: dict[str, str] = Field(default_factory=dict, description="why the task has each flag")


class Health(BaseModel):
    rollouts: int = 0
    infra_failure_rate: float = 0.0
    timeout_rate: float = 0.0
    injected_failure_rate: float = Field(
        default=0.0, description="rollouts infra-failed by injected faults / rollouts"
    )
    real_failure_rate: float = Field(
        default=0.0, description="rollouts infra-failed by anything else / rollouts"
    )
    injected_call_rate: float = Field(default=0.0, description="calls that hit an injected fault / calls")
    real_call_fault_rate: float = Field(default=0.0, description="calls that hit a real fault / calls")


class DomainQuality(BaseModel):
    domain: str
    fingerprint: str
    tasks: list[TaskQuality]
    policies: dict[str, PolicyStats]
    train: str | None
    trainable_share: float | None = Field(description="tasks with a pass rate strictly in (0, 1) for `train`")
    mean_spread: float | None
    ranking: list[str] = Field(description="baselines by observed mean partial credit, strongest first")
    order: str = Field(
        default="", description="the ranking with its relations, e.g. gold > gold-corrupt:1 > noop = random"
    )
    tau: float | None = Field(description="Kendall tau-b of expected vs observed baseline order")
    health: Health
    flags: list[str]
    verdicts: list[Verdict] = Field(
        default_factory=list,
        description="each check of the domain with its reason; flags are those of status flag",
    )
    kept_tasks: list[str]


class QualityReport(BaseModel):
    results: str
    tolerance: float
    min_tau: float
    domains: list[DomainQuality]
    flagged: list[str]
    tiers: dict[str, dict[str, PolicyStats]] = Field(
        default_factory=dict,
        description="pass rate per task tier (`tier-0` … `tier-4`, from the results lines) and policy",
    )


def _partial(row: dict[str, Any]) -> float:
    """A line's partial credit (its reward when it has none: `toolgym curate`'s inputs may not)."""
    value = row.get("partial")
    return float(value if isinstance(value, int | float) else row["reward"])


def _stats(rows: list[dict[str, Any]]) -> PolicyStats:
    scored = [
        r for r in rows if r.get("status", "scored") == "scored" and isinstance(r.get("reward"), int | float)
    ]
    return PolicyStats(
        rollouts=len(rows),
        scored=len(scored),
        infra=sum(bool(r.get("infra")) for r in rows),
        pass_rate=round(sum(r["reward"] == 1.0 for r in scored) / len(scored), 4) if scored else None,
        mean_partial=round(statistics.fmean(_partial(r) for r in scored), 4) if scored else None,
    )


def _health(rows: list[dict[str, Any]]) -> Health:
    n = len(rows) or 1
    calls = sum(int(r.get("calls") or 0) for r in rows) or 1
    infra = [r for r in rows if r.get("infra")]
    injected = [r for r in infra if r.get("infra_cause") == "injected"]
    return Health(
        rollouts=len(rows),
        infra_failure_rate=round(len(infra) / n, 4),
        timeout_rate=round(sum(r.get("infra_cause") == "timeout" for r in infra) / n, 4),
        injected_failure_rate=round(len(injected) / n, 4),
        real_failure_rate=round((len(infra) - len(injected)) / n, 4),
        injected_call_rate=round(sum(int(r.get("injected") or 0) for r in rows) / calls, 4),
        real_call_fault_rate=round(sum(int(r.get("real_faults") or 0) for r in rows) / calls, 4),
    )


def _spread(rows: list[dict[str, Any]]) -> float | None:
    rewards = [float(r["reward"]) for r in rows if isinstance(r.get("reward"), int | float)]
    return round(statistics.pstdev(rewards), 4) if len(rewards) > 1 else None


def _order(policies: dict[str, PolicyStats]) -> tuple[list[str], float | None, bool]:
    """(baselines strongest first, tau, whether gold > gold-corrupt > random >= noop holds strictly)."""
    known = {
        p: s.mean_partial
        for p, s in policies.items()
        if family(p) in EXPECTED_RANK and s.mean_partial is not None
    }
    ranking = sorted(known, key=lambda p: (-(known[p] or 0.0), p))
    tau = kendall_tau([EXPECTED_RANK[family(p)] for p in known], [known[p] or 0.0 for p in known])

    def mean(name: str) -> float | None:
        got = [v for p, v in known.items() if family(p) == name and v is not None]
        return statistics.fmean(got) if got else None

    chain = [mean("gold"), mean("gold-corrupt"), mean("random")]
    present = [v for v in chain if v is not None]
    strict = all(a > b for a, b in zip(present, present[1:], strict=False))
    noop, rnd = mean("noop"), mean("random")
    ok = strict and (noop is None or rnd is None or rnd >= noop)
    return ranking, tau, ok


def _relations(ranking: list[str], policies: dict[str, PolicyStats]) -> str:
    if not ranking:
        return ""
    text = ranking[0]
    for before, after in zip(ranking, ranking[1:], strict=False):
        same = policies[before].mean_partial == policies[after].mean_partial
        text += f" {'=' if same else '>'} {after}"
    return text


def domain_quality(
    rows: list[dict[str, Any]], train: str | None, tolerance: float, min_tau: float
) -> DomainQuality:
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_task[str(r["task"])].append(r)
    policies = sorted({str(r["policy"]) for r in rows})
    if train is None or train not in policies:
        train = next((p for p in policies if family(p) not in EXPECTED_RANK), None) or (
            "random" if "random" in policies else None
        )
    tasks = []
    for task, mine in sorted(by_task.items()):
        stats = {p: _stats([r for r in mine if r["policy"] == p]) for p in policies}
        flags = []
        gold = stats.get("gold")
        if gold is not None and gold.pass_rate is not None and gold.pass_rate < 1.0:
            flags.append("broken")
        if any(s.pass_rate for p, s in stats.items() if family(p) in WEAK):
            flags.append("trivial")
        spread = _spread([r for r in mine if r["policy"] == train]) if train else None
        reasons = task_reasons(stats, flags, WEAK)
        tasks.append(TaskQuality(task=task, policies=stats, spread=spread, flags=flags, reasons=reasons))
    overall = {p: _stats([r for r in rows if r["policy"] == p]) for p in policies}
    ranking, tau, ordered = _order(overall)
    rates = [rate for t in tasks if train and (rate := t.policies[train].pass_rate) is not None]
    spreads = [t.spread for t in tasks if t.spread is not None]
    flags = [
        name
        for name in ("broken", "trivial")
        if tasks and sum(name in t.flags for t in tasks) / len(tasks) > tolerance
    ]
    families = {family(p) for p in policies} & set(EXPECTED_RANK)
    if "gold" not in families or len(families) < 2:
        flags.append("unmeasured")  # no gold, or nothing to rank it against: nothing to judge by
    elif tau is None or tau < min_tau or not ordered:
        flags.append("non-discriminating")
    mean_spread = round(statistics.fmean(spreads), 4) if spreads else None
    weak = [p for p in policies if family(p) in WEAK]
    samples = max((t.policies[train].scored for t in tasks), default=0) if train else 0
    verdicts = [
        count_verdict("broken", tasks, "broken" in flags, "gold" in policies, tolerance, "gold"),
        count_verdict("trivial", tasks, "trivial" in flags, bool(weak), tolerance, " or ".join(weak)),
        order_verdict(
            next((f for f in flags if f in ("unmeasured", "non-discriminating")), None),
            _relations(ranking, overall),
            tau,
            ordered,
            min_tau,
            families,
        ),
        train_verdict(train, rates, samples, mean_spread),
    ]
    return DomainQuality(
        domain=str(rows[0]["domain"]),
        fingerprint=str(rows[0].get("fingerprint") or ""),
        tasks=tasks,
        policies=overall,
        train=train,
        trainable_share=round(sum(0 < r < 1 for r in rates) / len(rates), 4) if rates else None,
        mean_spread=mean_spread,
        ranking=ranking,
        order=_relations(ranking, overall),
        tau=tau,
        health=_health(rows),
        flags=flags,
        verdicts=verdicts,
        kept_tasks=[t.task for t in tasks if not t.flags],
    )


def quality(
    rows: list[dict[str, Any]],
    results: str = "",
    train: str | None = None,
    tolerance: float = 0.1,
    min_tau: float = 0.6,
) -> QualityReport:
    """The quality report of results lines (see the module doc)."""
    by_domain: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r.get("status") in ("error", "incomplete") or not r.get("domain") or r.get("task") is None:
            continue
        r = {**r, "policy": str(r.get("policy") or UNNAMED)}  # `toolgym score` lines name none
        by_domain[(str(r["domain"]), str(r.get("fingerprint") or ""))].append(r)
    domains = [domain_quality(mine, train, tolerance, min_tau) for _, mine in sorted(by_domain.items())]
    by_tier: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for mine in by_domain.values():
        for r in mine:
            if r.get("tier"):
                by_tier[str(r["tier"])][r["policy"]].append(r)
    return QualityReport(
        tiers={
            tier: {p: _stats(rs) for p, rs in sorted(policies.items())}
            for tier, policies in sorted(by_tier.items())
        },
        results=results,
        tolerance=tolerance,
        min_tau=min_tau,
        domains=domains,
        flagged=[d.domain for d in domains if d.flags],
    )


def manifests(report: QualityReport) -> list[Manifest]:
    """A validated manifest of the kept tasks of every domain the report does not flag."""
    return [
        Manifest(domain=d.domain, fingerprint=d.fingerprint, valid_tasks=d.kept_tasks)
        for d in report.domains
        if not d.flags and d.kept_tasks
    ]
