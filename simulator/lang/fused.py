"""Arithmetic and comparisons on references and numbers, fused into one generated function.

The fused function handles only plain numbers in range; anything else (a null, a text, a bool, a
missing key, an overflow) hands the whole expression to the general closures, so values and
errors are theirs. Only pure sub-expressions are fused. Operators are known by identity, so one
that a test registers in their place is compiled the general way.
Design notes: docs/design/engine.md.
"""

from __future__ import annotations

import sys
from typing import Any

from .errors import EvalError
from .generated import define
from .nodes import Call, Literal, Node, Ref
from .registry import OPERATORS, Compiled
from .values import LIMIT, whole

_M = sys.float_info.max
#: what Python raises when an operator meets values it cannot work on (the values' fault)
UNGUARDED = (ArithmeticError, ValueError, TypeError, LookupError)
_SYMBOL = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_FALLBACK = "return general(env)"


class _NotFused(Exception):
    """This node is not of the plain kinds fused here."""


_KNOWN: dict[Any, str] = {}  # operator function -> its kind; filled on first use


def _known() -> dict[Any, str]:
    if not _KNOWN:  # (imported here: the operators register in docs order, lazy ones first)
        from . import ops

        _KNOWN.update({ops._add: "add", ops._sub: "sub", ops._mul: "mul", ops._round: "round"})
        _KNOWN.update({fn: name for name, fn in ops.COMPARISONS.items()})
    return _KNOWN


def _kind(node: Call) -> str | None:
    op = OPERATORS.get(node.op)
    return None if op is None or op.fn is None else _known().get(op.fn)


class _Source:
    """The body of a fused function, built node by node; each value in a local `vN`."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def local(self, expression: str) -> str:
        name = f"v{self.count}"
        self.count += 1
        self.lines.append(f"{name} = {expression}")
        return name

    def check(self, condition: str) -> None:
        self.lines.append(f"if {condition}: {_FALLBACK}")

    def number(self, name: str) -> None:
        """Fall back unless `name` is what `values.num` passes as it is: an int or a finite float."""
        self.check(f"type({name}) is not int and (type({name}) is not float or not -_M <= {name} <= _M)")

    def ranged(self, name: str) -> None:
        """Fall back unless `name` is what `values.ranged` passes: a finite float, an int in range."""
        self.check(
            f"not (type({name}) is float and -_M <= {name} <= _M or type({name}) is int and -_L <= {name} <= _L)"
        )

    def operand(self, node: Node) -> str:
        """A number (an expression of the source): a literal, a reference, or an arithmetic call."""
        if isinstance(node, Literal):
            value = node.value
            if type(value) is int or type(value) is float and -_M <= value <= _M:
                return f"({value!r})"
            raise _NotFused
        if isinstance(node, Ref):
            if len(node.rest) > 1:
                raise _NotFused
            name = self.local(f"env.get({node.head!r})")
            if node.rest:
                self.check(f"type({name}) is not dict")
                self.lines.append(f"{name} = {name}.get({node.rest[0]!r})")
            self.number(name)
            return name
        if isinstance(node, Call) and _kind(node) in ("add", "sub", "mul", "round"):
            return self.call(node)
        raise _NotFused

    def call(self, node: Call) -> str:
        kind = _kind(node)
        args = node.args
        if kind in ("add", "mul") and args:
            values = [self.operand(arg) for arg in args]
            if kind == "add":  # `total = 0; total += v` for each, checked at the end
                total = self.local(" + ".join(["0", *values]))
                self.ranged(total)
                return total
            total = "1"
            for value in values:  # `total = ranged(total * v)` for each
                total = self.local(f"{total} * {value}")
                self.ranged(total)
            return total
        if kind == "sub" and len(args) == 2:
            a, b = self.operand(args[0]), self.operand(args[1])
            result = self.local(f"{a} - {b}")
            self.ranged(result)
            return result
        if kind == "round" and len(args) in (1, 2):
            digits = 0
            if len(args) == 2:
                if not isinstance(args[1], Literal):
                    raise _NotFused
                try:
                    digits = whole(args[1].value, "round")
                except EvalError:
                    raise _NotFused from None
            a = self.operand(args[0])
            return self.local(f"round({a}, {max(-400, min(digits, 400))})")
        if kind in _SYMBOL and len(args) == 2:
            a, b = self.operand(args[0]), self.operand(args[1])
            return self.local(f"{a} {_SYMBOL[kind]} {b}")
        raise _NotFused


def fuse(node: Node, general: Compiled) -> Compiled | None:
    """`node` (already compiled to `general`) as one generated function, or None when it is not
    arithmetic or an ordering comparison on references and numbers."""
    if not isinstance(node, Call) or _kind(node) is None:
        return None
    source = _Source()
    try:
        result = source.call(node)
    except _NotFused:
        return None
    # a Python error on these values (an int too large for a float) is the general closures' to word
    body = "".join(f"        {line}\n" for line in (*source.lines, f"return {result}"))
    text = f"def fused(env):\n    try:\n{body}    except UNGUARDED:\n        {_FALLBACK}\n"
    namespace: dict[str, Any] = {"general": general, "_M": _M, "_L": LIMIT, "UNGUARDED": UNGUARDED}
    fused: Compiled = define(text, "<fused expression>", namespace, "fused")
    return fused
