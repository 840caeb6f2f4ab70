"""Replaying a task's gold calls: the one place that does it (scoring, validation and tests use it).

A gold call's argument may refer to an earlier gold call's result, so that a task can create a
row and then act on its generated id under any seed: a string `"$calls.N.path"` is replaced by
that path of call N's result (`"$$..."` is a literal leading `$`). The path must exist: a field
the result does not have, an index past a list's end, or a call that is expected to fail (and so
has no result) is a `CallReferenceError`, never a silent null. A gold call that fails when it
should succeed, succeeds when marked `expect_error`, or fails with an unguarded engine error
(`OperationError`), makes the task broken: TaskError naming the task, the call and the message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import CallReferenceError, TaskError, ToolError
from .tables import json_type

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


_FAILED = object()  # the result of a gold call that failed as expected
_INDEX = re.compile(r"-?[0-9]+", re.ASCII)


def call_references(value: Any) -> list[str]:
    """Every `"$calls.N.path"` string in a call's arguments, at any depth."""
    if isinstance(value, str):
        return [value] if value.startswith("$calls.") else []
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [ref for item in items for ref in call_references(item)]


def reference_target(ref: str, index: int) -> int | str:
    """The index of the call `ref` names, or why it names no earlier call (for call `index`)."""
    head = ref[len("$calls.") :].split(".", 1)[0]
    if not _INDEX.fullmatch(head) or head.startswith("-"):
        return f"{ref} does not name a call (write $calls.N.path, N an earlier call's index)"
    n = int(head)
    if n >= index:
        which = "itself" if n == index else f"call {n}, which runs later"
        earlier = f"calls 0 to {index - 1}" if index else "none: this is the first call"
        return f"{ref} refers to {which}; a call can use only earlier calls' results ({earlier})"
    return n


def _follow(result: Any, ref: str, n: int) -> Any:
    parts = ref[len("$calls.") :].split(".")[1:]
    value = result
    for depth, part in enumerate(parts):
        at = f"call {n}'s result" + "".join(f".{p}" for p in parts[:depth])
        if isinstance(value, dict):
            if part not in value:
                fields = ", ".join(sorted(value)) or "none"
                raise CallReferenceError(f"{ref}: {at} has no field {part!r} (fields: {fields})")
            value = value[part]
        elif isinstance(value, list) and _INDEX.fullmatch(part):
            i = int(part)
            if not -len(value) <= i < len(value):
                raise CallReferenceError(f"{ref}: {at} has no element {i} (it has {len(value)})")
            value = value[i]
        elif isinstance(value, list):  # a field of every element
            value = [_follow(v, f"$calls.{n}.{part}", n) for v in value]
        else:
            raise CallReferenceError(f"{ref}: {at} is {json_type(value)}, which has no field {part!r}")
    return value


def resolve_arguments(value: Any, results: list[Any], task_id: str = "?", index: int = 0) -> Any:
    """Replace `"$calls.N.path"` strings (at any depth) by earlier results; CallReferenceError when
    the reference names no earlier call or a path its result does not have."""
    if isinstance(value, str):
        if value.startswith("$$"):
            return value[1:]
        if value.startswith("$calls."):
            n = reference_target(value, index)
            if isinstance(n, str):
                raise CallReferenceError(f"task {task_id}: gold call {index}: {n}")
            if results[n] is _FAILED:
                raise CallReferenceError(
                    f"task {task_id}: gold call {index}: {value}: call {n} is expected to fail and has no result"
                )
            try:
                return _follow(results[n], value, n)
            except CallReferenceError as exc:
                raise CallReferenceError(f"task {task_id}: gold call {index}: {exc}") from None
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
            if getattr(exc, "unguarded", False):
                raise TaskError(
                    f"task {task.id}: gold call {i} ({call.name}) hit an unguarded engine error: {exc}"
                ) from exc
            if not call.expect_error:
                raise TaskError(f"task {task.id}: gold call {i} ({call.name}) failed: {exc}") from exc
            outcomes.append(GoldOutcome(call.name, args, False, error=str(exc)))
            results.append(_FAILED)
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
