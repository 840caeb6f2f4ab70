"""The MCP JSON-RPC log reader: each `tools/call` request matched to its response by id; a resend
(the same `_meta` call id) is answered from its first call and never counted again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from simulator.serve.resends import CALL_ID_META

from .chat import Labels, add_call, settle, text_of
from .rollout import CallLog, Record, Rollout, RolloutCall, preview, transcript_error


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
