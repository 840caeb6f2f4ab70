"""The one error tree of toolgym, and the one vocabulary of error kinds.

`ToolgymError` is the root. `ToolError` (an agent's failed call, for the agent to act on) and
`InfraError` (a call failure that is not the agent's) are siblings; `except CallFailed` catches
both. Each carries its `ErrorKind`, which transcripts record, metrics count and scoring rules on.
`SpecError`, `SessionError` and `TaskError` cover domains, sessions and tasks (the grading
side's `TranscriptError` and `CallReferenceError` live in `scoring.errors`, on this tree).
Anything else that escapes is a bug. Full tree: docs/design/engine.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

#: What an agent is told when a call fails for a reason that is not its own (the server's wording;
#: scoring recognises it in client-side logs that carry no error kind).
INJECTED_FAULT = "Temporary service error: the call was not carried out and nothing changed. Retry it."
INTERNAL_ERROR = "Internal error while running {tool}: the call was not carried out and nothing changed."


class ErrorKind(StrEnum):
    """Why a call failed: the one vocabulary of error kinds (transcripts, metrics, scoring, health)."""

    TOOL = "tool"  # the agent's call was wrong (its arguments, a failed precondition, an unknown tool)
    INJECTED = "injected"  # a fault the server injected on purpose (nothing ran)
    TIMEOUT = "timeout"  # the call ran past the wall-clock limit the server imposes
    CAPACITY = "capacity"  # the server refused a session: at its limit
    STORAGE = "storage"  # the call's record or commit could not be written
    INFRA = "infra"  # another real infrastructure fault
    INTERNAL = "internal"  # a bug: logged and masked from the agent, never labelled by the server

    @property
    def is_infra(self) -> bool:
        """Whether the failure is the environment's, not the agent's (counted as infrastructure)."""
        return self is not ErrorKind.TOOL

    @property
    def signed(self) -> bool:
        """Whether the server signs this label (what only the server can say; a bug is not labelled)."""
        return self.is_infra and self is not ErrorKind.INTERNAL

    @property
    def transient(self) -> bool:
        """A fault whose call did not run and could be retried (scoring rules on it counterfactually)."""
        return self in (ErrorKind.INJECTED, ErrorKind.TIMEOUT)

    @classmethod
    def read(cls, value: object) -> ErrorKind | None:
        """The kind named by a transcript's `error_kind` value, or None for anything else."""
        try:
            return cls(value) if isinstance(value, str) else None
        except ValueError:
            return None


#: The kinds that are the environment's failure, in their order of listing.
INFRA_KINDS: tuple[ErrorKind, ...] = tuple(k for k in ErrorKind if k.is_infra)


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

    kind: ErrorKind = ErrorKind.TOOL
    #: set on the engine's backstop (`OperationError`): no precise check caught the problem
    unguarded: bool = False


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


class InfraError(ToolgymError):
    """A call failed for an infrastructure reason (an injected fault or a real one), not the agent's."""

    kind: ErrorKind = ErrorKind.INFRA

    def __init__(self, message: str, *, injected: bool = False):
        super().__init__(message)
        self.injected = injected
        if injected:
            self.kind = ErrorKind.INJECTED


#: Every failure a tool call can end in: the agent's, or the environment's.
CallFailed = (ToolError, InfraError)


class WorkLimitError(ToolError):
    """A call needs more work than one call may do (see simulator.runtime.budget): its arguments ask too much."""

    def __init__(self, what: str, limit: int):
        super().__init__(
            f"This call needs more work than one call may do (more than {what}); nothing changed. "
            "Ask for less, e.g. a smaller limit or fewer ids."
        )
        self.limit = limit


class StateTooLarge(ToolError):
    """A write would grow the episode's database past its limit (`Budget.growth_bytes`)."""

    def __init__(self, tool: str, limit: int):
        super().__init__(
            f"{tool} was not carried out: this episode's data has reached its size limit "
            f"({limit / 2**20:g} MiB beyond its start); nothing changed. Write less: shorter text, "
            "fewer or smaller rows."
        )
        self.limit = limit


class CallTimeout(InfraError):
    """A call ran past the wall-clock limit the server imposes on one call; it was rolled back."""

    kind = ErrorKind.TIMEOUT

    def __init__(self, seconds: float):
        super().__init__(
            f"The call took longer than the server allows ({seconds:g} s) and was stopped; nothing changed."
        )
        self.seconds = seconds


def clip(text: str, limit: int = 200) -> str:
    """`text`, or its first `limit` characters and "…" when it is longer (what a message may quote)."""
    return text if len(text) <= limit else text[:limit] + "…"


#: The characters of a name the agent gave (a tool's) that errors and transcript records repeat.
NAME_CHARS = 128


def clip_name(name: str) -> str:
    """A name as errors and records repeat it: at most `NAME_CHARS` characters and "…"."""
    return clip(name, NAME_CHARS)


class TaskError(ToolgymError):
    """A task is unknown, or broken (a gold call failed unexpectedly)."""


class StorageError(InfraError):
    """A call could not be recorded or committed (disk full, closed sink); it was rolled back."""

    kind = ErrorKind.STORAGE


class CapacityError(InfraError):
    """The server refused a new session: it is at its limit (in all, or for this client)."""

    kind = ErrorKind.CAPACITY
    #: the session the refused call would have opened and its task (its label is bound to them)
    session: str = ""
    task: str | None = None


class SessionError(ToolgymError):
    """A session cannot be opened or continued: a bad session id or seed, an unknown task, an ended
    session, another connection's session. The message says what the client should do instead."""
