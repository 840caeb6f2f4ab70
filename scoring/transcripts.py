"""Transcript import: read a file in any supported format into a `Rollout`.

Formats (auto-detected, or named with `format=`):

- `toolgym`: toolgym's own JSONL (`simulator/transcript.py`: header, call, message, end records);
- `openai`: chat messages; assistant `tool_calls[].function.{name, arguments (a JSON string)}`,
  answered by `tool` messages with `tool_call_id`;
- `anthropic`: messages whose content holds `tool_use` blocks, answered by `tool_result` blocks
  (`is_error`) in the next user message;
- `mcp`: a JSON-RPC log: `tools/call` requests and their responses, matched by id
  (`result.isError`; a JSON-RPC `error` is an infrastructure fault unless it is an
  invalid-params / unknown-method error).

A file is either one JSON document (a list of records, or an object with `messages` and optional
`domain`, `task`, `seed`, `final_message`) or JSONL (one record a line; a leading line holding
only `domain` / `task` / `seed` is metadata). Truncated files, malformed arguments and unknown
record kinds raise `TranscriptError` naming the line or message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from simulator.transcript import CallRecord, EndRecord, HeaderRecord, MessageRecord

from .chat import fault_kind, kind_from_payload, read_anthropic, read_openai
from .rollout import (
    OUTCOME_OF_KIND,
    Format,
    Outcome,
    Record,
    Rollout,
    RolloutCall,
    object_arguments,
    transcript_error,
)

_META_KEYS = ("domain", "version", "task", "seed", "final_message")
_TOOLGYM_TYPES = {"header", "call", "message", "end"}
#: JSON-RPC errors that are the caller's fault: invalid params, unknown method.
_CALLER_ERRORS = {-32602, -32601}


def load_transcript(path: str | Path, format: Format | None = None) -> Rollout:
    """Read a transcript file (any supported format, auto-detected) into a Rollout."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise transcript_error(str(p), "file", f"cannot be read: {exc}") from None
    return parse_transcript(text, source=str(p), format=format)


def parse_transcript(text: str, source: str | None = None, format: Format | None = None) -> Rollout:
    """Parse transcript text (any supported format) into a Rollout."""
    records, meta = read_records(text, source)
    if records and _is_meta(records[0].value):
        meta = {**records[0].value, **meta}
        records = records[1:]
    fmt = format or detect_format(records, source)
    reader = _READERS[fmt]
    rollout: Rollout = reader(records, source)
    updates = {k: meta[k] for k in _META_KEYS if meta.get(k) is not None and getattr(rollout, k) is None}
    try:
        return Rollout.model_validate({**rollout.model_dump(), **updates, "source": source})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise transcript_error(source, "metadata", f"{where}: {first['msg']}") from None


def read_records(text: str, source: str | None) -> tuple[list[Record], dict[str, Any]]:
    """The records of a JSON document or a JSONL file, and the document's metadata (if any)."""
    body = text.strip()
    if not body:
        raise transcript_error(source, "file", "the transcript is empty")
    try:
        doc = json.loads(body)
    except json.JSONDecodeError as exc:
        if body[0] == "[" or "\n" not in body:
            raise _json_error(source, exc) from None
        doc_error = exc
    else:
        if isinstance(doc, list):
            return _records(doc, "message", source), {}
        if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
            metadata = doc.get("metadata")
            block = metadata if isinstance(metadata, dict) else {}
            meta = {**block, **{k: v for k, v in doc.items() if k != "messages"}}
            return _records(doc["messages"], "message", source), meta
        if isinstance(doc, dict):
            return [Record("line 1", doc)], {}
        raise transcript_error(source, "file", f"expected JSON objects, got {type(doc).__name__}")
    records: list[Record] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            if not records:  # a (truncated) multi-line JSON document, not JSONL
                raise _json_error(source, doc_error) from None
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
    return records, {}


def _records(items: list[Any], noun: str, source: str | None) -> list[Record]:
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise transcript_error(
                source, f"{noun} {i}", f"expected a JSON object, got {type(item).__name__}"
            )
        out.append(Record(f"{noun} {i}", item))
    return out


def _json_error(source: str | None, exc: json.JSONDecodeError) -> Exception:
    return transcript_error(
        source, f"line {exc.lineno} column {exc.colno}", f"not valid JSON ({exc.msg}); is the file truncated?"
    )


def _is_meta(value: dict[str, Any]) -> bool:
    return not ({"type", "role", "jsonrpc", "method", "id"} & set(value)) and any(
        k in value for k in _META_KEYS
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
    first = json.dumps(values[0])[:120] if values else "nothing"
    raise transcript_error(
        source,
        records[0].where if records else "file",
        "unrecognised transcript format (expected toolgym JSONL, OpenAI or Anthropic messages, "
        f"or an MCP JSON-RPC log); first record: {first}",
    )


# -- toolgym JSONL ---------------------------------------------------------------------------------


def _validated(model: type[BaseModel], record: Record, source: str | None) -> Any:
    try:
        return model.model_validate(record.value)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise transcript_error(
            source, record.where, f"bad {record.value.get('type')} record: {loc}: {first['msg']}"
        ) from None


def read_toolgym(records: list[Record], source: str | None) -> Rollout:
    rollout = Rollout(format="toolgym")
    for record in records:
        kind = record.value.get("type")
        if kind == "header":
            header: HeaderRecord = _validated(HeaderRecord, record, source)
            rollout.domain, rollout.version = header.domain, header.version
            rollout.task, rollout.seed = header.task, header.seed
        elif kind == "call":
            call: CallRecord = _validated(CallRecord, record, source)
            outcome: Outcome = (
                "ok" if call.ok else OUTCOME_OF_KIND.get(call.error_kind or "tool", "tool-error")
            )
            rollout.calls.append(
                RolloutCall(
                    name=call.tool,
                    arguments=call.arguments,
                    outcome=outcome,
                    error=call.error,
                    where=record.where,
                )
            )
        elif kind == "message":
            message: MessageRecord = _validated(MessageRecord, record, source)
            if message.role == "assistant":
                rollout.final_message = message.content
        elif kind == "end":
            rollout.digest = _validated(EndRecord, record, source).digest
        else:
            raise transcript_error(
                source, record.where, f"unknown record type {kind!r} (expected header, call, message, end)"
            )
    return rollout


# -- MCP JSON-RPC log ------------------------------------------------------------------------------


def _mcp_outcome(response: dict[str, Any], tool: str) -> tuple[Outcome, str | None]:
    error = response.get("error")
    if error is not None:
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else str(error)
        return ("tool-error" if code in _CALLER_ERRORS else "infra"), f"JSON-RPC error {code}: {message}"
    result = response.get("result")
    if not isinstance(result, dict) or not result.get("isError"):
        return "ok", None
    text = " ".join(
        b.get("text", "")
        for b in result.get("content") or []
        if isinstance(b, dict) and b.get("type") == "text"
    )
    kind = kind_from_payload(result.get("_meta")) or kind_from_payload(result.get("structuredContent"))
    return kind or fault_kind(text, tool) or "tool-error", text


def read_mcp(records: list[Record], source: str | None) -> Rollout:
    rollout = Rollout(format="mcp")
    pending: dict[str, int] = {}
    for record in records:
        msg = record.value
        if "jsonrpc" not in msg and isinstance(msg.get("message"), dict):
            msg = msg["message"]  # a logger's envelope: {"direction": ..., "message": {...}}
        key = json.dumps(msg.get("id"))
        if msg.get("method") == "tools/call":
            params = msg.get("params")
            if not isinstance(params, dict) or not isinstance(params.get("name"), str):
                raise transcript_error(source, record.where, "tools/call request without params.name")
            arguments = object_arguments(params.get("arguments"), source, f"{record.where}: params.arguments")
            if "id" in msg:
                pending[key] = len(rollout.calls)
            rollout.calls.append(
                RolloutCall(name=params["name"], arguments=arguments, outcome="unknown", where=record.where)
            )
        elif "method" not in msg and key in pending and ("result" in msg or "error" in msg):
            call = rollout.calls[pending.pop(key)]
            call.outcome, call.error = _mcp_outcome(msg, call.name)
    return rollout


_READERS = {"toolgym": read_toolgym, "openai": read_openai, "anthropic": read_anthropic, "mcp": read_mcp}
