"""A call's arguments before its tool reads them: refused when nested deeper than `MAX_NESTING`
(and recorded with the excess emptied), and a schema's errors said in a bounded message.
"""

from __future__ import annotations

from typing import Any

from ..codegen.fastschema import brief
from ..errors import clip

_SHOWN_ERRORS = 10  # schema errors a message lists
_ERROR_CHARS = 600  # characters one listed error may take (values in it are quoted by `brief`)

#: The deepest an argument's lists and objects may nest (the arguments object is level 0).
MAX_NESTING = 64
_TOO_DEEP = f"a value is nested more than {MAX_NESTING} levels deep"


def shape_problem(args: dict[str, Any]) -> str | None:
    """What makes arguments unusable before any check reads them: nesting deeper than `MAX_NESTING`
    (text that is not valid Unicode is the engine's to name, at its argument); None when there is none."""
    stack: list[tuple[Any, int]] = [(args, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_NESTING:
            return _TOO_DEEP
        for value in item.values() if isinstance(item, dict) else item:
            if isinstance(value, dict | list):
                stack.append((value, depth + 1))
    return None


def _clip_nesting(value: Any, depth: int = 0) -> Any:
    """`value` with its lists and objects below `MAX_NESTING` + 1 levels emptied (what a record of a
    call refused for its nesting holds: still too deep, and writable)."""
    if isinstance(value, dict):
        return {} if depth > MAX_NESTING else {k: _clip_nesting(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [] if depth > MAX_NESTING else [_clip_nesting(v, depth + 1) for v in value]
    return value


def describe_schema_errors(tool: str, errors: list[Any]) -> str:
    """What is wrong with the arguments, quoting at most a bounded prefix of any value."""
    parts = []
    ordered = sorted(errors, key=lambda e: [str(p) for p in e.absolute_path])
    for err in ordered[:_SHOWN_ERRORS]:
        message = err.message
        if len(message) > _ERROR_CHARS:
            message = message.replace(repr(err.instance), brief(err.instance))
        path = clip(".".join(str(p) for p in err.absolute_path), 200)
        parts.append(clip(f"{path}: {message}" if path else message, _ERROR_CHARS))
    if len(ordered) > _SHOWN_ERRORS:
        parts.append(f"and {len(ordered) - _SHOWN_ERRORS} more problem(s)")
    return f"Invalid arguments for {tool}: " + "; ".join(parts)
