"""Transcript import: read a file in any supported format into a `Rollout`.

Formats: `toolgym` JSONL, `openai` and `anthropic` chat messages, and `mcp` JSON-RPC logs
(auto-detected, or named with `format=`). What a transcript says about infrastructure is believed
only when the server signed it. `load_transcript` reads a file whole; `scoring.stream` a line at
a time.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from simulator.serve import labels

from ._mcplog import read_mcp
from ._toolgymlog import _ToolgymReader, read_toolgym
from .chat import Labels, read_anthropic, read_openai
from .rollout import CallLog, Format, Record, Rollout, is_truncation, preview, transcript_error

_META_KEYS = (
    "domain",
    "version",
    "fingerprint",
    "task",
    "seed",
    "session",
    "final_message",
    "termination_reason",
)
_MARKERS = ("truncated", "termination_reason")
_TOOLGYM_TYPES = {"header", "call", "message", "void", "resend", "end"}
#: The default size limit of a transcript file.
MAX_BYTES = 64 * 1024 * 1024


def max_bytes_default() -> int:
    """The size limit: `TOOLGYM_MAX_TRANSCRIPT_BYTES` if set (a number of bytes), else 64 MiB."""
    value = os.environ.get("TOOLGYM_MAX_TRANSCRIPT_BYTES", "").strip()
    return int(value) if value.isdigit() else MAX_BYTES


def load_transcript(
    path: str | Path,
    format: Format | None = None,
    key: labels.Key | None = None,
    max_bytes: int | None = None,
) -> Rollout:
    """Read a transcript file (any supported format, auto-detected) into a Rollout.

    `key` verifies the server's labels; by default the key beside the file (`RUNS/.toolgym-key`),
    and a key file there that is refused (a symlink, another user's, open to others) is an error.
    """
    p = Path(path)
    if key is None:
        try:
            key = labels.find_key(p)
        except (OSError, ValueError) as exc:  # a key that is there but not the server's own
            raise transcript_error(str(p), "runs key", str(exc)) from None
    return parse_transcript(read_text(p, max_bytes), source=str(p), format=format, key=key)


def read_text(path: str | Path, max_bytes: int | None = None) -> str:
    """A transcript file's text; TranscriptError naming the file when it is over the size limit
    (`max_bytes`, default `TOOLGYM_MAX_TRANSCRIPT_BYTES` or 64 MiB) or cannot be read."""
    p = Path(path)
    limit = max_bytes_default() if max_bytes is None else max_bytes
    try:
        size = p.stat().st_size
        if size > limit:
            raise size_error(str(p), size, limit)
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise transcript_error(str(p), "file", f"cannot be read: {exc}") from None


def size_error(source: str, size: int, limit: int) -> Exception:
    """The error of a transcript file over the size limit."""
    return transcript_error(
        source,
        "file",
        f"is {size / 2**20:,.1f} MiB, over the {limit / 2**20:,.1f} MiB limit "
        "(raise it with TOOLGYM_MAX_TRANSCRIPT_BYTES)",
    )


def parse_transcript(
    text: str, source: str | None = None, format: Format | None = None, key: labels.Key | None = None
) -> Rollout:
    """Parse transcript text (any supported format) into a Rollout; `key` verifies server labels."""
    records, meta, _ = read_records(text, source)
    if records and is_meta(records[0].value):
        meta = {**records[0].value, **meta}
        records = records[1:]
    fmt = format or detect_format(records, source)
    return read_rollout(records, meta, fmt, source, key)


def read_rollout(
    records: Iterable[Record],
    meta: dict[str, Any],
    fmt: Format,
    source: str | None,
    key: labels.Key | None,
    log: CallLog | None = None,
    void_targets: set[int] | None = None,
    keep_reasons: int | None = None,
) -> Rollout:
    """The rollout of records in a known format, after the metadata (`meta`). With a `log`, its
    calls go there, not into the rollout (`scoring.stream`: only the calls void records may still
    name, `void_targets`, are held for them; `keep_reasons`: only the first so many reasons for
    ignored labels are kept, the rest counted in `ignored_more`)."""
    session = meta.get("session")
    checker = Labels(key, session if isinstance(session, str) and session else None, keep=keep_reasons)
    if isinstance(meta.get("task"), str):
        checker.task = meta["task"]
    if fmt == "toolgym":
        rollout = _ToolgymReader(source, checker, log, void_targets).read(records)
    else:
        rollout = _READERS[fmt](records, source, checker, log)
    updates: dict[str, Any] = {
        k: meta[k] for k in _META_KEYS if meta.get(k) is not None and getattr(rollout, k) is None
    }
    if meta.get("truncated") is True or is_truncation(meta.get("termination_reason")):
        updates["truncated"] = True
    if updates.get("final_message") is not None and not isinstance(updates["final_message"], str):
        raise transcript_error(source, "metadata", "final_message must be a string")
    if isinstance(updates.get("final_message"), str) and not rollout.messages:
        updates["messages"] = [updates["final_message"]]
    updates.update(
        unverified_labels=checker.unverified,
        ignored_labels=checker.ignored,
        ignored_more=checker.unverified - len(checker.ignored),
        label_task=checker.bound_task,
        session=rollout.session or checker.session,
        key_found=key is not None,
        source=source,
    )
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
    lines = text.split("\n")  # not splitlines: U+2028 is text
    last = max((n for n, line in enumerate(lines, start=1) if line.strip()), default=0)
    reader = LineReader(source, doc_error, cut_at=last if cut_tail else None)
    return list(reader.records(lines)), {}, reader.cut


class LineReader:
    """The records of JSONL lines (without their newlines, numbered from 1), parsed one line at a
    time as they are asked for: a line that is not JSON raises TranscriptError naming it, except
    line `cut_at`, the last, which ends the records (`cut`: a live server's file). A first line
    that is not JSON raises `doc_error` (the file is a multi-line JSON document, not JSONL)."""

    def __init__(
        self, source: str | None, doc_error: json.JSONDecodeError | None = None, cut_at: int | None = None
    ):
        self.source, self.doc_error, self.cut_at = source, doc_error, cut_at
        self.cut = False

    def records(self, lines: Iterable[str]) -> Iterator[Record]:
        source, seen = self.source, False
        for lineno, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except RecursionError:
                raise _too_deep(source, f"line {lineno}") from None
            except json.JSONDecodeError as exc:
                if not seen and self.doc_error is not None:  # a (truncated) multi-line JSON document
                    raise _json_error(source, self.doc_error) from None
                if lineno == self.cut_at:
                    self.cut = True
                    return
                raise transcript_error(
                    source,
                    f"line {lineno}",
                    f"not valid JSON ({exc.msg}, column {exc.colno}); is the file truncated?",
                ) from None
            items = value if isinstance(value, list) else [value]  # a JSON-RPC batch
            for k, item in enumerate(items):
                where = f"line {lineno}" if len(items) == 1 else f"line {lineno}[{k}]"
                if not isinstance(item, dict):
                    raise transcript_error(
                        source, where, f"expected a JSON object, got {type(item).__name__}"
                    )
                seen = True
                yield Record(where, item)


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


def is_meta(value: dict[str, Any]) -> bool:
    """Whether a leading record holds only metadata (domain, task, seed, ...), not a message."""
    return not ({"type", "role", "jsonrpc", "method", "id"} & set(value)) and any(
        k in value for k in (*_META_KEYS, *_MARKERS)
    )


def detect_format(records: Iterable[Record], source: str | None = None) -> Format:
    """Which format the records are in (toolgym, openai, anthropic, mcp)."""
    detector = FormatDetector()
    for record in records:
        detector.see(record)
    return detector.format(source)


class FormatDetector:
    """Decides a transcript's format from its records, seen one at a time (none kept but the first)."""

    def __init__(self) -> None:
        self.first: Record | None = None
        self.toolgym = False  # a header or call record
        self.toolgym_only = True  # every record of a toolgym type
        self.mcp = False
        self.roles = True  # every record has a role
        self.anthropic = False  # a tool_use or tool_result block

    def see(self, record: Record) -> None:
        v = record.value
        if self.first is None:
            self.first = record
        kind = v.get("type")
        self.toolgym = self.toolgym or kind in ("header", "call")
        self.toolgym_only = self.toolgym_only and kind in _TOOLGYM_TYPES
        self.mcp = (
            self.mcp or "jsonrpc" in v or isinstance(v.get("message"), dict) and "jsonrpc" in v["message"]
        )
        self.roles = self.roles and "role" in v
        content = v.get("content")
        if self.roles and not self.anthropic and isinstance(content, list):
            self.anthropic = any(
                isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in content
            )

    def format(self, source: str | None = None) -> Format:
        seen = self.first is not None
        if self.toolgym or (seen and self.toolgym_only):
            return "toolgym"
        if self.mcp:
            return "mcp"
        if seen and self.roles:
            return "anthropic" if self.anthropic else "openai"
        first = preview(self.first.value, 120) if self.first is not None else "nothing"
        raise transcript_error(
            source,
            self.first.where if self.first is not None else "file",
            "unrecognised transcript format (expected toolgym JSONL, OpenAI or Anthropic messages, "
            f"or an MCP JSON-RPC log); first record: {first}",
        )


_READERS = {"toolgym": read_toolgym, "openai": read_openai, "anthropic": read_anthropic, "mcp": read_mcp}
