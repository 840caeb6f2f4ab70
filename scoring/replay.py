"""Replay: run calls on a fresh episode; the expected episode is the task's gold calls replayed.

The agent's calls are replayed on a fresh episode with the transcript's seed, so the final state
is recomputed, never trusted from the transcript: calls that failed fail again and change
nothing. The expected state is the task's gold calls replayed (by `scoring.validation.gold`, the one
place that does it, resolving `$calls.N.path` references) on a fresh episode with the same seed.
A gold call that fails unexpectedly, or a call marked `expect_error` that succeeds, makes the
task broken: `TaskError`, never a silent skip.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from simulator import Domain, Episode
from simulator.errors import CallFailed, ErrorKind
from simulator.spec import Task

from .rollout import Rollout, RolloutCall
from .validation.gold import replay_gold


@dataclass(frozen=True)
class Replayed:
    """What one replayed call did (`skipped`: it was not run, and why)."""

    name: str
    ok: bool
    error: str | None = None
    result: Any = None
    kind: ErrorKind | None = None
    skipped: bool = False


def replay(
    domain: Domain,
    calls: Iterable[tuple[str, dict[str, Any]]],
    seed: int = 0,
    skip: Mapping[int, str] | None = None,
) -> tuple[Episode, list[Replayed]]:
    """Run (name, arguments) calls in order on a fresh episode; tool errors are recorded, not raised.

    Calls whose index is in `skip` are not run (a malformed call, a call a fault stopped): they
    count as failed with the given reason and change nothing.
    """
    episode = domain.episode(seed=seed)
    skipping = skip or {}
    done = []
    for i, (name, arguments) in enumerate(calls):
        if i in skipping:
            done.append(Replayed(name, False, skipping[i], skipped=True))
            continue
        try:
            result = episode.call(name, arguments)
        except CallFailed as exc:
            done.append(Replayed(name, False, str(exc), kind=exc.kind))
        else:
            done.append(Replayed(name, True, result=result))
    return episode, done


def replay_rollout(
    domain: Domain, rollout: Rollout, seed: int = 0, carry_faults: bool = False
) -> tuple[Episode, list[Replayed]]:
    """A rollout's calls replayed on a fresh episode: malformed and voided calls are not run, nor
    faulted calls unless `carry_faults` (then they run as if the fault had not happened, except
    one retried at once: the next call the same tool with the same arguments stands in for it, so
    a write retried through repeated faults is carried out once, not once per attempt)."""
    skip: dict[int, str] = {}
    calls = rollout.calls
    for i, call in enumerate(calls):
        if call.malformed or call.voided:
            skip[i] = call.error or "not run"
        elif call.outcome == "fault" and (not carry_faults or _retried(call, calls[i + 1 : i + 2])):
            skip[i] = f"{call.fault} fault: {call.error or 'not run'}"
    return replay(domain, ((c.name, c.arguments) for c in rollout.calls), seed, skip)


def _retried(call: RolloutCall, after: list[RolloutCall]) -> bool:
    """Whether the call right after `call` is its retry (same tool, same arguments, run)."""
    if not after or after[0].voided or after[0].malformed:
        return False
    return (after[0].name, after[0].arguments) == (call.name, call.arguments)


def expected_episode(domain: Domain, task: Task | str, seed: int | None = None) -> Episode:
    """The task's gold calls replayed (`scoring.validation.gold.replay_gold`) on a fresh episode.

    The seed is the given one, else the task's. Raises TaskError naming the task and the call when
    a gold call fails unexpectedly or a call marked `expect_error` succeeds.
    """
    gold = domain.task(task) if isinstance(task, str) else task
    episode = domain.episode(seed=gold.seed if seed is None else seed)
    try:
        replay_gold(episode, gold)
    except BaseException:
        episode.close()
        raise
    return episode
