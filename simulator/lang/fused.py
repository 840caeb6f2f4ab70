"""Arithmetic and comparisons on references and numbers, fused into one generated function.

The fused function handles only plain numbers in range; anything else (a null, a text, a bool, a
missing key, an overflow) hands the whole expression to the general closures, so values and
errors are theirs. Only pure sub-expressions are fused. Operators are known by identity, so one
that a test registers in their place is compiled the general way.
Design notes: docs/design/engine.md.
"""

from __future__ import annotations

from typing import Any

from .errors import EvalError
from .generated import Source
from .nodes import Call, Literal, Node, Ref
from .numbers import finite_source, in_range_source, is_number
from .registry import OPERATORS, Compiled
from .values import whole

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


def _number(src: Source, name: str) -> None:
    """Fall back unless `name` is what `values.num` passes as it is: an int or a finite float."""
    src.add(f"if type({name}) is not int and not ({finite_source(src, name)}): {_FALLBACK}")


def _ranged(src: Source, name: str) -> None:
    """Fall back unless `name` is what `values.ranged` passes: a finite float, an int in range."""
    src.add(f"if not ({in_range_source(src, name)}): {_FALLBACK}")


def _local(src: Source, expression: str) -> str:
    name = src.temp("v")
    src.add(f"{name} = {expression}")
    return name


def _operand(src: Source, node: Node) -> str:
    """A number (an expression of the source): a literal, a reference, or an arithmetic call."""
    if isinstance(node, Literal):
        if is_number(node.value):
            return src.bind(node.value, "k")
        raise _NotFused
    if isinstance(node, Ref):
        if len(node.rest) > 1:
            raise _NotFused
        name = _local(src, f"env.get({src.bind(node.head, 'h')})")
        if node.rest:
            src.add(f"if type({name}) is not dict: {_FALLBACK}")
            src.add(f"{name} = {name}.get({src.bind(node.rest[0], 'h')})")
        _number(src, name)
        return name
    if isinstance(node, Call) and _kind(node) in ("add", "sub", "mul", "round"):
        return _call(src, node)
    raise _NotFused


def _call(src: Source, node: Call) -> str:
    kind = _kind(node)
    args = node.args
    if kind in ("add", "mul") and args:
        values = [_operand(src, arg) for arg in args]
        if kind == "add":  # `total = 0; total += v` for each, checked at the end
            total = _local(src, " + ".join(["0", *values]))
            _ranged(src, total)
            return total
        total = "1"
        for value in values:  # `total = ranged(total * v)` for each
            total = _local(src, f"{total} * {value}")
            _ranged(src, total)
        return total
    if kind == "sub" and len(args) == 2:
        a, b = _operand(src, args[0]), _operand(src, args[1])
        result = _local(src, f"{a} - {b}")
        _ranged(src, result)
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
        a = _operand(src, args[0])
        return _local(src, f"round({a}, {src.integer(max(-400, min(digits, 400)))})")
    if kind in _SYMBOL and len(args) == 2:
        a, b = _operand(src, args[0]), _operand(src, args[1])
        return _local(src, f"{a} {_SYMBOL[kind]} {b}")
    raise _NotFused


def fuse(node: Node, general: Compiled) -> Compiled | None:
    """`node` (already compiled to `general`) as one generated function, or None when it is not
    arithmetic or an ordering comparison on references and numbers."""
    if not isinstance(node, Call) or _kind(node) is None:
        return None
    src = Source(general=general, UNGUARDED=UNGUARDED)
    with src.block("def fused(env):"):
        # a Python error on these values (an int too large for a float) is the general closures' to word
        with src.block("try:"):
            try:
                result = _call(src, node)
            except _NotFused:
                return None
            src.add(f"return {result}")
        with src.block("except UNGUARDED:"):
            src.add(_FALLBACK)
    fused: Compiled = src.define("fused", "<fused expression>")
    return fused
