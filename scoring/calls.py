"""`$calls.N.path`: a task call's argument that names an earlier call's result — the one parser.

A string `"$calls.N.path"` is replaced by that path of call N's result (`"$$..."` is a literal
leading `$`). A missing field, an index past a list's end or a call that failed is a
`CallReferenceError`, never a silent null. The task checks (`scoring.tasks`), gold replay
(`run_calls`), validation and mutation (`CallRef`) all use this parser; the runtime never does.
Design notes: docs/design/engine.md.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from simulator.errors import CallFailed, InfraError, ToolError
from simulator.format.callsyntax import INDEX as _INDEX
from simulator.format.callsyntax import PREFIX
from simulator.format.callsyntax import CallRef as CallText
from simulator.lang.values import json_type

from .errors import CallReferenceError

if TYPE_CHECKING:
    from simulator.runtime.episode import Episode

    from .tasks import Call

__all__ = [
    "NO_RESULT",
    "PREFIX",
    "CallOutcome",
    "CallRef",
    "call_references",
    "resolve_arguments",
    "run_calls",
]


class _NoResult:
    """The result of a call that failed: it has none, and naming it is a CallReferenceError."""

    def __repr__(self) -> str:
        return "NO_RESULT"


NO_RESULT: Any = _NoResult()


@dataclass(frozen=True)
class CallRef(CallText):
    """One `$calls.N.path` reference (`simulator.format.callsyntax`), and how it is followed into a result."""

    def target(self, at: int) -> int | str:
        """The index of the call this names, or why it names no call earlier than call `at`."""
        if self.index is None:
            return f"{self.text} does not name a call (write $calls.N.path, N an earlier call's index)"
        if self.index >= at:
            which = "itself" if self.index == at else f"call {self.index}, which runs later"
            earlier = f"calls 0 to {at - 1}" if at else "none: this is the first call"
            return f"{self.text} refers to {which}; a call can use only earlier calls' results ({earlier})"
        return self.index

    def follow(self, result: Any) -> Any:
        """The value at this reference's path in `result` (the result of the call it names)."""
        n = self.index
        value = result
        for depth, part in enumerate(self.path):
            at = f"call {n}'s result" + "".join(f".{p}" for p in self.path[:depth])
            if isinstance(value, dict):
                if part not in value:
                    fields = ", ".join(sorted(value)) or "none"
                    raise CallReferenceError(f"{self.text}: {at} has no field {part!r} (fields: {fields})")
                value = value[part]
            elif isinstance(value, list) and _INDEX.fullmatch(part):
                i = int(part)
                if not -len(value) <= i < len(value):
                    raise CallReferenceError(f"{self.text}: {at} has no element {i} (it has {len(value)})")
                value = value[i]
            elif isinstance(value, list):  # a field of every element
                rest = CallRef(f"{PREFIX}{n}.{part}", n, (part,))
                value = [rest.follow(v) for v in value]
            else:
                raise CallReferenceError(
                    f"{self.text}: {at} is {json_type(value)}, which has no field {part!r}"
                )
        return value


def call_references(value: Any) -> list[CallRef]:
    """Every `$calls.N.path` reference in a call's arguments, at any depth."""
    ref = CallRef.parse(value)
    if ref is not None:
        return [ref]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [r for item in items for r in call_references(item)]


def resolve_arguments(value: Any, results: Sequence[Any], task_id: str = "?", index: int = 0) -> Any:
    """Replace `"$calls.N.path"` strings (at any depth) by earlier results (`NO_RESULT` for a call
    that failed); CallReferenceError when the reference names no earlier call or a path its result
    does not have."""
    if isinstance(value, str):
        if value.startswith("$$"):
            return value[1:]
        ref = CallRef.parse(value)
        if ref is None:
            return value
        n = ref.target(index)
        if isinstance(n, str):
            raise CallReferenceError(f"task {task_id}: gold call {index}: {n}")
        if results[n] is NO_RESULT:
            raise CallReferenceError(
                f"task {task_id}: gold call {index}: {value}: call {n} is expected to fail and has no result"
            )
        try:
            return ref.follow(results[n])
        except CallReferenceError as exc:
            raise CallReferenceError(f"task {task_id}: gold call {index}: {exc}") from None
    if isinstance(value, list):
        return [resolve_arguments(v, results, task_id, index) for v in value]
    if isinstance(value, dict):
        return {k: resolve_arguments(v, results, task_id, index) for k, v in value.items()}
    return value


@dataclass
class CallOutcome:
    """What one call of a sequence did: its resolved arguments, and its result or its error."""

    index: int
    name: str
    arguments: dict[str, Any]
    result: Any = NO_RESULT
    error: ToolError | InfraError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def run_calls(episode: Episode, calls: Sequence[Call], task_id: str = "?") -> Iterator[CallOutcome]:
    """Run calls in order on the episode, each one's references resolved against the results before
    it; yields each call's outcome (a failed call's error is yielded, not raised). The caller decides
    what a failure means (and may stop early); a bad reference raises CallReferenceError."""
    results: list[Any] = []
    for i, call in enumerate(calls):
        args = resolve_arguments(call.arguments, results, task_id, i)
        try:
            outcome = CallOutcome(i, call.name, args, result=episode.call(call.name, args))
        except CallFailed as exc:
            outcome = CallOutcome(i, call.name, args, error=exc)
        results.append(outcome.result)
        yield outcome
