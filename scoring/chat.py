"""Chat-message transcripts: OpenAI `tool_calls` and Anthropic `tool_use` / `tool_result` blocks.

Both keep the agent's last assistant text as the rollout's final message. A tool result is
matched to its call by id. Anthropic results say `is_error`; OpenAI tool messages do not, so a
result whose text starts with "error" or whose JSON object has a truthy `error` counts as a
failed call (the outcome only feeds the replay-mismatch warnings: the replay decides the state).
A failed result that is toolgym's server's fault text (`simulator.server.INJECTED_FAULT`,
`INTERNAL_ERROR`) or a JSON payload carrying toolgym's `error_kind` of `infra` / `injected` /
`internal` marks an infrastructure fault, in either format.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from .rollout import (
    OUTCOME_OF_KIND,
    Outcome,
    Record,
    Rollout,
    RolloutCall,
    object_arguments,
    transcript_error,
)


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
    return json.dumps(content)


def kind_from_payload(payload: Any) -> Outcome | None:
    """`infra` / `injected` when a payload (a dict, or JSON text of one) carries toolgym's error kind."""
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except json.JSONDecodeError:
            return None
    if not isinstance(payload, dict):
        return None
    nested: dict[str, Any] = payload["toolgym"] if isinstance(payload.get("toolgym"), dict) else {}
    kind = payload.get("error_kind") or payload.get("toolgym/error_kind") or nested.get("error_kind")
    outcome = OUTCOME_OF_KIND.get(kind) if isinstance(kind, str) else None
    return outcome if outcome in ("infra", "injected") else None


@functools.cache
def _server_fault_texts() -> tuple[str, str]:
    # imported on first need: the server module loads fastmcp, which takes about a second
    from simulator.errors import INJECTED_FAULT, INTERNAL_ERROR

    return INJECTED_FAULT, INTERNAL_ERROR


def fault_kind(text: str, tool: str) -> Outcome | None:
    """`infra` / `injected` when a result is a toolgym fault: its error kind, or the server's fault text."""
    kind = kind_from_payload(text)
    if kind is not None:
        return kind
    injected, internal = _server_fault_texts()
    stripped = text.strip()
    if stripped == injected:
        return "injected"
    return "infra" if stripped == internal.format(tool=tool) else None


def _looks_failed(text: str) -> bool:
    stripped = text.lstrip()
    if stripped.lower().startswith("error"):
        return True
    try:
        payload = json.loads(stripped)
    except json.JSONDecodeError:
        return False
    return isinstance(payload, dict) and bool(payload.get("error") or payload.get("isError"))


def _outcome(text: str, is_error: bool | None, tool: str) -> tuple[Outcome, str | None]:
    if is_error is not False:
        kind = fault_kind(text, tool)
        if kind is not None:
            return kind, text
    failed = _looks_failed(text) if is_error is None else is_error
    return ("tool-error", text) if failed else ("ok", None)


def _call(source: str | None, where: str, name: Any, arguments: Any) -> RolloutCall:
    if not isinstance(name, str) or not name:
        raise transcript_error(source, where, "a tool call without a name")
    return RolloutCall(
        name=name,
        arguments=object_arguments(arguments, source, f"{where} arguments"),
        outcome="unknown",
        where=where,
    )


def _answer(
    rollout: Rollout,
    ids: dict[str, int],
    call_id: Any,
    text: str,
    is_error: bool | None,
    source: str | None,
    where: str,
) -> None:
    index = ids.pop(str(call_id), None)
    if index is None:
        raise transcript_error(
            source, where, f"a tool result for call id {call_id!r}, which no tool call has"
        )
    call = rollout.calls[index]
    call.outcome, call.error = _outcome(text, is_error, call.name)


def read_openai(records: list[Record], source: str | None) -> Rollout:
    """OpenAI chat messages: assistant `tool_calls` (or legacy `function_call`) and `tool` messages."""
    rollout = Rollout(format="openai")
    ids: dict[str, int] = {}
    for record in records:
        msg, where = record.value, record.where
        role = msg.get("role")
        if role == "assistant":
            calls = msg.get("tool_calls") or []
            if msg.get("function_call"):
                calls = [*calls, {"id": f"legacy:{len(rollout.calls)}", "function": msg["function_call"]}]
            for j, tc in enumerate(calls):
                fn = tc.get("function") if isinstance(tc, dict) else None
                fn = fn if isinstance(fn, dict) else {}
                ids[str(tc.get("id") if isinstance(tc, dict) else None)] = len(rollout.calls)
                rollout.calls.append(
                    _call(source, f"{where} tool_calls[{j}]", fn.get("name"), fn.get("arguments"))
                )
            text = text_of(msg.get("content"))
            if text.strip():
                rollout.final_message = text
        elif role == "tool":
            _answer(rollout, ids, msg.get("tool_call_id"), text_of(msg.get("content")), None, source, where)
        elif role == "function":  # the legacy answer to the latest function_call
            legacy = [k for k in ids if k.startswith("legacy:")]
            call_id = legacy[-1] if legacy else msg.get("name")
            _answer(rollout, ids, call_id, text_of(msg.get("content")), None, source, where)
    return rollout


def read_anthropic(records: list[Record], source: str | None) -> Rollout:
    """Anthropic messages: `tool_use` blocks in assistant turns, `tool_result` blocks in user turns."""
    rollout = Rollout(format="anthropic")
    ids: dict[str, int] = {}
    for record in records:
        msg, where = record.value, record.where
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": text_of(content)}]
        texts = []
        for j, block in enumerate(blocks):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and msg.get("role") == "assistant":
                texts.append(str(block.get("text") or ""))
            elif kind == "tool_use":
                ids[str(block.get("id"))] = len(rollout.calls)
                rollout.calls.append(
                    _call(source, f"{where} content[{j}]", block.get("name"), block.get("input"))
                )
            elif kind == "tool_result":
                is_error = bool(block.get("is_error", False))
                text = text_of(block.get("content"))
                _answer(
                    rollout, ids, block.get("tool_use_id"), text, is_error, source, f"{where} content[{j}]"
                )
        text = "\n".join(texts)
        if text.strip():
            rollout.final_message = text
    return rollout
