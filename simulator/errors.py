"""The one error tree of toolgym.

::

    ToolgymError                 root: anything toolgym raises on purpose
    ├── SpecError                a domain folder or spec file is wrong (lists every problem, with file and location)
    ├── ToolError                an agent's tool call failed; the message is for the agent to act on
    │   ├── OperationError       the operation raised on the agent's arguments where no precise check caught it
    │   ├── WorkLimitError       the call asked for more work than one call may do (the agent's arguments)
    │   └── InfraError           the call failed for a reason that is not the agent's (injected or real fault)
    │       ├── CallTimeout      the call ran past the wall-clock limit the server imposes (kind "timeout")
    │       └── StorageError     the call's record or commit could not be written; rolled back
    ├── TranscriptError          a transcript cannot be read (names the line or message)
    └── TaskError                a task is unknown or broken (e.g. a gold call fails unexpectedly)
        └── CallReferenceError   a gold call's `$calls.N.path` names no earlier call's result, or no field of it

Anything else that escapes is a bug: the server logs it and masks it from the agent.
"""

from __future__ import annotations

from dataclasses import dataclass

#: What an agent is told when a call fails for a reason that is not its own (the server's wording;
#: scoring recognises it in client-side logs that carry no error kind).
INJECTED_FAULT = "Temporary service error: the call was not carried out and nothing changed. Retry it."
INTERNAL_ERROR = "Internal error while running {tool}: the call was not carried out and nothing changed."


class ToolgymError(Exception):
    """Root of every error toolgym raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One problem found while loading a domain: which file, where inside it, what is wrong."""

    file: str
    location: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.location}" if self.location else self.file
        return f"{where}: {self.message}"


class SpecError(ToolgymError):
    """A domain folder or spec file is invalid; `problems` lists every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{len(self.problems)} problem(s):\n{lines}")


class ToolError(ToolgymError):
    """An agent's tool call failed; the message says what was wrong, in words an agent can act on."""

    kind = "tool"


class OperationError(ToolError):
    """The operation raised an unexpected exception on the agent's arguments (an unguarded engine error).

    Still the agent's tool error (the call ran on arguments it chose; nothing changed), but no
    precise check caught it: validation's fuzzing reports every tool that raises one.
    """

    unguarded = True

    def __init__(self, tool: str, original: BaseException):
        self.tool = tool
        self.original_type = type(original).__name__
        super().__init__(
            f"{tool} could not run on these arguments: {_problem_kind(original)} ({self.original_type}). "
            "Nothing changed."
        )


def _problem_kind(exc: BaseException) -> str:
    """What kind of problem an exception is, in words that leak nothing of the engine."""
    if isinstance(exc, OverflowError):
        return "a number is out of range"
    if isinstance(exc, ZeroDivisionError):
        return "a division by zero"
    if isinstance(exc, UnicodeError):
        return "a text value holds characters that are not valid Unicode"
    if isinstance(exc, RecursionError):
        return "a value is nested too deeply"
    if isinstance(exc, ValueError):
        return "a value is not valid here"
    if isinstance(exc, TypeError | LookupError | AttributeError):
        return "a value has the wrong type or shape"
    return "the operation failed on these values"


class InfraError(ToolError):
    """A call failed for an infrastructure reason (an injected fault or a real one), not the agent's."""

    kind = "infra"

    def __init__(self, message: str, *, injected: bool = False):
        super().__init__(message)
        self.injected = injected
        if injected:
            self.kind = "injected"


class WorkLimitError(ToolError):
    """A call needs more work than one call may do (see simulator.budget): its arguments ask too much."""

    def __init__(self, what: str, limit: int):
        super().__init__(
            f"This call needs more work than one call may do (more than {what}); nothing changed. "
            "Ask for less, e.g. a smaller limit or fewer ids."
        )
        self.limit = limit


class CallTimeout(InfraError):
    """A call ran past the wall-clock limit the server imposes on one call; it was rolled back."""

    kind = "timeout"

    def __init__(self, seconds: float):
        super().__init__(
            f"The call took longer than the server allows ({seconds:g} s) and was stopped; nothing changed."
        )
        self.seconds = seconds


def clip(text: str, limit: int = 200) -> str:
    """`text`, or its first `limit` characters and "…" when it is longer (what a message may quote)."""
    return text if len(text) <= limit else text[:limit] + "…"


class TranscriptError(ToolgymError):
    """A transcript cannot be read; the message names the line or message index."""


class TaskError(ToolgymError):
    """A task is unknown, or broken (a gold call failed unexpectedly)."""


class CallReferenceError(TaskError):
    """A gold call's `$calls.N.path` argument names no earlier call, or a field its result does not have."""


class StorageError(InfraError):
    """A call could not be recorded or committed (disk full, closed sink); it was rolled back."""

    def __init__(self, message: str):
        super().__init__(message)
        self.kind = "storage"
