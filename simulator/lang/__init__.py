"""The expression language as one typed tree, with one operator registry.

Usage::

    from simulator.lang import parse, compile_node, Scope, free_names, arguments_read, uses_now
    from simulator.lang import deprecations, constant, walk

    node = parse({"add": ["$args.amount", 1]})  # ExprError(.message, .path) when malformed
    free_names(node)          # {"args"}: names read from the environment (bound step names, now)
    arguments_read(node)      # {"amount"}: $args.NAME, {args.NAME} in templates, `has: NAME`
    uses_now(node)            # False: $now / {now} anywhere (not shadowed by map/filter)
    deprecations(node)        # [Deprecation(path, old, new)]: old operator spellings (`get` -> `get_key`)
    constant(node)            # (False, None); `parse({"add": [1, 2]})` -> (True, 3)
    for sub, bound in walk(node): ...  # every node, with names bound by enclosing map/filter
    fn = compile_node(node, Scope(["amount"]))  # checks names in scope; fn({"args": {"amount": 2}}) == 3

`parse_template(text)` parses template strings (`"No order {args.id}"`) into the same tree
(`Template` node). Nodes: `Literal`, `Ref`, `ListNode`, `Call` (operator + operands), `ObjectNode`,
`Template`, `Binder` (map/filter); each carries its `path` inside the expression.

Operators live in `registry.OPERATORS` (name -> `Operator`: category, signature, arity, null policy,
doc line, function or parse/compile hooks, old spellings). `register(Operator(...))` adds one: the
parser, compiler, `docs.operator_table()` and `docs.expr_schema()` all read the registry.

`compile_node` gives closures; arithmetic and ordering comparisons on references and numbers are
fused into one generated function (`fused.py`) that falls back to those closures on anything but
plain numbers, so values and errors are the closures'.
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
