"""Scoring a rollout: replay it, replay the gold calls, diff the states, check the answer facts.

- reward: 1.0 only when the state matches exactly and every answer fact is in the final
  message; else 0.0. null for a rollout with an infrastructure fault (status `failed-infra`):
  such a rollout is never scored 0.
- partial: (expected row changes made, partial rows by share, + answer facts found - collateral
  row changes) / (expected row changes + answer facts), clipped to [0, 1]. With nothing expected,
  1.0 when nothing collateral happened, else 0.0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simulator import Domain, Episode, TaskError, load_domain
from simulator.errors import TranscriptError
from simulator.spec import Task

from .diff import diff_states
from .explain import explain
from .facts import find_facts
from .replay import expected_episode, replay
from .report import FactResult, ScoreReport
from .rollout import Format, Rollout
from .transcripts import load_transcript


def resolve_task(domain: Domain, rollout: Rollout, task: Task | str | None) -> Task:
    if isinstance(task, Task):
        return task
    name = task or rollout.task
    if name is None:
        raise TaskError(f"{rollout.source or 'the transcript'} names no task: pass one (--task)")
    return domain.task(name)


def resolve_seed(rollout: Rollout, task: Task, seed: int | None = None) -> int:
    """The seed to replay with: the given one, else the transcript's, else the task's."""
    if seed is not None:
        return seed
    return rollout.seed if rollout.seed is not None else task.seed


def _warnings(domain: Domain, rollout: Rollout) -> list[str]:
    if rollout.domain is not None and rollout.domain != domain.name:
        raise TranscriptError(
            f"{rollout.source or 'the transcript'} is for domain {rollout.domain!r}, not {domain.name!r}"
        )
    rollout.check_tools(domain.tools, domain.ref)
    if rollout.version is not None and rollout.version != domain.version:
        return [f"the transcript was recorded on {rollout.domain}@{rollout.version}; scoring on {domain.ref}"]
    return []


def score_rollout(
    domain: Domain,
    rollout: Rollout,
    task: Task | str | None = None,
    seed: int | None = None,
    expected: Episode | None = None,
) -> ScoreReport:
    """Score a rollout on a task (default: the one its transcript names).

    The seed defaults to the transcript's, then the task's. `expected` may pass a gold episode
    already replayed with that seed (batch scoring caches them). Raises TaskError for an unknown
    or broken task and TranscriptError for a transcript that does not fit the domain.
    """
    gold = resolve_task(domain, rollout, task)
    warnings = _warnings(domain, rollout)
    seed = resolve_seed(rollout, gold, seed)
    base: dict[str, Any] = {
        "domain": domain.ref,
        "fingerprint": domain.fingerprint(),
        "task": gold.id,
        "seed": seed,
        "transcript": rollout.source,
        "format": rollout.format,
        "calls": len(rollout.calls),
        "warnings": warnings,
    }
    infra = rollout.infra_calls()
    if infra:
        said = [
            f"Not scored: call {i} ({c.name}) failed with {'an injected' if c.outcome == 'injected' else 'an infrastructure'} "
            f"fault{': ' + c.error if c.error else ''}."
            for i, c in infra
        ]
        said.append(
            "A rollout with an infrastructure fault is kept out of rewards (status failed-infra), never scored 0."
        )
        return ScoreReport(status="failed-infra", reward=None, partial=None, explanation=said, **base)

    gold_episode = expected if expected is not None else expected_episode(domain, gold, seed)
    actual, done = replay(domain, ((c.name, c.arguments) for c in rollout.calls), seed)
    try:
        diff = diff_states(gold_episode, actual, gold.ignore_columns)
        if rollout.digest is not None and rollout.digest != actual.digest():
            warnings.append(
                "the replayed final state differs from the one the transcript recorded (its digest)"
            )
    finally:
        actual.close()
        if expected is None:
            gold_episode.close()
    for i, (call, result) in enumerate(zip(rollout.calls, done, strict=True)):
        if call.outcome == "ok" and not result.ok:
            warnings.append(
                f"call {i} ({call.name}) succeeded in the transcript but failed on replay: {result.error}"
            )
        elif call.outcome == "tool-error" and result.ok:
            warnings.append(f"call {i} ({call.name}) failed in the transcript but succeeded on replay")
    found = find_facts(rollout.final_message, gold.answer_facts)
    facts = [FactResult(fact=f, found=ok) for f, ok in zip(gold.answer_facts, found, strict=True)]
    reward = 1.0 if diff.empty and all(found) else 0.0
    units = diff.expected_changes + len(facts)
    made = diff.credit + sum(found) - len(diff.unexpected)
    partial = min(1.0, max(0.0, made / units)) if units else float(not diff.unexpected)
    failed = sum(not r.ok for r in done)
    return ScoreReport(
        status="scored",
        reward=reward,
        partial=round(partial, 6),
        diff=diff,
        facts=facts,
        failed_calls=failed,
        explanation=explain(reward, partial, diff, facts, rollout.final_message is not None, failed),
        **base,
    )


def score_transcript(
    path: str | Path,
    domain: Domain | str | Path | None = None,
    task: Task | str | None = None,
    seed: int | None = None,
    format: Format | None = None,
) -> ScoreReport:
    """Load a transcript (any format) and score it; the domain defaults to the one it names."""
    rollout = load_transcript(path, format=format)
    if domain is None:
        if rollout.domain is None:
            raise TranscriptError(f"{path} names no domain: pass one (--domain)")
        domain = rollout.domain
    loaded = domain if isinstance(domain, Domain) else load_domain(domain)
    return score_rollout(loaded, rollout, task=task, seed=seed)
