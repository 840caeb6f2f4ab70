"""What a source declares an operation does: only reads, writes, or nothing said.

    http_declared("get", "/pets") -> ("read", "method GET")
    tool_declared(tool, wrapper) -> ("write", "type: WRITE") | (None, None)

Declared means stated, never guessed from a name: an HTTP method with a meaning (GET / HEAD read;
PUT / PATCH / DELETE write; the others say nothing), a function's own `type`, an MCP tool's
`annotations` or a kind set beside a wrapped function. Normalization makes kinds agree with it.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

from typing import Any

from toolgen.model import Declared

__all__ = ["WRAPPER_KEYS", "http_declared", "tool_declared"]

#: keys beside a wrapped function that declare its kind
WRAPPER_KEYS = ("tool_type", "mutates_state")
_READ_METHODS = frozenset(("get", "head"))
_WRITE_METHODS = frozenset(("put", "patch", "delete"))
_ACTION_SELECTORS = ("action=", "x-amz-target=")

Declaration = tuple[Declared | None, str | None]


def http_declared(method: str | None, path: str | None) -> Declaration:
    """What an HTTP method declares (see the module docstring)."""
    if not method:
        return None, None
    low = method.lower()
    if low in _READ_METHODS:
        selector = (path or "").lower().partition("#")[2] or (path or "").lower().partition("?")[2]
        if any(s in selector for s in _ACTION_SELECTORS):
            return None, None
        return "read", f"method {low.upper()}"
    if low in _WRITE_METHODS:
        return "write", f"method {low.upper()}"
    return None, None


def _typed(value: Any, key: str) -> Declaration:
    if isinstance(value, str) and value.strip().lower() in ("read", "write"):
        kind: Declared = "read" if value.strip().lower() == "read" else "write"
        return kind, f"{key}: {value.strip()}"
    return None, None


def _annotations(value: Any) -> Declaration:
    if not isinstance(value, dict):
        return None, None
    read_only = value.get("readOnlyHint")
    if isinstance(read_only, bool):
        return ("read" if read_only else "write"), f"annotations.readOnlyHint: {str(read_only).lower()}"
    if value.get("destructiveHint") is True:
        return "write", "annotations.destructiveHint: true"
    return None, None


def _beside(node: dict[str, Any]) -> Declaration:
    found = _typed(node.get("tool_type"), "tool_type")
    if found[0] is not None:
        return found
    mutates = node.get("mutates_state")
    if isinstance(mutates, bool):
        return ("write" if mutates else "read"), f"mutates_state: {str(mutates).lower()}"
    return None, None


def tool_declared(tool: dict[str, Any], wrapper: dict[str, Any] | None = None) -> Declaration:
    """What a function / MCP tool declares: its own `type`, its annotations, the keys beside it."""
    fn = tool.get("function") if isinstance(tool.get("function"), dict) else None
    for node in (tool, fn):
        if node is None:
            continue
        for step in (
            _typed(node.get("type"), "type"),
            _annotations(node.get("annotations")),
            _beside(node),
        ):
            if step[0] is not None:
                return step
    if wrapper is not None:
        return _beside(wrapper)
    return None, None
