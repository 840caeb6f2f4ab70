"""The operator registry: every operator of the expression language, described once.

Each `Operator` carries its name, category, arity, signature and doc line, its null policy, and
how it runs: an eager `fn` applied to its evaluated operands, or a `compile` hook for the lazy
ones (`and`, `or`, `if`, `coalesce`, `map`, `filter`, `has`) and a `parse` hook for those whose operand
is not a list of expressions (`literal`, `object`, `format`, `map`, `filter`, `has`). The parser, the
compiler, the docs table (`simulator.lang.docs`) and the JSON Schema all read this table, so an
operator registered here is known everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .compile import Scope
    from .nodes import Node

Env = dict[str, Any]
Compiled = Callable[[Env], Any]
#: `parse(raw, path, parse_expr) -> Node` for operators whose operand is not a list of expressions
ParseHook = Callable[[Any, str, Callable[[Any, str], "Node"]], "Node"]
#: `compile(node, scope, compile_node) -> Compiled` for operators that evaluate lazily
CompileHook = Callable[["Node", "Scope", Callable[["Node", "Scope"], Compiled]], Compiled]


class Category(StrEnum):
    """Families of operators, in the order the docs table lists them."""

    ARITHMETIC = "arithmetic"
    COMPARISON = "comparison"
    LOGIC = "logic"
    COLLECTIONS = "collections"
    OBJECTS = "objects"
    STRINGS = "strings"
    ORDERING = "ordering"
    MAPPING = "mapping"
    TEXT_NUMBERS = "numbers from text"
    DATETIMES = "date-times"
    CHOICE = "choice"
    CONSTANTS = "constants"


class NullPolicy(StrEnum):
    """What an operator does when its subject (first operand) is null. One rule per family:

    arithmetic and date-time operators refuse it; tests are false; list operators read it as an
    empty list; text and shape transforms pass it through; aggregates skip nulls; equality,
    presence and choice treat null as an ordinary value. Equal families, equal rule.
    """

    ERROR = "error"  # a tool error naming the operator
    FALSE = "false"  # the test is false
    EMPTY = "empty"  # read as empty (an empty list, or an empty object)
    PROPAGATE = "propagate"  # the result is null
    SKIP = "skip"  # nulls among the operands are ignored
    VALUE = "value"  # null is an ordinary value


@dataclass(frozen=True)
class Operator:
    """One operator: how it is written, documented, and run."""

    name: str
    category: str  # a `Category` (another name sorts after them in the docs)
    signature: str  # the operand as written in YAML, e.g. `[a, b]`, `list`, `{over, as, to}`
    doc: str
    null: NullPolicy
    fn: Callable[..., Any] | None = None  # eager: applied to the evaluated operands
    arity: int | None = None  # eager operand count (None: any number)
    parse: ParseHook | None = None
    compile: CompileHook | None = None
    #: JSON Schema of the operand (None: an expression, or a list of `arity` expressions)
    operand_schema: dict[str, Any] | None = None
    aliases: tuple[str, ...] = field(default=())  # old spellings that still load, reported deprecated
    #: eager operators only: given the operands that are constants (their values; `VARIABLE` at the
    #: place of the one operand computed per call), a function of that operand doing what `fn` does
    #: on these constants, errors included; or None (then `fn` runs). Compiled once, at load.
    specialize: Callable[[tuple[Any, ...]], Callable[[Any], Any] | None] | None = None

    def __post_init__(self) -> None:
        if (self.fn is None) == (self.compile is None and self.parse is None):
            raise ValueError(f"operator {self.name!r}: give either fn, or a parse/compile hook")


class _Variable:
    def __repr__(self) -> str:
        return "VARIABLE"


#: the place of the operand computed per call, in what `Operator.specialize` is given
VARIABLE: Any = _Variable()

#: canonical name -> operator (registration order is the docs order within a category)
OPERATORS: dict[str, Operator] = {}
#: old spelling -> canonical name
ALIASES: dict[str, str] = {}


def register(op: Operator) -> Operator:
    """Add an operator (and its old spellings); the parser, compiler, docs and schema see it."""
    for name in (op.name, *op.aliases):
        if name in OPERATORS or name in ALIASES:
            raise ValueError(f"operator {name!r} is already registered")
    OPERATORS[op.name] = op
    for alias in op.aliases:
        ALIASES[alias] = op.name
    return op


def unregister(name: str) -> None:
    """Remove an operator and its old spellings (tests that register their own use this)."""
    op = OPERATORS.pop(name)
    for alias in op.aliases:
        ALIASES.pop(alias, None)


def lookup(spelled: str) -> Operator | None:
    """The operator a name (canonical or old spelling) means, or None."""
    op = OPERATORS.get(spelled)
    if op is None and spelled in ALIASES:
        op = OPERATORS[ALIASES[spelled]]
    return op


def known_names() -> list[str]:
    """Every name that loads: canonical names and old spellings, sorted."""
    return sorted([*OPERATORS, *ALIASES])
