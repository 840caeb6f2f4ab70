"""The expression language as one typed tree, with one operator registry.

`parse` turns an expression (and `parse_template` a template string) into a tree of nodes;
`compile_node` turns a tree into closures, checking names against a `Scope`. Analyses
(`free_names`, `arguments_read`, `uses_now`, `deprecations`, `constant`, `walk`) read the tree.
Operators live in `registry.OPERATORS`; `register` adds one, and the parser, the compiler and the
docs all read the registry. Usage and design notes: docs/design/engine.md.
"""

from __future__ import annotations

from . import lazy, ops  # noqa: F401  (registers the operators)
from .analysis import (
    Deprecation,
    argument_name,
    arguments_read,
    constant,
    deprecations,
    fields_read,
    free_names,
    operators_used,
    uses_now,
)
from .compile import Scope, compile_node, compile_reference, compile_template, compile_template_node
from .errors import EvalError, ExprError
from .nodes import Binder, Call, ListNode, Literal, Node, ObjectNode, Ref, Slot, Template, children, walk
from .parse import parse, parse_ref, parse_template
from .registry import ALIASES, OPERATORS, Compiled, Env, NullPolicy, Operator, lookup, register, unregister

__all__ = [
    "ALIASES",
    "OPERATORS",
    "Binder",
    "Call",
    "Compiled",
    "Deprecation",
    "Env",
    "EvalError",
    "ExprError",
    "ListNode",
    "Literal",
    "Node",
    "NullPolicy",
    "ObjectNode",
    "Operator",
    "Ref",
    "Scope",
    "Slot",
    "Template",
    "argument_name",
    "arguments_read",
    "children",
    "compile_node",
    "compile_reference",
    "compile_template",
    "compile_template_node",
    "constant",
    "deprecations",
    "fields_read",
    "free_names",
    "lookup",
    "operators_used",
    "parse",
    "parse_ref",
    "parse_template",
    "register",
    "unregister",
    "uses_now",
    "walk",
]
