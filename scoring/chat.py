"""Chat-message transcripts: OpenAI `tool_calls` and Anthropic `tool_use` / `tool_result` blocks.

Reads chat messages into a rollout: the assistant texts, the final message, and each tool call
matched to its result by id, with its outcome (success, the agent's error, or a verified fault).
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from simulator.errors import ErrorKind
from simulator.format.spec import ANSWER_TOOL
from simulator.serve import labels

from .rollout import CallLog, Outcome, Record, Rollout, RolloutCall, new_call, transcript_error

#: The answer channel the MCP server adds (`submit_answer(answer)`): a message, not a tool call.
SUBMIT_ANSWER = ANSWER_TOOL


class Labels:
    """Checks the server labels of one transcript (`simulator.serve.labels`): a label is believed only
    when it verifies with the runs key (None: nothing verifies), is in the current format, and is
    bound to this rollout: the call's index, the rollout's session (given, else its first believed
    label's) and its task (given, else its first believed label's). `ignored` says why each other
    label was not believed; its call is the agent's (`keep`: only the first so many reasons are
    kept, and `unverified` counts them all)."""

    _UNKNOWN: Any = object()

    def __init__(
        self,
        key: labels.Key | None,
        session: str | None = None,
        task: Any = _UNKNOWN,
        keep: int | None = None,
    ):
        self.key = key
        self.session = session
        self.task = task  # _UNKNOWN until given or bound by a believed label (None: no task)
        self.believed = 0
        self.ignored: list[str] = []
        self.unverified = 0
        self.keep = keep

    @property
    def bound_task(self) -> str | None:
        """The task the believed labels are bound to (None when none was believed)."""
        return self.task if self.believed and self.task is not Labels._UNKNOWN else None

    def fault(self, text: Any, call: RolloutCall, index: int) -> ErrorKind | None:
        """The kind of the label at the end of call `index`'s error text when it is believed, else None."""
        label = labels.read_label(text) if isinstance(text, str) else None
        if label is None:
            return None
        if self.key is None:
            why: str | None = "no runs key was found or given to verify it"
        elif call.malformed:
            why = "its arguments could not be read"
        elif not label.verify(self.key, call.name, call.arguments):
            why = "it does not verify with the runs key"
        elif label.version != labels.FORMAT:
            why = "it is in the old label format, which does not bind it to its rollout"
        else:
            why = self.unbound(label.session, label.task, label.index, index)
        if why is not None:
            self.ignore(index, call.name, why)
            return None
        self.session, self.task = label.session, label.task
        self.believed += 1
        return ErrorKind.read(label.kind)

    def unbound(self, session: str, task: str | None, signed: int, index: int) -> str | None:
        """Why a verified label does not belong to this rollout's call `index`, or None."""
        if signed != index:
            return f"its label is for call index {signed}, not {index}"
        if not session or (self.session is not None and session != self.session):
            return f"its label is for session {session!r}, not this rollout's {self.session!r}"
        if self.task is not Labels._UNKNOWN and task != self.task:
            return f"its label is for task {task!r}, not this rollout's {self.task!r}"
        return None

    def ignore(self, index: int, tool: str, why: str) -> None:
        self.unverified += 1
        if self.keep is None or len(self.ignored) < self.keep:
            self.ignored.append(f"call {index} ({tool}): {why}")

    def signed(self, fields: list[Any], signature: Any) -> bool:
        return self.key is not None and self.key.verify(fields, signature)


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, dict) and block.get("type") == "tool_result":
                parts.append(text_of(block.get("content")))
        return "\n".join(parts)
    return json.dumps(content, default=str)


def _looks_failed(text: str) -> bool:
    stripped = text.lstrip()
    if stripped.lower().startswith("error"):
        return True
    try:
        payload = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(payload, dict) and bool(payload.get("error") or payload.get("isError"))


def settle(call: RolloutCall, index: int, text: str, failed: bool, checker: Labels) -> None:
    """Record the result text of call `index`: ok, the agent's tool error, or a believed fault."""
    call.result, call.has_result = text, True
    kind = checker.fault(text, call, index)
    outcome: Outcome
    if call.malformed:
        outcome = "tool-error"
    elif kind is not None:
        outcome = "fault"
    else:
        outcome = "tool-error" if failed else "ok"
    call.outcome, call.fault = outcome, kind
    call.error = call.malformed or (labels.strip_label(text) if outcome != "ok" else None)


def add_call(
    rollout: Rollout, log: CallLog, source: str | None, where: str, name: Any, arguments: Any
) -> bool:
    """Add a tool call to the log, held open for its answer (False for `submit_answer`, whose
    answer becomes a message)."""
    if not isinstance(name, str) or not name:
        raise transcript_error(source, where, "a tool call without a name")
    if name == SUBMIT_ANSWER:
        answer = arguments
        if isinstance(answer, str):
            try:
                answer = json.loads(answer)
            except (json.JSONDecodeError, RecursionError):
                answer = None
        text = answer.get("answer") if isinstance(answer, dict) else None
        if isinstance(text, str):
            say(rollout, text, final=True)
            return False
    log.add(new_call(name, arguments, where), hold=True)
    return True


def say(rollout: Rollout, text: str, final: bool) -> None:
    """An assistant text: always a message; the final message when it made no tool call."""
    if text.strip():
        rollout.messages.append(text)
        if final:
            rollout.final_message = text


def _answer(
    rollout: Rollout,
    log: CallLog,
    ids: dict[str, int],
    call_id: Any,
    text: str,
    is_error: bool | None,
    checker: Labels,
    where: str,
) -> None:
    index = ids.pop(str(call_id), None)
    if index is None:
        raise transcript_error(
            rollout.source,
            where,
            f"a tool result for call id {labels_preview(call_id)}, which no tool call has",
        )
    if index < 0:  # the answer to a submit_answer call
        return
    failed = _looks_failed(text) if is_error is None else is_error
    settle(log[index], index, text, failed, checker)
    log.settled(index)


def labels_preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:80] + "..."


def read_openai(
    records: Iterable[Record], source: str | None, checker: Labels, log: CallLog | None = None
) -> Rollout:
    """OpenAI chat messages: assistant `tool_calls` (or legacy `function_call`) and `tool` messages."""
    rollout = Rollout(format="openai", source=source)
    log = CallLog(rollout.calls) if log is None else log
    ids: dict[str, int] = {}
    for record in records:
        msg, where = record.value, record.where
        role = msg.get("role")
        if role == "assistant":
            calls = msg.get("tool_calls") or []
            if not isinstance(calls, list):
                raise transcript_error(source, where, "tool_calls must be a list")
            if msg.get("function_call"):
                calls = [*calls, {"id": f"legacy:{len(log)}", "function": msg["function_call"]}]
            for j, tc in enumerate(calls):
                fn = tc.get("function") if isinstance(tc, dict) else None
                fn = fn if isinstance(fn, dict) else {}
                call_id = str(tc.get("id") if isinstance(tc, dict) else None)
                made = add_call(
                    rollout, log, source, f"{where} tool_calls[{j}]", fn.get("name"), fn.get("arguments")
                )
                ids[call_id] = len(log) - 1 if made else -1
            say(rollout, text_of(msg.get("content")), final=not calls)
        elif role == "tool":
            text = text_of(msg.get("content"))
            _answer(rollout, log, ids, msg.get("tool_call_id"), text, None, checker, where)
        elif role == "function":  # the legacy answer to the latest function_call
            legacy = [k for k in ids if k.startswith("legacy:")]
            legacy_id: Any = legacy[-1] if legacy else msg.get("name")
            _answer(rollout, log, ids, legacy_id, text_of(msg.get("content")), None, checker, where)
    return rollout


def read_anthropic(
    records: Iterable[Record], source: str | None, checker: Labels, log: CallLog | None = None
) -> Rollout:
    """Anthropic messages: `tool_use` blocks in assistant turns, `tool_result` blocks in user turns."""
    rollout = Rollout(format="anthropic", source=source)
    log = CallLog(rollout.calls) if log is None else log
    ids: dict[str, int] = {}
    for record in records:
        msg, where = record.value, record.where
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": text_of(content)}]
        texts, used_tools = [], False
        for j, block in enumerate(blocks):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and msg.get("role") == "assistant":
                texts.append(str(block.get("text") or ""))
            elif kind == "tool_use":
                used_tools = True
                made = add_call(
                    rollout, log, source, f"{where} content[{j}]", block.get("name"), block.get("input")
                )
                ids[str(block.get("id"))] = len(log) - 1 if made else -1
            elif kind == "tool_result":
                is_error = bool(block.get("is_error", False))
                text = text_of(block.get("content"))
                _answer(
                    rollout,
                    log,
                    ids,
                    block.get("tool_use_id"),
                    text,
                    is_error,
                    checker,
                    f"{where} content[{j}]",
                )
        say(rollout, "\n".join(texts), final=not used_tools)
    return rollout
