"""Exactly once under retries: a session remembers its calls, so that a resend is not run again.

A client makes a call retry-safe with a key in `_meta["toolgym/call-id"]`, new for each logical
call and the same on every resend. A call whose key the session recorded gets the recorded answer
(or error) and is not run again; the same key with another tool or other arguments is a tool
error. Without a key, only a stateful MCP connection's call with the id, tool and arguments of a
recorded call is a resend. A resend writes a `resend` record, never a `call`. Memory per session
is bounded (`KEEP_ANSWERS`, `ANSWER_CHARS`, `KEEP_KEYS`, `KEEP_AFTER_END`).
Design notes: docs/design/serving.md.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import clip

if TYPE_CHECKING:  # (fastmcp only when a session answers: scoring reads CALL_ID_META from here)
    from fastmcp.tools.base import ToolResult

#: The `_meta` key of a call's idempotency key.
CALL_ID_META = "toolgym/call-id"
MAX_CALL_ID = 256
KEEP_ANSWERS = 64
ANSWER_CHARS = 256 * 1024
KEEP_KEYS = 1024
KEEP_AFTER_END = 4

BAD_CALL_ID = (
    f"Invalid _meta[{CALL_ID_META!r}]: give a string of 1-{MAX_CALL_ID} characters, new for each call "
    "and the same when the call is resent."
)


def call_id_of(meta: Any) -> str | None:
    """The idempotency key in a request's `_meta` (None: it has none); ValueError when malformed."""
    if not isinstance(meta, dict) or CALL_ID_META not in meta:
        return None
    value = meta[CALL_ID_META]
    if not isinstance(value, str) or not 0 < len(value) <= MAX_CALL_ID:
        raise ValueError(BAD_CALL_ID)
    return value


@dataclass(frozen=True, slots=True)
class CallRef:
    """What names a request's call across resends: its key, and its JSON-RPC id."""

    key: str | None
    rid: int | str | None = None

    def slot(self, stateful: bool) -> str | None:
        """The name of this call in a session's memory: its key, else (on a stateful connection)
        its JSON-RPC id, as text (fastmcp hands its path the id as text: every path agrees); None
        when a resend of it cannot be recognised."""
        if self.key is not None:
            return "k" + self.key
        if stateful and self.rid is not None:
            return "r" + str(self.rid)
        return None


def call_digest(slot: str, tool: str, arguments: Any) -> str | bytes | None:
    """A digest of (tool, arguments), or None for arguments that cannot be written (too deep).
    A keyed call's is canonical (keys sorted: a client may rebuild its arguments); a JSON-RPC id's
    is of the arguments as received (a resend on one connection repeats them as they were), and
    short ones are their own digest."""
    try:
        if slot[0] == "k":
            text = json.dumps([tool, arguments], sort_keys=True, separators=(",", ":"), default=repr)
        else:
            text = repr((tool, arguments))
            if len(text) <= _SHORT:
                return text
    except (RecursionError, ValueError, TypeError):
        return None
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


_SHORT = 96


#: A kept answer: (its text, or its content blocks when it is not one text; whether it carried
#: structured content, which is its text's JSON again; is_error; meta; characters).
_Answer = tuple[Any, bool, bool, "dict[str, Any] | None", int]


def _answer(result: ToolResult) -> _Answer:
    content = result.content
    meta = dict(result.meta) if result.meta else None
    structured = result.structured_content is not None
    if len(content) == 1 and content[0].type == "text":
        text = content[0].text
        return text, structured, bool(result.is_error), meta, len(text)
    chars = sum(len(getattr(block, "text", None) or "") for block in content)
    return list(content), structured, bool(result.is_error), meta, chars


def _result(answer: _Answer) -> ToolResult:
    from fastmcp.tools.base import ToolResult
    from mcp_types import TextContent

    body, structured, is_error, meta, _ = answer
    content = [TextContent(type="text", text=body)] if isinstance(body, str) else list(body)
    # an object result's text is its JSON (`mcptools.ok_result`): the same structured content
    value = json.loads(content[0].text) if structured else None
    return ToolResult.model_construct(
        content=content, structured_content=value, meta=dict(meta) if meta else None, is_error=is_error
    )


@dataclass(frozen=True, slots=True)
class Resend:
    """How a resend is answered: `outcome` is `replayed`, `expired` or `conflict`."""

    result: ToolResult
    outcome: str
    index: int | None

    def record(self, tool: str, ref: CallRef) -> dict[str, Any]:
        """Its transcript record (never a call: scoring does not replay it)."""
        return {
            "type": "resend",
            "of": self.index,
            "tool": tool,
            "call_id": ref.key,
            "request_id": None if ref.rid is None else str(ref.rid),
            "outcome": self.outcome,
        }


def error_result(message: str) -> ToolResult:
    from .mcptools import error_result

    return error_result(message)


class CallMemory:
    """One session's identified calls, oldest first: slot -> [digest, index, answer or None].

    A keyed call is remembered (as a digest) after its answer is dropped; a call named by its
    JSON-RPC id only while its answer is kept (a resend comes right after its call)."""

    def __init__(self) -> None:
        self.entries: OrderedDict[str, list[Any]] = OrderedDict()
        self.answered: OrderedDict[str, None] = OrderedDict()  # slots holding an answer, oldest first
        self.chars = 0

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, slot: object) -> bool:
        """Whether a call is recorded under `slot` (a call named by it may be a resend)."""
        return slot in self.entries

    def find(self, slot: str, digest: str | bytes | None) -> Resend | None:
        """How to answer a call recorded under `slot`, or None when it is a new call."""
        entry = self.entries.get(slot)
        if entry is None:
            return None
        recorded, index, answer = entry
        if digest is None or recorded != digest:
            if slot[0] != "k":  # a JSON-RPC id used again for another call: a new call
                return None
            key = clip(slot[1:], 80)
            message = (
                f"The call id {key!r} (_meta[{CALL_ID_META!r}]) was already used in this session for "
                "another call; a resent call must repeat its tool and arguments exactly. Use a new "
                "call id for a new call. Nothing was run."
            )
            return Resend(error_result(message), "conflict", index)
        if answer is None:
            message = (
                f"This call was already carried out ({_which(slot)}); its answer is no longer kept (a "
                f"session keeps those of its last {KEEP_ANSWERS} calls), and it was not run again."
            )
            return Resend(error_result(message), "expired", index)
        return Resend(_result(answer), "replayed", index)

    def keep(self, slot: str, digest: str | bytes | None, index: int | None, result: ToolResult) -> None:
        """Record a call's answer under `slot` (a call that cannot be digested is not kept)."""
        if digest is None:
            return
        entries, answered = self.entries, self.answered
        if slot in entries:  # (a JSON-RPC id used again: the newer call is the one kept)
            self._drop(slot)
            del entries[slot]
        answer = _answer(result)
        entries[slot] = [digest, index, answer]
        answered[slot] = None
        self.chars += answer[4]
        if len(answered) > KEEP_ANSWERS or self.chars > ANSWER_CHARS:
            self.trim(KEEP_ANSWERS, ANSWER_CHARS)
        if len(entries) > KEEP_KEYS:
            oldest = next(iter(entries))
            self._drop(oldest)
            del entries[oldest]

    def trim(self, answers: int, chars: int = ANSWER_CHARS) -> None:
        """Keep at most `answers` answers and `chars` characters of them (the newest always)."""
        answered = self.answered
        while answered and (len(answered) > answers or self.chars > chars):
            if len(answered) == 1 and answers > 0:
                break
            slot = next(iter(answered))
            self._drop(slot)
            if slot[0] != "k":
                del self.entries[slot]

    def _drop(self, slot: str) -> None:
        """Forget the answer kept under `slot`, if any."""
        entry = self.entries[slot]
        if entry[2] is not None:
            self.chars -= entry[2][4]
            entry[2] = None
            del self.answered[slot]


def _which(slot: str) -> str:
    if slot[0] == "k":
        return f"call id {clip(slot[1:], 80)!r}"
    return f"JSON-RPC id {clip(slot[1:], 80)}"
