"""Why each quality flag is raised or not: every verdict on a task or a domain, in words.

A domain gets four verdicts (broken, trivial, discrimination, trainability), each `ok`, `flag`
(the domain is flagged and left out of the manifests) or `warning` (shown, not flagged); a task's
flags each get a reason. These functions only describe what `metrics` measured: they never decide
a flag themselves (`metrics` does, and a test checks the two agree).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from .metrics import PolicyStats, TaskQuality

#: how many task ids a reason names before "and N more"
NAMED = 5


class Verdict(BaseModel):
    """One check of a domain and why it came out as it did."""

    check: Literal["broken", "trivial", "discrimination", "trainability"]
    status: Literal["ok", "flag", "warning"] = Field(
        description="flag: the domain is flagged (no manifest); warning: worth a look, not flagged"
    )
    label: str = Field(description="the verdict in a few words, e.g. `not trainable`; a flag's name")
    reason: str = Field(description="why, in words, with the numbers it rests on")


def _names(tasks: list[str]) -> str:
    more = len(tasks) - NAMED
    return ", ".join(tasks[:NAMED]) + (f" and {more} more" if more > 0 else "")


def _share(n: int, total: int, tolerance: float) -> str:
    share = n / total if total else 0.0
    where = "over" if share > tolerance else "within"
    return f"{n} of {total} tasks ({share:.0%}, {where} the {tolerance:.0%} tolerance)"


def task_reasons(stats: dict[str, PolicyStats], flags: list[str], weak: tuple[str, ...]) -> dict[str, str]:
    """Why a task has each of its flags (`broken`: gold does not always pass; `trivial`: a weak
    baseline passes)."""
    reasons = {}
    if "broken" in flags:
        gold = stats["gold"]
        reasons["broken"] = (
            f"gold passes {gold.pass_rate or 0.0:.0%} of its {gold.scored} scored rollout(s), not all"
        )
    if "trivial" in flags:
        passing = [
            f"{p} passes {s.pass_rate:.0%} of {s.scored}"
            for p, s in sorted(stats.items())
            if p.partition(":")[0] in weak and s.pass_rate
        ]
        reasons["trivial"] = f"a weak baseline solves it: {', '.join(passing)}"
    return reasons


def count_verdict(
    check: Literal["broken", "trivial"],
    tasks: list[TaskQuality],
    flagged: bool,
    measured: bool,
    tolerance: float,
    who: str,
) -> Verdict:
    """Broken (gold fails tasks) or trivial (a weak baseline passes tasks), with the tasks named."""
    if not measured:
        missing = "no gold rollouts" if check == "broken" else "no noop, random or read-only rollouts"
        return Verdict(
            check=check, status="warning", label=f"{check}: not checked", reason=f"{missing} to tell by"
        )
    hit = [t.task for t in tasks if check in t.flags]
    verb = "fails" if check == "broken" else "passes"
    if flagged:
        return Verdict(
            check=check,
            status="flag",
            label=check,
            reason=f"{who} {verb} {_share(len(hit), len(tasks), tolerance)}: {_names(hit)}",
        )
    if not hit:
        reason = (
            f"gold passes every one of the {len(tasks)} tasks"
            if check == "broken"
            else f"no weak baseline ({who}) passes any of the {len(tasks)} tasks"
        )
        return Verdict(check=check, status="ok", label=f"not {check}", reason=reason)
    return Verdict(
        check=check,
        status="ok",
        label=f"not {check}",
        reason=f"{who} {verb} only {_share(len(hit), len(tasks), tolerance)}: {_names(hit)}; "
        "those tasks are left out of the manifest",
    )


def order_verdict(
    flag: str | None, order: str, tau: float | None, ordered: bool, min_tau: float, families: set[str]
) -> Verdict:
    """Whether the baselines' mean partial credits come out as gold > gold-corrupt > random >= noop."""
    expected = "gold > gold-corrupt > random ≥ noop"
    if flag == "unmeasured":
        why = (
            "no gold rollouts: nothing to rank the baselines against"
            if "gold" not in families
            else "only gold was run: no other baseline to rank it against"
        )
        return Verdict(check="discrimination", status="flag", label="unmeasured", reason=why)
    if flag is None:
        return Verdict(
            check="discrimination",
            status="ok",
            label="discriminating",
            reason=f"the baselines rank as expected ({expected}): {order}, Kendall tau {tau:.2f} ≥ {min_tau:.2f}",
        )
    if tau is None:
        why = f"the baselines' mean partial credits do not differ ({order}), so they rank nothing (tau undefined)"
    elif tau < min_tau:
        why = f"the observed order {order} agrees with {expected} only at Kendall tau {tau:.2f}, below {min_tau:.2f}"
    else:
        why = f"the observed order {order} is not strictly {expected} (tau {tau:.2f})"
    if not ordered and tau is not None and tau < min_tau:
        why += ", and the order is not strict"
    return Verdict(check="discrimination", status="flag", label="non-discriminating", reason=why)


def train_verdict(
    train: str | None,
    rates: list[float],
    samples: int,
    mean_spread: float | None,
) -> Verdict:
    """Whether the trained policy solves some tasks sometimes but not always (an advantage signal).

    `rates` are its pass rates per task, `samples` the most scored samples any task has.
    """
    if train is None or not rates:
        return Verdict(
            check="trainability",
            status="warning",
            label="trainability: not measured",
            reason="no rollouts of a policy to train (pass --train, or run a model or random policy)",
        )
    mixed = sum(0 < r < 1 for r in rates)
    always, never = sum(r == 1 for r in rates), sum(r == 0 for r in rates)
    spread = "" if mean_spread is None else f"; mean reward spread within groups {mean_spread:.2f}"
    counts = f"{always} always solved, {never} never solved{spread}"
    if mixed:
        return Verdict(
            check="trainability",
            status="ok",
            label="trainable",
            reason=f"{mixed} of {len(rates)} tasks are solved sometimes (but not always) by {train}: "
            f"{mixed / len(rates):.0%} of tasks have mixed outcomes ({counts})",
        )
    hint = (
        f"; with {samples} sample per task outcomes cannot be mixed (run --k 2 or more)"
        if samples < 2
        else ""
    )
    return Verdict(
        check="trainability",
        status="warning",
        label="not trainable",
        reason=f"no task is solved sometimes (but not always) by {train}: 0% of {len(rates)} tasks have "
        f"mixed outcomes ({counts}), so its groups of samples give no advantage signal{hint}",
    )
