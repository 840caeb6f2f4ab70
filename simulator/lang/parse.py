"""Raw YAML/JSON expressions -> typed nodes (`parse`), and template strings -> `Template`."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from .errors import ExprError
from .nodes import Call, ListNode, Literal, Node, Ref, Slot, Template
from .registry import OPERATORS, known_names, lookup

_TEMPLATE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_.-]*)(?::([^{}]*))?\}")


def at(path: str, part: str | int) -> str:
    """The path of a sub-expression: `add` + 1 -> `add[1]`, `map` + `to` -> `map.to`."""
    if isinstance(part, int):
        return f"{path}[{part}]"
    return f"{path}.{part}" if path else part


def parse_ref(text: str, path: str = "") -> Ref:
    """`args.x.y` (without the `$`) -> Ref."""
    head, *rest = text.split(".")
    return Ref(head, tuple(rest), path=path)


def parse(raw: Any, path: str = "") -> Node:
    """Parse an expression as written in a domain into typed nodes; ExprError names the path."""
    if isinstance(raw, str):
        if raw.startswith("$$"):
            return Literal(raw[1:], "escaped", path=path)
        if raw.startswith("$"):
            return parse_ref(raw[1:], path)
        return Literal(raw, path=path)
    if raw is None or isinstance(raw, bool | int | float):
        return Literal(raw, path=path)
    if isinstance(raw, list):
        return ListNode(tuple(parse(item, at(path, i)) for i, item in enumerate(raw)), path=path)
    if isinstance(raw, dict):
        if len(raw) != 1:
            raise ExprError(
                f"an operator mapping has exactly one key, got {sorted(raw)}; "
                "write literal objects as `object: {...}`",
                path,
            )
        ((name, operand),) = raw.items()
        return parse_call(str(name), operand, path)
    raise ExprError(f"cannot compile expression {raw!r}", path)


def parse_call(spelled: str, operand: Any, path: str) -> Node:
    op = lookup(spelled)
    here = at(path, spelled)
    if op is None:
        raise ExprError(f"unknown operator {spelled!r} (known: {', '.join(known_names())})", path)
    if op.parse is not None:
        return replace(op.parse(operand, here, parse), path=path)
    items = operand if isinstance(operand, list) else [operand]
    if op.arity is not None and len(items) != op.arity:
        raise ExprError(f"{spelled} takes {op.arity} operand(s), got {len(items)}", path)
    many = isinstance(operand, list)
    args = tuple(parse(item, at(here, i) if many else here) for i, item in enumerate(items))
    return Call(op.name, args, spelled if spelled != op.name else "", path=path)


def parse_template(text: str, path: str = "") -> Template:
    """`"No order {args.order_id}"` -> Template. `{{`/`}}` are literal braces; `{x:.2f}` a format spec."""
    pieces: list[str | Slot] = []
    last = 0
    for match in _TEMPLATE.finditer(text):
        pieces.append(text[last : match.start()])
        token = match.group(0)
        if token in ("{{", "}}"):
            pieces.append(token[0])
        else:
            spec = match.group(2) or None
            if spec is not None:
                _check_spec(spec, path)
            pieces.append(Slot(parse_ref(match.group(1), path), spec))
        last = match.end()
    pieces.append(text[last:])
    merged: list[str | Slot] = []
    for piece in pieces:
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] += piece
        elif piece != "":
            merged.append(piece)
    return Template(tuple(merged), path=path)


def _check_spec(spec: str, path: str) -> None:
    try:
        format(1.5, spec)
    except ValueError:
        try:
            format("x", spec)
        except ValueError as exc:
            raise ExprError(f"bad format spec {spec!r} in template", path) from exc


__all__ = ["OPERATORS", "at", "parse", "parse_ref", "parse_template"]
