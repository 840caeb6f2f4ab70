"""Analyses of a parsed expression, all derived from the one walker (`nodes.walk`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import EvalError, ExprError
from .nodes import Call, Literal, Node, Ref, Template, walk
from .registry import OPERATORS


@dataclass(frozen=True)
class Deprecation:
    """An old spelling that still loads: where it is, as written, and its canonical name."""

    path: str
    old: str
    new: str

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"operator `{self.old}`{where} is an old spelling: write `{self.new}`"


def refs(node: Node, *, templates: bool = True) -> list[tuple[Ref, frozenset[str]]]:
    """Every reference with the names bound around it (template slots too, unless `templates=False`)."""
    found: list[tuple[Ref, frozenset[str]]] = []
    slots: set[int] = set()
    for current, bound in walk(node):
        if isinstance(current, Template) and not templates:
            slots.update(id(ref) for ref in current.refs)
        elif isinstance(current, Ref) and id(current) not in slots:
            found.append((current, bound))
    return found


def free_names(node: Node) -> set[str]:
    """Names the expression reads from its environment (`args`, `now`, bound step names)."""
    names = {ref.head for ref, bound in refs(node) if ref.head not in bound}
    if _argument_tests(node):
        names.add("args")
    return names


def _argument_tests(node: Node) -> set[str]:
    """Arguments named by `has: NAME` (a presence test reads the arguments, not a value)."""
    return {
        arg.value
        for current, _ in walk(node)
        if isinstance(current, Call) and current.op == "has" and len(current.args) == 1
        for arg in current.args
        if isinstance(arg, Literal) and isinstance(arg.value, str)
    }


def arguments_read(node: Node) -> set[str]:
    """Tool arguments the expression reads: `$args.NAME`, `{args.NAME}` and `has: NAME`."""
    names = {
        ref.rest[0] for ref, bound in refs(node) if ref.head == "args" and ref.rest and "args" not in bound
    }
    return names | _argument_tests(node)


def fields_read(node: Node, name: str) -> set[str] | None:
    """The fields of the bound name `name` the expression reads (`$name.FIELD...`, `{name.FIELD}`);
    None when it reads `$name` itself (the whole value). A `name` a binder rebinds inside is another
    value: its fields are counted too (more than are read: never fewer)."""
    fields: set[str] = set()
    for ref, _ in refs(node):
        if ref.head == name:
            if not ref.rest:
                return None
            fields.add(ref.rest[0])
    return fields


def argument_name(node: Node) -> str | None:
    """The one argument an expression reads as a value (`$args.NAME`, not in a template), if exactly one.

    Errors about a value name it in the agent's words: "min_amount is out of range".
    """
    names = {ref.rest[0] for ref, bound in refs(node, templates=False) if ref.head == "args" and ref.rest}
    return next(iter(names)) if len(names) == 1 else None


def uses_now(node: Node) -> bool:
    """True when the expression reads the simulated clock (`$now`, `{now}`)."""
    return "now" in free_names(node)


def deprecations(node: Node) -> list[Deprecation]:
    """Old operator spellings inside the expression (old -> new), in reading order."""
    return [
        Deprecation(current.path, current.spelled, current.op)
        for current, _ in walk(node)
        if isinstance(current, Call) and current.spelled and current.spelled != current.op
    ]


def operators_used(node: Node) -> set[str]:
    """Canonical names of the operators the expression applies."""
    from .nodes import Binder

    return {current.op for current, _ in walk(node) if isinstance(current, Call | Binder)}


def constant(node: Node) -> tuple[bool, Any]:
    """`(True, value)` when the expression reads nothing from its environment, else `(False, None)`.

    Literals and every expression of them (`add: [1, 2]`, `object: {a: 1}`) are constants; one that
    fails on its own values (`div: [1, 0]`) is not (it fails at call time, as the agent would see).
    """
    if isinstance(node, Literal):
        return True, node.value
    if free_names(node) or not all(
        OPERATORS[op].fn is not None or op in _PURE_LAZY for op in operators_used(node)
    ):
        return False, None
    from .compile import Scope, compile_node

    try:
        return True, compile_node(node, Scope(None, generated=False))({})  # (evaluated once)
    except (EvalError, ExprError):
        return False, None


#: lazy operators whose value depends only on their operands
_PURE_LAZY = frozenset({"and", "or", "if", "coalesce", "object", "format", "literal", "map", "filter"})
