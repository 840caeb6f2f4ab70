"""Replaying a task's gold calls: the one place that does it (scoring, validation and tests use it).

The calls run through `scoring.calls.run_calls`, which resolves `$calls.N.path` references
against earlier results. A gold call that fails when it should succeed, succeeds when marked
`expect_error`, or fails with an unguarded engine error (`OperationError`), makes the task broken:
TaskError naming the task, the call and the message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from simulator import Episode
from simulator.errors import TaskError, ToolError

from ..calls import run_calls
from ..tasks import Task


@dataclass
class GoldOutcome:
    """What one gold call did."""

    name: str
    arguments: dict[str, Any]
    ok: bool
    result: Any = None
    error: str | None = None


def replay_gold(
    episode: Episode, task: Task, after: Callable[[int, GoldOutcome], None] | None = None
) -> list[GoldOutcome]:
    """Run the task's gold calls on the episode. Raises TaskError when a call misbehaves.

    `after(i, outcome)`, when given, runs after each call (validation traces footprints with it).
    """
    outcomes: list[GoldOutcome] = []
    for step in run_calls(episode, task.calls, task.id):
        i, call = step.index, task.calls[step.index]
        if step.error is not None:
            if isinstance(step.error, ToolError) and step.error.unguarded:
                raise TaskError(
                    f"task {task.id}: gold call {i} ({call.name}) hit an unguarded engine error: {step.error}"
                ) from step.error
            if not call.expect_error:
                raise TaskError(
                    f"task {task.id}: gold call {i} ({call.name}) failed: {step.error}"
                ) from step.error
            outcome = GoldOutcome(call.name, step.arguments, False, error=str(step.error))
        elif call.expect_error:
            raise TaskError(
                f"task {task.id}: gold call {i} ({call.name}) is marked expect_error but succeeded"
            )
        else:
            outcome = GoldOutcome(call.name, step.arguments, True, result=step.result)
        outcomes.append(outcome)
        if after is not None:
            after(i, outcome)
    return outcomes
