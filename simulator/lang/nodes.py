"""Typed nodes of an expression, and the one walker every analysis uses.

Each node knows its `path` inside the expression as written (`""` for the root, `add[1]`,
`object.total`, `map.to`), so problems found on the tree name where they are.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Node:
    path: str = field(default="", kw_only=True)


@dataclass(frozen=True, slots=True)
class Literal(Node):
    """A constant: a number, boolean, null or plain string, `$$`-escaped text, or `literal: ANY`."""

    value: Any
    spelled: str = "plain"  # "plain", "escaped" ($$...) or "literal" (the operator)


@dataclass(frozen=True, slots=True)
class Ref(Node):
    """`$head.rest...`: an argument (`$args.x`), a bound name, `$now`."""

    head: str
    rest: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return ".".join((self.head, *self.rest))


@dataclass(frozen=True, slots=True)
class ListNode(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Call(Node):
    """An operator applied to operand expressions (`op` canonical, `spelled` as written)."""

    op: str
    args: tuple[Node, ...]
    spelled: str = ""

    @property
    def name(self) -> str:
        return self.spelled or self.op


@dataclass(frozen=True, slots=True)
class ObjectNode(Node):
    """`object: {key: expr}`."""

    fields: tuple[tuple[str, Node], ...]


@dataclass(frozen=True, slots=True)
class Slot:
    """`{ref}` or `{ref:spec}` inside a template."""

    ref: Ref
    spec: str | None = None


@dataclass(frozen=True, slots=True)
class Template(Node):
    """`format: "text {args.x:.2f}"` (and every template string of a domain)."""

    pieces: tuple[str | Slot, ...]

    @property
    def refs(self) -> tuple[Ref, ...]:
        return tuple(p.ref for p in self.pieces if isinstance(p, Slot))


@dataclass(frozen=True, slots=True)
class Binder(Node):
    """`map: {over, as, to, index?}` / `filter: {over, as, where, index?}`: names bound in `body` only."""

    op: str
    over: Node
    var: str
    body: Node
    index: str | None = None

    @property
    def bound(self) -> tuple[str, ...]:
        return (self.var, self.index) if self.index else (self.var,)


def children(node: Node) -> Iterator[Node]:
    """The direct sub-expressions of a node."""
    if isinstance(node, ListNode):
        yield from node.items
    elif isinstance(node, Call):
        yield from node.args
    elif isinstance(node, ObjectNode):
        for _, value in node.fields:
            yield value
    elif isinstance(node, Template):
        yield from node.refs
    elif isinstance(node, Binder):
        yield node.over
        yield node.body


def walk(node: Node, bound: frozenset[str] = frozenset()) -> Iterator[tuple[Node, frozenset[str]]]:
    """Every node, depth first, with the names bound around it by enclosing `map`/`filter`."""
    stack: list[tuple[Node, frozenset[str]]] = [(node, bound)]
    while stack:
        current, names = stack.pop()
        yield current, names
        if isinstance(current, Binder):
            stack.append((current.body, names | set(current.bound)))
            stack.append((current.over, names))
        else:
            stack.extend((child, names) for child in reversed(list(children(current))))
