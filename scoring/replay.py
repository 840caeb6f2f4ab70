"""Replay: run calls on a fresh episode; the expected episode is the task's gold calls replayed.

The agent's calls are replayed with the transcript's seed, so the final state is recomputed,
never trusted from the transcript. A gold call that fails unexpectedly makes the task broken
(`TaskError`). `Calls` plays a rollout's calls in order; a `Stepper` replays them as they come.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from simulator import Domain, Episode
from simulator.errors import CallFailed, ErrorKind

from .rollout import Rollout, RolloutCall
from .tasks import Task, task_of
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


CallSeen = Callable[[int, RolloutCall], None]


class Calls(Protocol):
    """A rollout's calls, played in order as often as scoring needs.

    `play` says each call as it is read (`on_call(index, call)`, in order; a chat call's outcome
    is not known yet) and again once nothing later in the transcript can change it
    (`on_final(index, call)`, at once or later, in any order). `faults` are the verified faults
    as read, (index, call) in order; `count` is how many calls there are.
    """

    count: int
    faults: list[tuple[int, RolloutCall]]

    def play(self, on_call: CallSeen, on_final: CallSeen) -> None: ...


class RolloutCalls:
    """The calls of a rollout in memory (each final as it is said)."""

    def __init__(self, rollout: Rollout):
        self.rollout = rollout
        self.count = len(rollout.calls)
        self.faults = rollout.faults()

    def play(self, on_call: CallSeen, on_final: CallSeen) -> None:
        for i, call in enumerate(self.rollout.calls):
            on_call(i, call)
            on_final(i, call)


class Stepper:
    """Replays calls on an episode as they come (`call(index, call)` in order, then `finish()`),
    telling `done(index, replayed)` each outcome in order.

    `views` holds the calls whose outcome a later record settles, as scored (the faults, after
    `scoring.trust.bind_faults`): a call is replayed as its view says. Malformed and voided calls
    are not run, nor faulted calls unless `carry_faults` (then they run as if the fault had not
    happened, except one retried at once: the next call the same tool with the same arguments
    stands in for it, so a write retried through repeated faults is carried out once, not once per
    attempt). Only a faulted call waiting to see the next one is kept.
    """

    def __init__(
        self,
        episode: Episode,
        done: Callable[[int, Replayed], None],
        views: Mapping[int, RolloutCall] | None = None,
        carry_faults: bool = False,
    ):
        self.episode, self.done, self.carry = episode, done, carry_faults
        self.views = views or {}
        self.held: tuple[int, RolloutCall] | None = None

    def call(self, index: int, call: RolloutCall) -> None:
        view = self.views.get(index, call)
        if self.held is not None:
            self._carry(view)
        if view.malformed or view.voided:
            self.done(index, Replayed(view.name, False, view.error or "not run", skipped=True))
        elif view.outcome == "fault" and self.carry:
            self.held = (index, view)
        elif view.outcome == "fault":
            self._skip_fault(index, view)
        else:
            self._run(index, view)

    def finish(self) -> None:
        if self.held is not None:
            self._carry(None)

    def _carry(self, after: RolloutCall | None) -> None:
        assert self.held is not None
        (index, fault), self.held = self.held, None
        if _retried(fault, [after] if after is not None else []):
            self._skip_fault(index, fault)
        else:
            self._run(index, fault)

    def _skip_fault(self, index: int, call: RolloutCall) -> None:
        reason = f"{call.fault} fault: {call.error or 'not run'}"
        self.done(index, Replayed(call.name, False, reason, skipped=True))

    def _run(self, index: int, call: RolloutCall) -> None:
        try:
            result = self.episode.call(call.name, call.arguments)
        except CallFailed as exc:
            self.done(index, Replayed(call.name, False, str(exc), kind=exc.kind))
        else:
            self.done(index, Replayed(call.name, True, result=result))


def replay_rollout(
    domain: Domain, rollout: Rollout, seed: int = 0, carry_faults: bool = False
) -> tuple[Episode, list[Replayed]]:
    """A rollout's calls replayed on a fresh episode (`Stepper`: malformed, voided and faulted
    calls are not run; with `carry_faults`, faulted calls are, once per run of retries)."""
    episode = domain.episode(seed=seed)
    done: list[Replayed] = []
    stepper = Stepper(episode, lambda _, replayed: done.append(replayed), carry_faults=carry_faults)
    for i, call in enumerate(rollout.calls):
        stepper.call(i, call)
    stepper.finish()
    return episode, done


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
    gold = task_of(domain, task)
    episode = domain.episode(seed=gold.seed if seed is None else seed)
    try:
        replay_gold(episode, gold)
    except BaseException:
        episode.close()
        raise
    return episode
