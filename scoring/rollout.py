"""The Rollout: every transcript format normalised to one model.

A rollout is what an agent did on a domain: its tool calls (name, arguments, outcome) in order,
what it said, and how it ended. A call's outcome is `ok`, `tool-error`, `fault` (a verified
server label) or `unknown`. Readers put the calls they read in a `CallLog`.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from simulator.errors import ErrorKind

from .errors import TranscriptError

Outcome = Literal["ok", "tool-error", "fault", "unknown"]
Format = Literal["toolgym", "openai", "anthropic", "mcp"]

#: Fault kinds whose effect the scorer can undo (the call did not run; the agent could retry):
#: the counterfactual rule decides whether they excluded the rollout. Every other verified kind
#: (capacity, storage, infra, internal) excludes it always.
TRANSIENT_FAULTS = frozenset(k for k in ErrorKind if k.transient)

#: Arguments nested deeper than this make a call malformed (the agent's failed call).
MAX_ARGUMENT_DEPTH = 64
#: How much of a value an error message quotes.
PREVIEW_CHARS = 80
#: Termination reasons (wrapper, metadata or an end record) that mean the harness cut the rollout
#: off; compared lower-cased with '-' and ' ' read as '_'.
TRUNCATION_REASONS = frozenset(
    {"truncated", "max_steps", "max_turns", "step_limit", "turn_limit", "max_tokens", "length"}
)


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
    fault: ErrorKind | None = Field(default=None, description="the verified infrastructure label's kind")
    error: str | None = Field(default=None, description="the recorded error message, if the call failed")
    malformed: str | None = Field(
        default=None, description="why the call's arguments could not be read (the call is not replayed)"
    )
    voided: bool = Field(default=False, description="a void record says the call did not happen")
    result: Any = Field(default=None, description="the result the transcript recorded (text in chat logs)")
    has_result: bool = Field(default=False, description="whether the transcript recorded a result")
    where: str = Field(default="", description="where in the transcript: 'line 7', 'message 3'")

    @property
    def failed(self) -> bool:
        return self.outcome in ("tool-error", "fault")


class Rollout(BaseModel):
    """A transcript in any supported format, normalised."""

    format: Format
    source: str | None = Field(default=None, description="the file it was read from")
    domain: str | None = None
    version: str | None = None
    fingerprint: str | None = None
    domain_path: str | None = Field(
        default=None,
        description="where the server found the domain (from a header it signed; None otherwise): a hint "
        "to find it again, never its identity",
    )
    signed_domain: bool = Field(
        default=False, description="the domain's name, version and fingerprint are the server's signed word"
    )
    session: str | None = Field(
        default=None,
        description="the session the rollout ran in: the signed header's, the chat log's `session`, or "
        "its first verified label's",
    )
    task: str | None = None
    seed: int | None = None
    calls: list[RolloutCall] = Field(default_factory=list)
    messages: list[str] = Field(
        default_factory=list, description="every assistant text, in order (with or without tool calls)"
    )
    final_message: str | None = Field(
        default=None, description="the last assistant message that made no tool call"
    )
    digest: str | None = Field(
        default=None, description="the state digest the transcript recorded at its end"
    )
    truncated: bool = Field(default=False, description="the harness cut the rollout off (a step limit)")
    termination_reason: str | None = None
    server_written: bool = Field(default=False, description="a toolgym header signed by the server")
    complete: bool = Field(
        default=True, description="false: a server-written transcript without its signed end record"
    )
    unverified_labels: int = Field(
        default=0, description="infrastructure labels that did not verify (counted as the agent's errors)"
    )
    ignored_labels: list[str] = Field(
        default_factory=list,
        description="why each infrastructure label was not believed ('call 2 (tool): ...')",
    )
    ignored_more: int = Field(
        default=0,
        description="ignored labels whose reasons are not in ignored_labels (a streamed transcript keeps "
        "only the first few)",
    )
    label_task: str | None = Field(
        default=None, description="the task the rollout's believed labels are bound to"
    )
    distrusted: list[str] = Field(
        default_factory=list,
        description="what else the transcript claims that was not believed, and why (one sentence each)",
    )
    key_found: bool = Field(default=False, description="whether a runs key was available to verify labels")

    def faults(self) -> list[tuple[int, RolloutCall]]:
        """(index, call) of every call that failed with a verified infrastructure label."""
        return [(i, c) for i, c in enumerate(self.calls) if c.outcome == "fault"]

    def infra_calls(self) -> list[tuple[int, RolloutCall]]:
        """Kept for callers of the first API: the verified faults."""
        return self.faults()

    def hard_faults(self) -> list[tuple[int, RolloutCall]]:
        """Verified faults that exclude the rollout whatever happened (not injected, not a timeout)."""
        return [(i, c) for i, c in self.faults() if c.fault not in TRANSIENT_FAULTS]

    def check_tools(self, tools: Iterable[str], domain: str = "the domain") -> None:
        """Raise TranscriptError for a call that *succeeded* with a tool the domain does not have.

        Such a transcript was recorded against another domain (or version). A call to an unknown
        tool that the transcript records as failed is the agent's mistake and is kept: replaying it
        fails again.
        """
        known = set(tools)
        for i, call in enumerate(self.calls):
            if call.name not in known and not call.failed:
                raise unknown_tool(self.source, i, call, domain)


def unknown_tool(source: str | None, index: int, call: RolloutCall, domain: str) -> TranscriptError:
    """The error of a transcript whose call `index` succeeded with a tool `domain` does not have."""
    return TranscriptError(
        f"{source or 'transcript'}: {call.where or f'call {index}'}: unknown tool "
        f"{preview(call.name)} (not a tool of {domain}); is this transcript for another domain?"
    )


class CallLog:
    """Where a reader puts a rollout's calls: here, every call in the rollout's list.

    A reader adds each call (`hold`: a later record may still settle it: its answer in a chat
    log, a void record), takes a call back by index to settle it while it `is_open`, and says
    when it has (`settled`). `scoring.stream.StreamLog` keeps only the calls held open.
    """

    def __init__(self, calls: list[RolloutCall]):
        self.calls = calls
        self._settled: set[int] = set()

    def __len__(self) -> int:
        return len(self.calls)

    def add(self, call: RolloutCall, hold: bool = False) -> None:
        self.calls.append(call)

    def __getitem__(self, index: int) -> RolloutCall:
        return self.calls[index]

    def is_open(self, index: int) -> bool:
        """Whether call `index` is still to be settled."""
        return 0 <= index < len(self.calls) and index not in self._settled

    def settled(self, index: int) -> None:
        self._settled.add(index)


def is_truncation(reason: Any) -> bool:
    """Whether a termination reason says the harness cut the rollout off."""
    if not isinstance(reason, str):
        return False
    return reason.strip().lower().replace("-", "_").replace(" ", "_") in TRUNCATION_REASONS


def transcript_error(source: str | None, where: str, message: str) -> TranscriptError:
    """A TranscriptError naming the file and the place inside it."""
    prefix = f"{source}: " if source else ""
    return TranscriptError(f"{prefix}{where}: {message}")


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """A bounded quote of a value for an error message (never the whole of a huge value)."""
    if isinstance(value, str):
        text = repr(value[: limit + 1])
    else:
        try:
            text = json.dumps(value, ensure_ascii=True, default=str)
        except (RecursionError, ValueError):
            text = f"<a {type(value).__name__} nested too deeply to show>"
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} chars)"


def depth_over(value: Any, limit: int) -> bool:
    """Whether a JSON value nests deeper than `limit` (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[Any] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def not_unicode(value: Any) -> bool:
    """Whether a JSON value holds a string (or key) that is not valid Unicode (a lone surrogate)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def read_arguments(value: Any) -> tuple[dict[str, Any], str | None]:
    """A call's arguments as a dict and, when they cannot be read, why (the agent's malformed call).

    Accepts a JSON object or a string holding one; anything else — invalid JSON, another JSON type,
    nesting deeper than MAX_ARGUMENT_DEPTH, text that is not valid Unicode — is a malformed call:
    its arguments are {} and the reason says what was wrong, quoting at most a bounded prefix.
    """
    if value is None:
        return {}, None
    if isinstance(value, str):
        if not value.strip():
            return {}, None
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            return {}, f"arguments are not valid JSON ({exc.msg} at position {exc.pos}): {preview(value)}"
        except RecursionError:
            return {}, f"arguments nest too deeply to read (over {MAX_ARGUMENT_DEPTH} levels)"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {type(value).__name__}: {preview(value)}"
    if depth_over(value, MAX_ARGUMENT_DEPTH):
        return {}, f"arguments nest too deeply (over {MAX_ARGUMENT_DEPTH} levels)"
    if not_unicode(value):
        return {}, "arguments hold text that is not valid Unicode (a lone surrogate)"
    return value, None


def new_call(name: str, arguments: Any, where: str) -> RolloutCall:
    """A call whose outcome is not known yet; a call with malformed arguments fails as the agent's."""
    args, problem = read_arguments(arguments)
    if problem is None:
        return RolloutCall(name=name, arguments=args, outcome="unknown", where=where)
    return RolloutCall(name=name, outcome="tool-error", error=problem, malformed=problem, where=where)


class ChatTranscript(BaseModel):
    """The wrapper of a chat log: its messages and what scoring needs to know about them.

    Every key but `messages` is optional; the same keys may sit in a `metadata` object, or, in a
    JSONL file, on a leading line of their own.
    """

    domain: str | None = Field(
        default=None, description="the domain: a bundled name, name@version, or a folder path"
    )
    version: str | None = None
    fingerprint: str | None = Field(default=None, description="the domain's fingerprint (matches by content)")
    task: str | None = None
    seed: int | None = None
    session: str | None = Field(
        default=None,
        description="the server session the rollout ran in (its `?session=` id): a label of another "
        "session is not believed",
    )
    messages: list[dict[str, Any]] = Field(
        description="OpenAI or Anthropic chat messages, or MCP JSON-RPC messages, in order"
    )
    truncated: bool = Field(
        default=False, description="the harness cut the rollout off (a step limit): reward 0.0"
    )
    termination_reason: str | None = Field(
        default=None,
        description="why the rollout ended; truncated, max_steps, max_turns, step_limit, turn_limit, "
        "max_tokens and length mean it was cut off",
    )
    final_message: str | None = Field(
        default=None, description="the agent's final answer, when the messages do not carry it"
    )
    metadata: dict[str, Any] | None = None
