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

from pydantic import BaseModel, ValidationError

from simulator import labels
from simulator.errors import ErrorKind
from simulator.resends import CALL_ID_META
from simulator.transcript import CallRecord, EndRecord, HeaderRecord, MessageRecord, ResendRecord

from .chat import Labels, add_call, read_anthropic, read_openai, say, settle, text_of
from .rollout import CallLog, Format, Record, Rollout, RolloutCall, preview, read_arguments, transcript_error

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
    """Reads toolgym records, verifying the server's signatures as it goes.

    A signed record counts only with the header's session and task (which its signature covers)
    and, for a call, at its own place in the file. Records signed in the previous format count
    only under a header that verifies in that format (which binds their session to its task).
    """

    def __init__(
        self,
        source: str | None,
        checker: Labels,
        log: CallLog | None = None,
        void_targets: set[int] | None = None,
    ):
        self.source, self.checker = source, checker
        self.rollout = Rollout(format="toolgym", source=source)
        self.log = CallLog(self.rollout.calls) if log is None else log
        self.session: str | None = None
        self.task: str | None = None
        self.format: int | None = None  # the signed format of the header, if it verifies
        # the position of the last call of each recorded index that a void record may name
        # (`void_targets`: the indexes void records name; None: any)
        self.targets = void_targets
        self.by_index: dict[int, int] = {}
        self.ended_with: int | None = None  # the call count of a signed end record

    def header(self, record: Record) -> None:
        header: HeaderRecord = _validated(HeaderRecord, record, self.source)
        r = self.rollout
        r.domain, r.version, r.fingerprint = header.domain, header.version, header.fingerprint
        r.task, r.seed = header.task, header.seed
        # the server names a session after its transcript file
        self.session = header.session or (Path(self.source).stem if self.source else None)
        self.task = header.task
        signature = record.value.get("signature")
        if self.checker.signed(labels.header_fields(record.value), signature):
            self.format = labels.FORMAT
        elif self.checker.signed(labels.header_fields_v1(record.value), signature):
            self.format = 1
        elif signature is not None and self.checker.key is not None:
            r.distrusted.append(
                "the header's signature does not verify with the runs key (the header was changed, or "
                "another key signed it): the transcript is read as unsigned"
            )
        r.server_written = self.format is not None
        r.signed_domain = self.format == labels.FORMAT
        path = record.value.get("domain_path")
        r.domain_path = path if r.signed_domain and isinstance(path, str) else None
        if isinstance(path, str) and not r.signed_domain:
            r.distrusted.append(
                f"the header's domain_path {preview(path)} is not used: no signature of the server covers it"
            )
        r.session = self.session if r.server_written else None

    def _signed(self, kind: ErrorKind, index: int, tool: str, arguments: Any, signature: Any) -> bool:
        """Whether a call or void record's signature is the server's, for this rollout."""
        if self.session is None:
            return False
        if self.format == 1:
            return self.checker.signed(
                labels.call_fields_v1(self.session, index, tool, arguments, kind), signature
            )
        fields = labels.call_fields(self.session, index, tool, arguments, kind, self.task)
        return self.checker.signed(fields, signature)

    def _believe(self, position: int, tool: str, index: int, signed: bool) -> bool:
        if not signed:
            why = (
                "it does not verify with the runs key"
                if self.checker.key is not None
                else "no runs key was found or given to verify it"
            )
        elif index != position:
            why = f"its record names call index {index}, but it is call {position} of the file"
        else:
            self.checker.believed += 1
            return True
        self.checker.ignore(position, tool, why)
        return False

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
        position = len(self.log)
        if not call.ok and kind is not None and kind.is_infra and problem is None:
            signed = self._signed(kind, call.index, call.tool, call.arguments, value.get("signature"))
            if self._believe(position, call.tool, call.index, signed):
                rc.outcome, rc.fault = "fault", kind
        elif problem is not None:
            rc.outcome = "tool-error"
        named = self.targets is None or call.index in self.targets
        if named:
            self.by_index[call.index] = position
        self.log.add(rc, hold=named)

    def void(self, record: Record) -> None:
        """A call recorded as done whose commit failed: it did not happen (never replayed)."""
        index = record.value.get("index")
        position = self.by_index.get(index) if isinstance(index, int) else None
        call = self.log[position] if position is not None else None
        if call is None or not isinstance(index, int):
            raise transcript_error(
                self.source, record.where, f"a void record for call {preview(index)}, which no call has"
            )
        signed = self._signed(
            ErrorKind.STORAGE, index, call.name, call.arguments, record.value.get("signature")
        )
        if not self._believe(index, call.name, index, signed):
            return  # only the server can say a recorded call did not happen
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
        signature = record.value.get("signature")
        if self.session is None:
            signed = False
        elif self.format == 1:
            signed = self.checker.signed(labels.end_fields_v1(self.session, record.value), signature)
        else:
            signed = self.checker.signed(labels.end_fields(self.session, record.value, self.task), signature)
        self.ended_with = end.calls if signed else None

    def read(self, records: Iterable[Record]) -> Rollout:
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
            elif kind == "resend":  # answered from the record, not run again: not a call
                _validated(ResendRecord, record, self.source)
            elif kind == "end":
                self.end(record)
            else:
                raise transcript_error(
                    self.source,
                    record.where,
                    f"unknown record type {preview(kind)} (expected header, call, message, void, resend, end)",
                )
        # complete: a signed end record whose call count is the number of calls in the file
        r = self.rollout
        r.complete = not r.server_written or self.ended_with == len(self.log)
        if self.checker.believed:  # the labels are bound to the header's task
            self.checker.task = self.task
        return self.rollout


def read_toolgym(
    records: Iterable[Record], source: str | None, checker: Labels, log: CallLog | None = None
) -> Rollout:
    return _ToolgymReader(source, checker, log).read(records)


# -- MCP JSON-RPC log ------------------------------------------------------------------------------


def _mcp_answer(call: RolloutCall, index: int, response: dict[str, Any], checker: Labels) -> None:
    error = response.get("error")
    if error is not None:  # a JSON-RPC error: the agent's failed call (unless a label verifies)
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        settle(call, index, f"JSON-RPC error {code}: {text_of(message)}", True, checker)
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
    settle(call, index, text, bool(result.get("isError")), checker)


def read_mcp(
    records: Iterable[Record], source: str | None, checker: Labels, log: CallLog | None = None
) -> Rollout:
    """A JSON-RPC log's calls. A request resending an earlier one's `_meta` call id is not a call
    (the server answers it from the record): its answer settles that call if nothing else did."""
    rollout = Rollout(format="mcp", source=source)
    log = CallLog(rollout.calls) if log is None else log
    pending: dict[str, int] = {}
    sent: dict[str, tuple[Any, Any, int]] = {}  # call id -> (tool, arguments, index or -1)
    for record in records:
        msg = record.value
        if "jsonrpc" not in msg and isinstance(msg.get("message"), dict):
            msg = msg["message"]  # a logger's envelope: {"direction": ..., "message": {...}}
        key = preview(msg.get("id"), 200)
        if msg.get("method") == "tools/call":
            params = msg.get("params")
            if not isinstance(params, dict) or not isinstance(params.get("name"), str):
                raise transcript_error(source, record.where, "tools/call request without params.name")
            meta = params.get("_meta")
            call_id = meta.get(CALL_ID_META) if isinstance(meta, dict) else None
            call = (params["name"], params.get("arguments"))
            if isinstance(call_id, str) and call_id in sent:  # a resend (or a refused reuse of the id)
                tool, arguments, index = sent[call_id]
                if "id" in msg:
                    pending[key] = index if (tool, arguments) == call else -1
                continue
            made = add_call(rollout, log, source, record.where, *call)
            index = len(log) - 1 if made else -1
            if isinstance(call_id, str):
                sent[call_id] = (*call, index)
            if "id" in msg:
                pending[key] = index
        elif "method" not in msg and key in pending and ("result" in msg or "error" in msg):
            index = pending.pop(key)
            if index >= 0 and log.is_open(index):
                _mcp_answer(log[index], index, msg, checker)
                log.settled(index)
    return rollout


_READERS = {"toolgym": read_toolgym, "openai": read_openai, "anthropic": read_anthropic, "mcp": read_mcp}
