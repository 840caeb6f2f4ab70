"""The grading side's errors, on the one error tree rooted at `simulator.errors.ToolgymError`.

`TranscriptError`: a transcript cannot be read. `CallReferenceError`: a gold call's `$calls.N.path`
argument names no earlier call's result, or a field that result does not have. The runtime never
raises either: it reads no transcripts and resolves no gold calls.
"""

from __future__ import annotations

from simulator.errors import TaskError, ToolgymError

__all__ = ["CallReferenceError", "TranscriptError"]


class TranscriptError(ToolgymError):
    """A transcript cannot be read; the message names the line or message index."""


class CallReferenceError(TaskError):
    """A gold call's `$calls.N.path` argument names no earlier call, or a field its result does not have."""
