"""Expressions of the operation language: the names other modules import, over `simulator.lang`.

An expression is a literal, a `$reference` (`$args.x`, `$name.col`, `$now`), a list of
expressions, or a one-key mapping naming an operator (`add`, `eq`, `object`, ...). It is parsed
once into a typed tree (`simulator.lang.parse`) and compiled into Python closures; compiling
checks every reference against the names in scope, so a typo is a load-time problem, not a
runtime surprise. Evaluation never builds SQL: values reach the database only as bound parameters.
"""

from __future__ import annotations

from collections.abc import Iterator, Set
from typing import Any

from . import (
    Compiled,
    Env,
    EvalError,
    ExprError,
    Scope,
    compile_node,
    compile_reference,
    parse,
    parse_ref,
)
from . import analysis as _analysis
from . import compile_template as compile_template
from .registry import ALIASES
from .registry import OPERATORS as _REGISTRY
from .values import brief

__all__ = [
    "OPERATORS",
    "Compiled",
    "Env",
    "EvalError",
    "ExprError",
    "Scope",
    "argument_name",
    "brief",
    "compile_expr",
    "compile_ref",
    "compile_template",
]


class _OperatorNames(Set[str]):
    """Every operator name the language knows (canonical and old spellings), read live from the registry."""

    def __contains__(self, name: object) -> bool:
        return name in _REGISTRY or name in ALIASES

    def __iter__(self) -> Iterator[str]:
        yield from _REGISTRY
        yield from ALIASES

    def __len__(self) -> int:
        return len(_REGISTRY) + len(ALIASES)


OPERATORS: Set[str] = _OperatorNames()


def compile_expr(expr: Any, scope: Scope) -> Compiled:
    """Compile an expression into a function of the environment, checking names in scope."""
    return compile_node(parse(expr), scope)


def compile_ref(ref: str, scope: Scope) -> Compiled:
    """Compile `$name.path.to.value` (without the `$`)."""
    return compile_reference(parse_ref(ref), scope)


def argument_name(expr: Any) -> str | None:
    """The one argument an expression reads (`$args.NAME` anywhere inside it), if exactly one.

    Errors about a value name it in the agent's words: "min_amount is out of range".
    """
    try:
        node = parse(expr)
    except ExprError:
        return None
    return _analysis.argument_name(node)
