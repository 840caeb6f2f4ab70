"""Replaying a task's gold calls: the one place that does it (scoring, validation and tests use it).

A gold call's argument may refer to an earlier gold call's result, so that a task can create a
row and then act on its generated id under any seed: a string `"$calls.N.path"` is replaced by
that path of call N's result (`"$$..."` is a literal leading `$`). A gold call that fails when
it should succeed, or succeeds when marked `expect_error`, makes the task broken: TaskError.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import TaskError, ToolError
from .expr import _walk

if TYPE_CHECKING:
    from .episode import Episode
    from .spec import Task


@dataclass
class GoldOutcome:
    """What one gold call did."""

    name: str
    arguments: dict[str, Any]
    ok: bool
    result: Any = None
    error: str | None = None


def resolve_arguments(value: Any, results: list[Any], task_id: str = "?", index: int = 0) -> Any:
    """Replace `"$calls.N.path"` strings (at any depth) by earlier results."""
    if isinstance(value, str):
        if value.startswith("$$"):
            return value[1:]
        if value.startswith("$calls."):
            parts = value[len("$calls.") :].split(".")
            if not parts[0].isdigit() or int(parts[0]) >= index:
                raise TaskError(
                    f"task {task_id}: call {index} refers to {value}, which is not an earlier call"
                )
            return _walk(results[int(parts[0])], parts[1:])
        return value
    if isinstance(value, list):
        return [resolve_arguments(v, results, task_id, index) for v in value]
    if isinstance(value, dict):
        return {k: resolve_arguments(v, results, task_id, index) for k, v in value.items()}
    return value


def replay_gold(
    episode: Episode, task: Task, after: Callable[[int, GoldOutcome], None] | None = None
) -> list[GoldOutcome]:
    """Run the task's gold calls on the episode. Raises TaskError when a call misbehaves.

    `after(i, outcome)`, when given, runs after each call (validation traces footprints with it).
    """
    outcomes: list[GoldOutcome] = []
    results: list[Any] = []
    for i, call in enumerate(task.calls):
        args = resolve_arguments(call.arguments, results, task.id, i)
        try:
            result = episode.call(call.name, args)
        except ToolError as exc:
            if not call.expect_error:
                raise TaskError(f"task {task.id}: gold call {i} ({call.name}) failed: {exc}") from exc
            outcomes.append(GoldOutcome(call.name, args, False, error=str(exc)))
            results.append(None)
            if after is not None:
                after(i, outcomes[-1])
            continue
        if call.expect_error:
            raise TaskError(
                f"task {task.id}: gold call {i} ({call.name}) is marked expect_error but succeeded"
            )
        outcomes.append(GoldOutcome(call.name, args, True, result=result))
        results.append(result)
        if after is not None:
            after(i, outcomes[-1])
    return outcomes
