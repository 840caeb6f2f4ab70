"""Typed nodes -> Python closures of the environment (`compile_node`), checking names in scope.

Compiled once, when the domain loads; the closures are the same shapes the evaluator has always
run (a reference is a dict lookup, an operator one call), so the tree costs nothing per call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .errors import EvalError, ExprError
from .fused import UNGUARDED, fuse
from .generated import Source
from .nodes import Binder, Call, ListNode, Literal, Node, ObjectNode, Ref, Template
from .parse import parse_template
from .registry import OPERATORS, VARIABLE, Compiled, Env
from .values import json_type, show


class Scope:
    """Names visible to an expression: argument names and bound names. `generated`: whether
    expressions compile to generated functions where they can (fused arithmetic, displays), or
    only to plain closures (the reference path, `load_domain(..., generated=False)`)."""

    def __init__(self, args: Iterable[str] | None, names: Iterable[str] = (), generated: bool = True):
        self.args = None if args is None else set(args)
        self.names = set(names) | {"args", "now"}
        self.generated = generated

    def child(self, *names: str) -> Scope:
        scope = Scope(self.args, self.names, self.generated)
        scope.names.update(n for n in names if n)
        return scope

    def add(self, name: str | None) -> None:
        if name:
            self.names.add(name)


_INDEX = re.compile(r"-?[0-9]+", re.ASCII)


def _walk(value: Any, parts: tuple[str, ...] | list[str]) -> Any:
    for part in parts:
        if value is None:
            return None
        if isinstance(value, list):
            if _INDEX.fullmatch(part):
                i = int(part)
                value = value[i] if -len(value) <= i < len(value) else None
            else:
                value = [_walk(v, [part]) for v in value]
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


def check_ref(ref: Ref, scope: Scope) -> None:
    """ExprError when a reference names nothing in scope (or an argument the tool does not take)."""
    head, rest = ref.head, ref.rest
    if head not in scope.names:
        raise ExprError(
            f"unknown name ${head} (bound names here: {', '.join(sorted(scope.names))})", ref.path
        )
    if head == "args" and rest and scope.args is not None and rest[0] not in scope.args:
        raise ExprError(f"$args.{rest[0]} is not a property of the tool's input_schema", ref.path)


def shape_of(fn: Any) -> tuple[Any, ...] | None:
    """What a compiled closure is, when it is plain: `("literal", value)` (it returns `value`, the
    same object each time) or `("ref", head, rest)` (the reference `$head.rest...`); else None.
    `simulator.codegen.emit` writes these out as source."""
    return getattr(fn, "_toolgym_shape", None)


def _shaped(fn: Compiled, *shape: Any) -> Compiled:
    fn._toolgym_shape = shape  # type: ignore[attr-defined]
    return fn


def compile_reference(ref: Ref, scope: Scope) -> Compiled:
    check_ref(ref, scope)
    head, rest = ref.head, ref.rest
    if not rest:
        return _shaped(lambda env: env.get(head), "ref", head, ())
    if len(rest) == 1:
        (key,) = rest

        def one(env: Env) -> Any:
            value = env.get(head)
            if isinstance(value, dict):
                return value.get(key)
            return _walk(value, rest)

        return _shaped(one, "ref", head, rest)
    return lambda env: _walk(env.get(head), rest)


def _formatted(ref: Compiled, spec: str) -> Compiled:
    """`{x:.2f}`: a Python format spec applied to the value (the raw value when it does not apply)."""

    def apply(env: Env) -> Any:
        value = ref(env)
        try:
            return format(value, spec)
        except (TypeError, ValueError):
            return value

    return apply


def compile_template_node(node: Template, scope: Scope) -> Callable[[Env], str]:
    pieces: list[str | Compiled] = []
    for piece in node.pieces:
        if isinstance(piece, str):
            pieces.append(piece)
        else:
            ref = compile_reference(piece.ref, scope)
            pieces.append(_formatted(ref, piece.spec) if piece.spec else ref)
    if all(isinstance(p, str) for p in pieces):
        text = "".join(p for p in pieces if isinstance(p, str))
        return lambda env: text
    return lambda env: "".join(p if isinstance(p, str) else show(p(env)) for p in pieces)


def compile_template(template: str, scope: Scope) -> Callable[[Env], str]:
    """`"No order {args.order_id}"` -> a function of the environment. `{{`/`}}` are literal braces."""
    return compile_template_node(parse_template(template), scope)


def compile_node(node: Node, scope: Scope) -> Compiled:
    """Compile a parsed expression into a function of the environment, checking names in scope."""
    if isinstance(node, Literal):
        value = node.value
        return _shaped(lambda env: value, "literal", value)
    if isinstance(node, Ref):
        return compile_reference(node, scope)
    if isinstance(node, Call):
        general = _compile_call(node, scope)
        return (fuse(node, general) if scope.generated else None) or general
    if isinstance(node, ListNode):
        if all(_scalar(item) for item in node.items):  # `[a, b]` of plain values: a new list of them
            values = tuple(item.value for item in node.items if isinstance(item, Literal))
            return lambda env: list(values)
        items = [compile_node(item, scope) for item in node.items]
        return _display("[", [(None, fn) for fn in items], "]") if scope.generated else _list_of(items)
    if isinstance(node, ObjectNode):
        fields = [(k, compile_node(v, scope)) for k, v in node.fields]
        return _display("{", [*fields], "}") if scope.generated else _object_of(fields)
    if isinstance(node, Template):
        return compile_template_node(node, scope)
    if isinstance(node, Binder):
        hook = OPERATORS[node.op].compile
        assert hook is not None
        return hook(node, scope, compile_node)
    raise ExprError(f"cannot compile node {node!r}", node.path)


def _display(opening: str, items: list[tuple[str | None, Compiled]], closing: str) -> Compiled:
    """A list (`[f0(env), ...]`) or an object (`{k0: f0(env), ...}`) as one generated function of
    the environment, each item evaluated in order."""
    src = Source()
    parts = []
    for key, fn in items:
        call = f"{src.bind(fn, 'f')}(env)"
        parts.append(call if key is None else f"{src.bind(key, 'k')}: {call}")
    with src.block("def display(env):"):
        src.add(f"return {opening}{', '.join(parts)}{closing}")
    display: Compiled = src.define("display", "<display>")
    return display


def _list_of(items: list[Compiled]) -> Compiled:
    """`_display` of a list, as a plain closure (the reference path)."""
    return lambda env: [fn(env) for fn in items]


def _object_of(fields: list[tuple[str, Compiled]]) -> Compiled:
    """`_display` of an object, as a plain closure (the reference path)."""
    return lambda env: {key: fn(env) for key, fn in fields}


def operator_error(name: str, exc: Exception, values: Iterable[Any]) -> EvalError:
    """An operator's failure on these values, worded for the agent (no Python internals)."""
    if isinstance(exc, ZeroDivisionError):
        return EvalError(f"{name}: cannot divide by zero")
    if isinstance(exc, OverflowError):
        return EvalError(f"{name}: a number is out of range (overflow)")
    kinds = ", ".join(json_type(v) for v in values)
    return EvalError(f"{name}: cannot work on these values ({kinds})")


def _scalar(node: Node) -> bool:
    """A literal null, boolean, number or text: a value nothing can change, so it can be shared."""
    return isinstance(node, Literal) and (node.value is None or type(node.value) in (bool, int, float, str))


@dataclass(frozen=True)
class Specialized:
    """An eager call whose operands are all constants but one (at `at`): `fn` of that operand
    does what the operator does (`Operator.specialize`)."""

    fn: Callable[[Any], Any]
    at: int
    values: tuple[Any, ...]  # the constants, `VARIABLE` at `at`
    name: str  # the operator as written

    def error(self, exc: Exception, x: Any) -> EvalError:
        """The agent's error for `fn` failing on `x` (what the operator's failure would say)."""
        shown = list(self.values)
        shown[self.at] = x
        return operator_error(self.name, exc, shown)


def _data(node: Node) -> tuple[bool, Any]:
    """`(True, value)` for an operand written as data (a literal, or a list of them), else `(False, None)`."""
    if isinstance(node, Literal):
        return True, node.value
    if isinstance(node, ListNode):
        items = [_data(item) for item in node.items]
        if all(fixed for fixed, _ in items):
            return True, [value for _, value in items]
    return False, None


def specialized(node: Node) -> Specialized | None:
    """The call as a function of its one variable operand, when its operator specialises on constants."""
    if not isinstance(node, Call):
        return None
    op = OPERATORS[node.op]
    if op.fn is None or op.specialize is None:
        return None
    known = [_data(arg) for arg in node.args]
    variable = [i for i, (fixed, _) in enumerate(known) if not fixed]
    if len(variable) != 1:
        return None
    values = tuple(VARIABLE if i in variable else value for i, (_, value) in enumerate(known))
    special = op.specialize(values)
    return None if special is None else Specialized(special, variable[0], values, node.name)


def _specialized(node: Call, scope: Scope, special: Specialized) -> Compiled:
    a, fn, error = compile_node(node.args[special.at], scope), special.fn, special.error

    def one(env: Env) -> Any:
        x = a(env)
        try:
            return fn(x)
        except UNGUARDED as exc:
            raise error(exc, x) from None

    return one


def _compile_call(node: Call, scope: Scope) -> Compiled:
    op = OPERATORS[node.op]
    if op.compile is not None:
        return op.compile(node, scope, compile_node)
    fn, name = op.fn, node.name
    assert fn is not None
    special = specialized(node)
    if special is not None:
        return _specialized(node, scope, special)
    operands = [compile_node(arg, scope) for arg in node.args]
    if len(operands) == 1:
        (a,) = operands

        def one(env: Env) -> Any:
            x = a(env)
            try:
                return fn(x)
            except UNGUARDED as exc:
                raise operator_error(name, exc, (x,)) from None

        return one
    last = node.args[-1] if node.args else None
    if len(operands) == 2 and isinstance(last, Literal) and _scalar(last):  # `[x, "text"]`: no call for it
        a, y = operands[0], last.value

        def two_literal(env: Env) -> Any:
            x = a(env)
            try:
                return fn(x, y)
            except UNGUARDED as exc:
                raise operator_error(name, exc, (x, y)) from None

        return two_literal
    if len(operands) == 2:
        a, b = operands

        def two(env: Env) -> Any:
            x, y = a(env), b(env)
            try:
                return fn(x, y)
            except UNGUARDED as exc:
                raise operator_error(name, exc, (x, y)) from None

        return two

    def many(env: Env) -> Any:
        values = [f(env) for f in operands]
        try:
            return fn(*values)
        except UNGUARDED as exc:
            raise operator_error(name, exc, values) from None

    return many
