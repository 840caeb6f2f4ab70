"""The Rollout: every transcript format normalised to one model.

A rollout is what an agent did on a domain: its tool calls (name, arguments, outcome) in order
and its final message. The outcome is what the transcript recorded:

- `ok`: the call succeeded;
- `tool-error`: the call failed for a reason that is the agent's (bad arguments, a failed
  precondition, an unknown tool);
- `infra` / `injected`: a real or injected infrastructure fault — the rollout is not the agent's
  to answer for, so it is marked `failed-infra` and kept out of rewards;
- `unknown`: the transcript holds no result for the call (the replay decides what happened).

`where` names the call's place in its file ("line 7", "message 3") so that errors can point at it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from simulator.errors import TranscriptError

Outcome = Literal["ok", "tool-error", "infra", "injected", "unknown"]
Format = Literal["toolgym", "openai", "anthropic", "mcp"]

#: Outcomes that mean the call did not run because of a fault that is not the agent's.
INFRA_OUTCOMES = frozenset({"infra", "injected"})

#: toolgym's `error_kind` (simulator.transcript.ErrorKind) -> outcome.
OUTCOME_OF_KIND: dict[str, Outcome] = {
    "tool": "tool-error",
    "infra": "infra",
    "internal": "infra",
    "injected": "injected",
}


@dataclass(frozen=True)
class Record:
    """One record of a transcript file and where it is ("line 4", "message 2")."""

    where: str
    value: dict[str, Any]


class RolloutCall(BaseModel):
    """One tool call of a rollout."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    outcome: Outcome = "ok"
    error: str | None = Field(default=None, description="the recorded error message, if the call failed")
    where: str = Field(default="", description="where in the transcript: 'line 7', 'message 3'")


class Rollout(BaseModel):
    """A transcript in any supported format, normalised."""

    format: Format
    source: str | None = Field(default=None, description="the file it was read from")
    domain: str | None = None
    version: str | None = None
    task: str | None = None
    seed: int | None = None
    calls: list[RolloutCall] = Field(default_factory=list)
    final_message: str | None = None
    digest: str | None = Field(
        default=None, description="the state digest the transcript recorded at its end"
    )

    def infra_calls(self) -> list[tuple[int, RolloutCall]]:
        """(index, call) of every call that failed for an infrastructure reason."""
        return [(i, c) for i, c in enumerate(self.calls) if c.outcome in INFRA_OUTCOMES]

    def check_tools(self, tools: Iterable[str], domain: str = "the domain") -> None:
        """Raise TranscriptError for a call that *succeeded* with a tool the domain does not have.

        Such a transcript was recorded against another domain (or version). A call to an unknown
        tool that the transcript records as failed is the agent's mistake and is kept: replaying it
        fails again.
        """
        known = set(tools)
        for i, call in enumerate(self.calls):
            if call.name not in known and call.outcome not in ("tool-error", *INFRA_OUTCOMES):
                raise TranscriptError(
                    f"{self.source or 'transcript'}: {call.where or f'call {i}'}: unknown tool {call.name!r} "
                    f"(not a tool of {domain}); is this transcript for another domain?"
                )


def transcript_error(source: str | None, where: str, message: str) -> TranscriptError:
    """A TranscriptError naming the file and the place inside it."""
    prefix = f"{source}: " if source else ""
    return TranscriptError(f"{prefix}{where}: {message}")


def object_arguments(value: Any, source: str | None, where: str) -> dict[str, Any]:
    """Arguments as a dict: a JSON object, or a string holding one; anything else is an error."""
    if value is None:
        return {}
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise transcript_error(
                source,
                where,
                f"arguments are not valid JSON ({exc.msg} at position {exc.pos}): {value[:80]!r}",
            ) from None
    if not isinstance(value, dict):
        raise transcript_error(source, where, f"arguments must be a JSON object, got {type(value).__name__}")
    return value
