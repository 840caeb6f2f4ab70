"""Operators that do not simply evaluate a list of operands: their parse and compile hooks.

`literal`, `object`, `format`, `map`/`filter` and `has` have operands of their own shape (parse
hooks); `and`, `or`, `if`, `coalesce`, `map`/`filter` and `has` evaluate lazily (compile hooks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..runtime.budget import charge
from .compile import specialized
from .errors import ExprError
from .fused import UNGUARDED
from .nodes import Binder, Call, Literal, Node, ObjectNode, Ref
from .parse import at, parse_template
from .registry import Category, Compiled, CompileHook, Env, NullPolicy, Operator, register
from .values import seq

ParseExpr = Callable[[Any, str], Node]
CompileExpr = Callable[[Node, Any], Compiled]
_EXPR = {"$ref": "#/$defs/Expr"}


def _parse_literal(raw: Any, path: str, parse: ParseExpr) -> Node:
    return Literal(raw, "literal", path=path)


def _parse_object(raw: Any, path: str, parse: ParseExpr) -> Node:
    if not isinstance(raw, dict):
        raise ExprError("object: takes a mapping of key: expression", path)
    return ObjectNode(tuple((str(k), parse(v, at(path, str(k)))) for k, v in raw.items()), path=path)


def _parse_format(raw: Any, path: str, parse: ParseExpr) -> Node:
    if not isinstance(raw, str):
        raise ExprError("format: takes a template string", path)
    return parse_template(raw, path)


def _binder(name: str, body_key: str) -> Callable[[Any, str, ParseExpr], Node]:
    def parse_binder(raw: Any, path: str, parse: ParseExpr) -> Node:
        if (
            not isinstance(raw, dict)
            or not {"over", "as", body_key} <= set(raw)
            or set(raw) - {"over", "as", body_key, "index"}
        ):
            raise ExprError(
                f"{name} takes {{over: LIST, as: NAME, {body_key}: EXPR, index: NAME (optional)}}", path
            )
        var, index = raw["as"], raw.get("index")
        if not isinstance(var, str) or not var or index is not None and not isinstance(index, str):
            raise ExprError(f"{name}: `as` and `index` are names (text)", path)
        over = parse(raw["over"], at(path, "over"))
        body = parse(raw[body_key], at(path, body_key))
        return Binder(name, over, var, body, index or None)

    return parse_binder


def _compile_binder(node: Node, scope: Any, compile_node: CompileExpr) -> Compiled:
    assert isinstance(node, Binder)
    name, var, index = node.op, node.var, node.index
    over = compile_node(node.over, scope)
    body = compile_node(node.body, scope.child(var, index or ""))
    missing = object()
    keep_values = name == "map"

    special = specialized(node.body) if keep_values and not index else None
    operand = node.body.args[special.at] if special is not None and isinstance(node.body, Call) else None
    if special is not None and isinstance(operand, Ref) and operand.head == var and not operand.rest:
        # `map: {over, as: r, to: {pick: [$r, [keys]]}}`: the body is a function of the item alone
        fn, error = special.fn, special.error

        def map_known(env: Env) -> Any:
            items = over(env)
            if type(items) is not list:
                items = seq(items, name)
            charge(len(items))
            out = []
            try:
                for item in items:
                    out.append(fn(item))
            except UNGUARDED as exc:
                raise error(exc, item) from None
            return out

        return map_known

    if keep_values and not index:  # the common shape, `map: {over, as, to}`: one comprehension

        def map_items(env: Env) -> Any:
            items = over(env)
            if type(items) is not list:
                items = seq(items, name)
            charge(len(items))
            saved = env.get(var, missing)
            try:
                return [body(env) for env[var] in items]
            finally:
                if saved is missing:
                    env.pop(var, None)
                else:
                    env[var] = saved

        return map_items

    def apply(env: Env) -> Any:
        items = seq(over(env), name)
        charge(len(items))
        saved = env.get(var, missing), env.get(index, missing) if index else missing
        out = []
        try:
            for i, item in enumerate(items):
                env[var] = item
                if index:
                    env[index] = i
                value = body(env)
                if keep_values:
                    out.append(value)
                elif value:
                    out.append(item)
        finally:
            for key, old in ((var, saved[0]), (index, saved[1])):
                if key and old is missing:
                    env.pop(key, None)
                elif key:
                    env[key] = old
        return out

    return apply


def _operands(node: Node, scope: Any, compile_node: CompileExpr) -> list[Compiled]:
    assert isinstance(node, Call)
    return [compile_node(arg, scope) for arg in node.args]


def _compile_and(node: Node, scope: Any, compile_node: CompileExpr) -> Compiled:
    ops = _operands(node, scope, compile_node)
    return lambda env: all(op(env) for op in ops)


def _compile_or(node: Node, scope: Any, compile_node: CompileExpr) -> Compiled:
    ops = _operands(node, scope, compile_node)
    return lambda env: any(op(env) for op in ops)


def _compile_coalesce(node: Node, scope: Any, compile_node: CompileExpr) -> Compiled:
    ops = _operands(node, scope, compile_node)

    def coalesce(env: Env) -> Any:
        for op in ops:
            value = op(env)
            if value is not None:
                return value
        return None

    return coalesce


def _compile_if(node: Node, scope: Any, compile_node: CompileExpr) -> Compiled:
    cond, then, other = _operands(node, scope, compile_node)  # three: checked by the parser (arity)
    return lambda env: then(env) if cond(env) else other(env)


def _parse_has(raw: Any, path: str, parse: ParseExpr) -> Node:
    if isinstance(raw, str) and raw and not raw.startswith("$"):
        return Call("has", (Literal(raw, path=path),))
    if isinstance(raw, list) and len(raw) == 2:
        return Call("has", tuple(parse(item, at(path, i)) for i, item in enumerate(raw)))
    raise ExprError(
        "has takes an argument's name (`has: x`: was argument x given, even as null) "
        "or [object, key] (is the key present)",
        path,
    )


def _compile_has(node: Node, scope: Any, compile_node: CompileExpr) -> Compiled:
    assert isinstance(node, Call)
    if len(node.args) == 2:
        from .ops import _has_key

        obj, key = (compile_node(arg, scope) for arg in node.args)
        return lambda env: _has_key(obj(env), key(env))
    (arg,) = node.args
    assert isinstance(arg, Literal)
    name = arg.value
    if "args" not in scope.names:
        raise ExprError(
            f"has: {name}: there are no tool arguments here (a fragment sees only its parameters)", node.path
        )
    if scope.args is not None and name not in scope.args:
        raise ExprError(f"has: {name} is not a property of the tool's input_schema", node.path)
    return lambda env: name in (env.get("args") or ())


def _lazy(
    name: str,
    category: str,
    signature: str,
    doc: str,
    null: NullPolicy,
    *,
    parse: Any = None,
    compile: CompileHook | None = None,
    operand: dict[str, Any] | None = None,
    arity: int | None = None,
) -> None:
    hooks = {"parse": parse, "compile": compile, "operand_schema": operand}
    register(Operator(name, category, signature, doc, null, arity=arity, **hooks))


_lazy(
    "and",
    Category.LOGIC,
    "[a, b, ...]",
    "true when every operand is truthy (stops at the first falsy)",
    NullPolicy.VALUE,
    compile=_compile_and,
)
_lazy(
    "or",
    Category.LOGIC,
    "[a, b, ...]",
    "true when any operand is truthy (stops at the first truthy)",
    NullPolicy.VALUE,
    compile=_compile_or,
)
_lazy(
    "has",
    Category.LOGIC,
    "name or [obj, key]",
    "`has: x`: argument x was given (even as null); `has: [obj, key]`: the key is present",
    NullPolicy.FALSE,
    parse=_parse_has,
    compile=_compile_has,
    operand={
        "anyOf": [
            {"type": "string", "pattern": "^[^$]"},
            {"type": "array", "items": _EXPR, "minItems": 2, "maxItems": 2},
        ]
    },
)
_lazy(
    "object",
    Category.OBJECTS,
    "{key: expr, ...}",
    "a literal mapping whose values are expressions",
    NullPolicy.VALUE,
    parse=_parse_object,
    operand={"type": "object", "additionalProperties": _EXPR},
)
_lazy(
    "format",
    Category.STRINGS,
    '"text {args.x:.2f}"',
    "a template: `{ref}` or `{ref:spec}` (a Python format spec); `{{`/`}}` are braces; null shows as `null`",
    NullPolicy.VALUE,
    parse=_parse_format,
    operand={"type": "string"},
)
_MAP = "{over: LIST, as: NAME, %s: EXPR, index: NAME}"
for _name, _key, _doc in (
    ("map", "to", "the body's value for every item (`as` names the item, `index` its position)"),
    ("filter", "where", "the items for which the condition is truthy"),
):
    _lazy(
        _name,
        Category.MAPPING,
        _MAP % _key,
        _doc + "; the names are bound inside only",
        NullPolicy.EMPTY,
        parse=_binder(_name, _key),
        compile=_compile_binder,
        operand={
            "type": "object",
            "properties": {"over": _EXPR, "as": {"type": "string"}, _key: _EXPR, "index": {"type": "string"}},
            "required": ["over", "as", _key],
            "additionalProperties": False,
        },
    )
_lazy(
    "if",
    Category.CHOICE,
    "[cond, then, else]",
    "then when cond is truthy, else otherwise (only one is evaluated)",
    NullPolicy.VALUE,
    compile=_compile_if,
    arity=3,
)
_lazy(
    "coalesce",
    Category.CHOICE,
    "[a, b, ...]",
    "the first operand that is not null",
    NullPolicy.SKIP,
    compile=_compile_coalesce,
)
_lazy(
    "literal",
    Category.CONSTANTS,
    "ANY",
    "the operand as data, never evaluated: `literal: {a: $x}` is the object with the text `$x`",
    NullPolicy.VALUE,
    parse=_parse_literal,
    operand={},
)
