"""Transcript import: read a file in any supported format into a `Rollout`.

Formats (auto-detected, or named with `format=`):

- `toolgym`: toolgym's own JSONL (`simulator/transcript.py`: header, call, message, void, end
  records);
- `openai`: chat messages; assistant `tool_calls[].function.{name, arguments (a JSON string)}`,
  answered by `tool` messages with `tool_call_id`;
- `anthropic`: messages whose content holds `tool_use` blocks, answered by `tool_result` blocks
  (`is_error`) in the next user message;
- `mcp`: a JSON-RPC log: `tools/call` requests and their responses, matched by id
  (`result.isError`; a JSON-RPC `error` is the agent's failed call too).

A file is either one JSON document — a list of records, or the wrapper object

    {"domain": "bank", "task": "bank-007", "seed": 0, "messages": [...],
     "truncated": false, "termination_reason": "done", "final_message": "..."}

(every key but `messages` optional; the same keys may sit in a `metadata` object) — or JSONL, one
record a line, where a leading line holding only those keys is the metadata.

Nothing a transcript says about infrastructure is believed unless the server signed it
(`simulator.labels`): the runs key is given (`key=`) or found beside the file
(`RUNS/.toolgym-key`). A verified header marks a server-written transcript, which is complete
only with its verified `end` record; a call is a fault only with a verified label. Truncated
files and unknown record kinds raise `TranscriptError` naming the line or message; a call with
unreadable arguments is the agent's malformed call. Files over `max_bytes` (default 64 MiB,
`TOOLGYM_MAX_TRANSCRIPT_BYTES`) are refused with a clear error before they are read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from simulator import labels
from simulator.errors import ErrorKind
from simulator.transcript import CallRecord, EndRecord, HeaderRecord, MessageRecord

from .chat import Labels, add_call, read_anthropic, read_openai, say, settle, text_of
from .rollout import Format, Record, Rollout, RolloutCall, preview, read_arguments, transcript_error

_META_KEYS = ("domain", "version", "fingerprint", "task", "seed", "final_message", "termination_reason")
_MARKERS = ("truncated", "termination_reason")
_TOOLGYM_TYPES = {"header", "call", "message", "void", "end"}
#: Termination reasons (wrapper, metadata or an end record) that mean the harness cut the rollout
#: off; compared lower-cased with '-' and ' ' read as '_'.
TRUNCATION_REASONS = frozenset(
    {"truncated", "max_steps", "max_turns", "step_limit", "turn_limit", "max_tokens", "length"}
)
#: The default size limit of a transcript file.
MAX_BYTES = 64 * 1024 * 1024


def max_bytes_default() -> int:
    """The size limit: `TOOLGYM_MAX_TRANSCRIPT_BYTES` if set (a number of bytes), else 64 MiB."""
    value = os.environ.get("TOOLGYM_MAX_TRANSCRIPT_BYTES", "").strip()
    return int(value) if value.isdigit() else MAX_BYTES


def is_truncation(reason: Any) -> bool:
    """Whether a termination reason says the harness cut the rollout off."""
    if not isinstance(reason, str):
        return False
    return reason.strip().lower().replace("-", "_").replace(" ", "_") in TRUNCATION_REASONS


def load_transcript(
    path: str | Path,
    format: Format | None = None,
    key: labels.Key | None = None,
    max_bytes: int | None = None,
) -> Rollout:
    """Read a transcript file (any supported format, auto-detected) into a Rollout.

    `key` verifies the server's labels; by default the key beside the file (`RUNS/.toolgym-key`).
    """
    p = Path(path)
    return parse_transcript(
        read_text(p, max_bytes),
        source=str(p),
        format=format,
        key=key if key is not None else labels.find_key(p),
    )


def read_text(path: str | Path, max_bytes: int | None = None) -> str:
    """A transcript file's text; TranscriptError naming the file when it is over the size limit
    (`max_bytes`, default `TOOLGYM_MAX_TRANSCRIPT_BYTES` or 64 MiB) or cannot be read."""
    p = Path(path)
    limit = max_bytes_default() if max_bytes is None else max_bytes
    try:
        size = p.stat().st_size
        if size > limit:
            raise transcript_error(
                str(p),
                "file",
                f"is {size / 2**20:,.1f} MiB, over the {limit / 2**20:,.1f} MiB limit "
                "(raise it with TOOLGYM_MAX_TRANSCRIPT_BYTES)",
            )
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise transcript_error(str(p), "file", f"cannot be read: {exc}") from None


def parse_transcript(
    text: str, source: str | None = None, format: Format | None = None, key: labels.Key | None = None
) -> Rollout:
    """Parse transcript text (any supported format) into a Rollout; `key` verifies server labels."""
    records, meta, _ = read_records(text, source)
    if records and _is_meta(records[0].value):
        meta = {**records[0].value, **meta}
        records = records[1:]
    fmt = format or detect_format(records, source)
    checker = Labels(key)
    rollout: Rollout = _READERS[fmt](records, source, checker)
    updates: dict[str, Any] = {
        k: meta[k] for k in _META_KEYS if meta.get(k) is not None and getattr(rollout, k) is None
    }
    if meta.get("truncated") is True or is_truncation(meta.get("termination_reason")):
        updates["truncated"] = True
    if updates.get("final_message") is not None and not isinstance(updates["final_message"], str):
        raise transcript_error(source, "metadata", "final_message must be a string")
    if isinstance(updates.get("final_message"), str) and not rollout.messages:
        updates["messages"] = [updates["final_message"]]
    updates.update(unverified_labels=checker.unverified, key_found=key is not None, source=source)
    try:
        return Rollout.model_validate({**dict(rollout), **updates})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise transcript_error(source, "metadata", f"{where}: {first['msg']}") from None


def read_records(
    text: str, source: str | None, cut_tail: bool = False
) -> tuple[list[Record], dict[str, Any], bool]:
    """The records of a JSON document or a JSONL file, the document's metadata (if any), and whether
    the JSONL's last line was cut off — allowed only with `cut_tail` (a live server's file, read
    for metrics), else a TranscriptError like any line that is not JSON. The one transcript reader:
    scoring and serving metrics both read through it."""
    body = text.strip()
    if not body:
        raise transcript_error(source, "file", "the transcript is empty")
    try:
        doc = json.loads(body)
    except RecursionError:
        raise _too_deep(source, "file") from None
    except json.JSONDecodeError as exc:
        if body[0] == "[" or "\n" not in body:
            raise _json_error(source, exc) from None
        doc_error = exc
    else:
        if isinstance(doc, list):
            return _records(doc, "message", source), {}, False
        if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
            metadata = doc.get("metadata")
            block = metadata if isinstance(metadata, dict) else {}
            meta = {**block, **{k: v for k, v in doc.items() if k != "messages"}}
            return _records(doc["messages"], "message", source), meta, False
        if isinstance(doc, dict):
            return [Record("line 1", doc)], {}, False
        raise transcript_error(source, "file", f"expected JSON objects, got {type(doc).__name__}")
    records: list[Record] = []
    lines = text.split("\n")  # not splitlines: U+2028 is text
    last = max((n for n, line in enumerate(lines, start=1) if line.strip()), default=0)
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except RecursionError:
            raise _too_deep(source, f"line {lineno}") from None
        except json.JSONDecodeError as exc:
            if not records:  # a (truncated) multi-line JSON document, not JSONL
                raise _json_error(source, doc_error) from None
            if cut_tail and lineno == last:
                return records, {}, True
            raise transcript_error(
                source,
                f"line {lineno}",
                f"not valid JSON ({exc.msg}, column {exc.colno}); is the file truncated?",
            ) from None
        items = value if isinstance(value, list) else [value]  # a JSON-RPC batch
        for k, item in enumerate(items):
            where = f"line {lineno}" if len(items) == 1 else f"line {lineno}[{k}]"
            if not isinstance(item, dict):
                raise transcript_error(source, where, f"expected a JSON object, got {type(item).__name__}")
            records.append(Record(where, item))
    return records, {}, False


def _records(items: list[Any], noun: str, source: str | None) -> list[Record]:
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise transcript_error(
                source, f"{noun} {i}", f"expected a JSON object, got {type(item).__name__}"
            )
        out.append(Record(f"{noun} {i}", item))
    return out


def _too_deep(source: str | None, where: str) -> Exception:
    return transcript_error(source, where, "JSON nested too deeply to read")


def _json_error(source: str | None, exc: json.JSONDecodeError) -> Exception:
    return transcript_error(
        source, f"line {exc.lineno} column {exc.colno}", f"not valid JSON ({exc.msg}); is the file truncated?"
    )


def _is_meta(value: dict[str, Any]) -> bool:
    return not ({"type", "role", "jsonrpc", "method", "id"} & set(value)) and any(
        k in value for k in (*_META_KEYS, *_MARKERS)
    )


def detect_format(records: list[Record], source: str | None = None) -> Format:
    """Which format the records are in (toolgym, openai, anthropic, mcp)."""
    values = [r.value for r in records]
    if any(v.get("type") in ("header", "call") for v in values) or (
        values and all(v.get("type") in _TOOLGYM_TYPES for v in values)
    ):
        return "toolgym"
    if any(
        "jsonrpc" in v or isinstance(v.get("message"), dict) and "jsonrpc" in v["message"] for v in values
    ):
        return "mcp"
    if values and all("role" in v for v in values):
        for v in values:
            content = v.get("content")
            if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in content
            ):
                return "anthropic"
        return "openai"
    first = preview(values[0], 120) if values else "nothing"
    raise transcript_error(
        source,
        records[0].where if records else "file",
        "unrecognised transcript format (expected toolgym JSONL, OpenAI or Anthropic messages, "
        f"or an MCP JSON-RPC log); first record: {first}",
    )


# -- toolgym JSONL ---------------------------------------------------------------------------------


def _validated(model: type[BaseModel], record: Record, source: str | None, value: Any = None) -> Any:
    try:
        return model.model_validate(record.value if value is None else value)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise transcript_error(
            source, record.where, f"bad {preview(record.value.get('type'))} record: {loc}: {first['msg']}"
        ) from None


class _ToolgymReader:
    """Reads toolgym records, verifying the server's signatures as it goes."""

    def __init__(self, source: str | None, checker: Labels):
        self.source, self.checker = source, checker
        self.rollout = Rollout(format="toolgym", source=source)
        self.session: str | None = None
        self.by_index: dict[int, RolloutCall] = {}
        self.ended_with: int | None = None  # the call count of a signed end record

    def header(self, record: Record) -> None:
        header: HeaderRecord = _validated(HeaderRecord, record, self.source)
        r = self.rollout
        r.domain, r.version, r.fingerprint = header.domain, header.version, header.fingerprint
        r.task, r.seed = header.task, header.seed
        path = record.value.get("domain_path")
        r.domain_path = path if isinstance(path, str) else None
        # the server names a session after its transcript file
        self.session = header.session or (Path(self.source).stem if self.source else None)
        fields = labels.header_fields(record.value)
        r.server_written = self.checker.signed(fields, record.value.get("signature"))

    def call(self, record: Record) -> None:
        value = record.value
        kind = ErrorKind.read(value.get("error_kind"))
        # the error kind is read here, not by the model: an unknown kind is the agent's error
        call: CallRecord = _validated(CallRecord, record, self.source, {**value, "error_kind": None})
        arguments, problem = read_arguments(call.arguments)
        rc = RolloutCall(
            name=call.tool,
            arguments=arguments,
            outcome="ok" if call.ok else "tool-error",
            error=problem or (None if call.ok else labels.strip_label(call.error or "")),
            malformed=problem,
            result=call.result,
            has_result=call.ok,
            where=record.where,
        )
        if not call.ok and kind is not None and kind.is_infra and problem is None:
            fields = labels.call_fields(self.session or "", call.index, call.tool, call.arguments, kind)
            if self.session is not None and self.checker.signed(fields, value.get("signature")):
                rc.outcome, rc.fault = "fault", kind
            else:
                self.checker.unverified += 1
        elif problem is not None:
            rc.outcome = "tool-error"
        self.by_index[call.index] = rc
        self.rollout.calls.append(rc)

    def void(self, record: Record) -> None:
        """A call recorded as done whose commit failed: it did not happen (never replayed)."""
        index = record.value.get("index")
        call = self.by_index.get(index) if isinstance(index, int) else None
        if call is None or not isinstance(index, int):
            raise transcript_error(
                self.source, record.where, f"a void record for call {preview(index)}, which no call has"
            )
        fields = labels.call_fields(self.session or "", index, call.name, call.arguments, ErrorKind.STORAGE)
        if self.session is None or not self.checker.signed(fields, record.value.get("signature")):
            self.checker.unverified += 1  # only the server can say a recorded call did not happen
            return
        reason = record.value.get("reason")
        call.voided = True
        call.error = f"the call was voided: {reason}" if isinstance(reason, str) else "the call was voided"
        call.outcome, call.fault = "fault", ErrorKind.STORAGE

    def end(self, record: Record) -> None:
        end: EndRecord = _validated(EndRecord, record, self.source)
        r = self.rollout
        r.digest = end.digest
        r.termination_reason = end.reason
        r.truncated = r.truncated or record.value.get("truncated") is True or is_truncation(end.reason)
        signed = self.session is not None and self.checker.signed(
            labels.end_fields(self.session, record.value), record.value.get("signature")
        )
        self.ended_with = end.calls if signed else None

    def read(self, records: list[Record]) -> Rollout:
        for record in records:
            kind = record.value.get("type")
            if kind == "header":
                self.header(record)
            elif kind == "call":
                self.call(record)
            elif kind == "message":
                message: MessageRecord = _validated(MessageRecord, record, self.source)
                if message.role == "assistant":
                    say(self.rollout, message.content, final=True)
            elif kind == "void":
                self.void(record)
            elif kind == "end":
                self.end(record)
            else:
                raise transcript_error(
                    self.source,
                    record.where,
                    f"unknown record type {preview(kind)} (expected header, call, message, void, end)",
                )
        # complete: a signed end record whose call count is the number of calls in the file
        r = self.rollout
        r.complete = not r.server_written or self.ended_with == len(r.calls)
        return self.rollout


def read_toolgym(records: list[Record], source: str | None, checker: Labels) -> Rollout:
    return _ToolgymReader(source, checker).read(records)


# -- MCP JSON-RPC log ------------------------------------------------------------------------------


def _mcp_answer(call: RolloutCall, response: dict[str, Any], checker: Labels) -> None:
    error = response.get("error")
    if error is not None:  # a JSON-RPC error: the agent's failed call (unless a label verifies)
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        settle(call, f"JSON-RPC error {code}: {text_of(message)}", True, checker)
        return
    result = response.get("result")
    result = result if isinstance(result, dict) else {}
    blocks = result.get("content") or []
    text = (
        "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        if isinstance(blocks, list)
        else ""
    )
    if not text and isinstance(result.get("structuredContent"), dict):
        text = json.dumps(result["structuredContent"], ensure_ascii=False)
    settle(call, text, bool(result.get("isError")), checker)


def read_mcp(records: list[Record], source: str | None, checker: Labels) -> Rollout:
    rollout = Rollout(format="mcp", source=source)
    pending: dict[str, int] = {}
    for record in records:
        msg = record.value
        if "jsonrpc" not in msg and isinstance(msg.get("message"), dict):
            msg = msg["message"]  # a logger's envelope: {"direction": ..., "message": {...}}
        key = preview(msg.get("id"), 200)
        if msg.get("method") == "tools/call":
            params = msg.get("params")
            if not isinstance(params, dict) or not isinstance(params.get("name"), str):
                raise transcript_error(source, record.where, "tools/call request without params.name")
            made = add_call(rollout, source, record.where, params["name"], params.get("arguments"))
            if "id" in msg:
                pending[key] = len(rollout.calls) - 1 if made else -1
        elif "method" not in msg and key in pending and ("result" in msg or "error" in msg):
            index = pending.pop(key)
            if index >= 0:
                _mcp_answer(rollout.calls[index], msg, checker)
    return rollout


_READERS = {"toolgym": read_toolgym, "openai": read_openai, "anthropic": read_anthropic, "mcp": read_mcp}
