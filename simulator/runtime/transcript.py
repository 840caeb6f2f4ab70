"""toolgym's own transcript format: append-only JSONL, one record a line.

The first line is a `header` (domain@version, fingerprint, task, seed, start time); then one
`call` record per tool call (arguments, result or error, error kind), `message` records for
what the agent said (its final message carries the answer facts), a `void` record when a call
recorded as done could not be committed (it did not happen), a `resend` record when a resent call
got a recorded answer (`simulator.serve.resends`: not a call, never replayed), and an `end` record. The MCP server
signs its header, its infrastructure-labelled calls and its end record (`simulator.serve.labels`). `schemas/transcript.schema.json` is generated from these models.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ErrorKind


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")


class HeaderRecord(_Record):
    type: Literal["header"] = "header"
    domain: str
    version: str
    fingerprint: str | None = None
    task: str | None = None
    seed: int = 0
    session: str | None = None
    domain_path: str | None = Field(
        default=None,
        description="the folder the server loaded the domain from: where scoring looks for it again (the "
        "domain's identity is its name, version and fingerprint)",
    )
    started_at: str | None = Field(
        default=None, description="wall-clock time the episode began (not part of the state)"
    )


class CallRecord(_Record):
    type: Literal["call"] = "call"
    index: int
    tool: str
    arguments: dict[str, Any]
    ok: bool
    result: Any = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    duration_us: float | None = None


class MessageRecord(_Record):
    type: Literal["message"] = "message"
    role: Literal["user", "assistant", "system"] = "assistant"
    content: str


class VoidRecord(_Record):
    """A call recorded as done whose commit then failed: it did not happen."""

    type: Literal["void"] = "void"
    index: int
    tool: str | None = None
    arguments: dict[str, Any] | None = None
    reason: str | None = None


class ResendRecord(_Record):
    """A resent call answered from the record (or refused): it was not run again."""

    type: Literal["resend"] = "resend"
    of: int | None = Field(default=None, description="the index of the call it resent, if it had one")
    tool: str | None = None
    call_id: str | None = Field(default=None, description="its `_meta['toolgym/call-id']`, if any")
    request_id: str | None = Field(default=None, description="its JSON-RPC id, as text")
    outcome: Literal["replayed", "expired", "conflict"] = Field(
        default="replayed",
        description="replayed: the recorded answer; expired: that answer was no longer kept; "
        "conflict: the call id was used for another call",
    )


class EndRecord(_Record):
    type: Literal["end"] = "end"
    calls: int | None = Field(default=None, description="how many calls the session recorded")
    digest: str | None = None
    reason: str | None = None
    ended_at: str | None = None


class Transcript(BaseModel):
    """The schema of one transcript line: any of the record kinds."""

    record: HeaderRecord | CallRecord | MessageRecord | VoidRecord | ResendRecord | EndRecord


class TranscriptSink(Protocol):
    def write(self, record: dict[str, Any]) -> None: ...


class MemorySink:
    """Keeps records in a list."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def write(self, record: dict[str, Any]) -> None:
        self.records.append(record)


class FileSink:
    """Appends records to a JSONL file, flushed (and fsync'd when `durable`) after every record."""

    def __init__(self, path: str | Path, durable: bool = False):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] | None = self.path.open("a", encoding="utf-8")
        self.durable = durable

    def write(self, record: dict[str, Any]) -> None:
        if self._fh is None:
            raise ValueError(f"transcript {self.path} is closed")
        try:
            self._fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        except UnicodeEncodeError:  # a lone surrogate (a refused argument): as a JSON escape
            self._fh.write(json.dumps(record, default=str) + "\n")
        self._fh.flush()
        if self.durable:
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
