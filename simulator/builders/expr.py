"""Expressions and templates, built from Python values: escaping is the builder's job, not the caller's.

A Python value given where an expression is expected is always a *literal*: a string that starts
with `$` is written `$$…`, a mapping becomes `object: {…}`, a list a list of literals. References,
operators and templates are built with `ref`/`arg`/`NOW`, `ops.NAME(...)` and `template(...)`, so a
generated domain never mistakes data for code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, Union

from ..lang import OPERATORS, lookup
from ..lang.numbers import finite

__all__ = [
    "NOW",
    "Expr",
    "ExprLike",
    "Formatted",
    "Ref",
    "Template",
    "arg",
    "expr",
    "fmt",
    "has",
    "literal",
    "map_",
    "filter_",
    "obj",
    "op",
    "ops",
    "ref",
    "row",
    "template",
]


@dataclass(frozen=True, slots=True)
class Expr:
    """An expression already in the YAML shape of the domain format (`raw`)."""

    raw: Any


#: what a builder accepts where the format has an expression: built ones, or Python literals
ExprLike: TypeAlias = Union[  # noqa: UP007 - a recursive alias needs the string form
    Expr, str, int, float, bool, None, Sequence["ExprLike"], Mapping[str, "ExprLike"]
]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: a path segment a template can spell (`{clashes.0.booking_id}`)
_TEMPLATE_SEGMENT = re.compile(r"^[A-Za-z0-9_-]+$")


def expr(value: ExprLike) -> Any:
    """The YAML form of `value`: built expressions as they are, Python values as literals."""
    if isinstance(value, Expr):
        return value.raw
    if isinstance(value, str):
        return "$" + value if value.startswith("$") else value
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not finite(value):
            raise ValueError(f"a literal number must be finite, got {value}")
        return value
    if isinstance(value, Mapping):
        fields: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"an object literal's keys are strings, got {key!r}")
            fields[key] = expr(item)
        return {"object": fields}
    if isinstance(value, Sequence):
        return [expr(item) for item in value]
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as an expression")


def _json(value: Any) -> Any:
    """`value` if it is JSON data (finite numbers, string keys), else TypeError/ValueError naming the part."""
    if isinstance(value, Expr):
        raise TypeError(f"literal() takes data, not a built expression ({value.raw!r})")
    if isinstance(value, float) and not finite(value):
        raise ValueError(f"a literal number must be finite, got {value}")
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise TypeError(f"an object literal's keys are strings, got {list(value)!r}")
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as JSON data")


def literal(value: Any) -> Expr:
    """`value` exactly, with no part of it read as a reference or operator (the `literal` operator)."""
    return Expr({"literal": _json(value)})


@dataclass(frozen=True, slots=True)
class Ref(Expr):
    """`$name.path…`: a bound name, an argument (`arg`), the clock (`NOW`) or `$row` in `set`."""

    path: tuple[str, ...] = ()

    def get(self, *segments: str | int) -> Ref:
        """A path below this reference: `ref("items").get(0, "price")` is `$items.0.price`."""
        return ref(*self.path, *segments)

    def fmt(self, spec: str) -> Formatted:
        """This reference in a template with a Python format spec: `{total:.2f}`."""
        if "{" in spec or "}" in spec:
            raise ValueError(f"a format spec cannot hold braces, got {spec!r}")
        return Formatted(self, spec)


def ref(name: str, *path: str | int) -> Ref:
    """`$name.path…` (a numeric segment indexes a list)."""
    if not _NAME.match(name):
        raise ValueError(f"a reference starts with a name (letters, digits, '_'), got {name!r}")
    segments = [str(s) for s in path]
    for segment in segments:
        if not segment or "." in segment or segment.startswith("$"):
            raise ValueError(f"a path segment of ${name} is a non-empty key without '.', got {segment!r}")
    parts = (name, *segments)
    return Ref("$" + ".".join(parts), parts)


def arg(name: str, *path: str | int) -> Ref:
    """`$args.NAME`: an argument of the call."""
    return ref("args", name, *path)


def row(column: str) -> Ref:
    """`$row.COLUMN`: inside an update's `set`, the row before the change."""
    return ref("row", column)


NOW = ref("now")


def _operator(name: str) -> str:
    """The canonical name of an operator (old spellings resolve to the new one)."""
    known = lookup(name)
    if known is None:
        raise ValueError(f"unknown operator {name!r} (known: {', '.join(sorted(OPERATORS))})")
    return known.name


def op(name: str, *operands: ExprLike) -> Expr:
    """`{name: [operands...]}` (one operand that is not a list is written bare: `{neg: $x}`).

    The registry names the operator (an old spelling is written in its new form) and, for eager
    operators of fixed arity, how many operands it takes.
    """
    canonical = _operator(name)
    if canonical in _SPECIAL:
        raise ValueError(f"{canonical} takes its own shape: use {_SPECIAL[canonical].__name__}(...)")
    if OPERATORS[canonical].parse is not None:  # an operand of its own shape that no builder writes yet
        raise ValueError(
            f"{canonical} takes an operand of its own shape, which the builders cannot write yet"
        )
    arity = OPERATORS[canonical].arity
    if OPERATORS[canonical].fn is not None and arity is not None and len(operands) != arity:
        raise ValueError(f"{canonical} takes {arity} operand(s), got {len(operands)}")
    raws = [expr(item) for item in operands]
    if len(raws) == 1 and not isinstance(raws[0], list):
        return Expr({canonical: raws[0]})
    return Expr({canonical: raws})


def has(name_or_object: str | ExprLike, key: ExprLike | None = None) -> Expr:
    """`has: NAME` (argument NAME was given, even as null) or `has: [object, key]` (the key is present)."""
    if key is None:
        if not isinstance(name_or_object, str) or not _NAME.match(name_or_object):
            raise ValueError(f"has: an argument's name, got {name_or_object!r}")
        return Expr({_operator("has"): name_or_object})
    return Expr({_operator("has"): [expr(name_or_object), expr(key)]})


def obj(fields: Mapping[str, ExprLike]) -> Expr:
    """`object: {key: expr}`: a mapping whose values are expressions (keys are literal)."""
    raw: dict[str, Any] = {}
    for key, value in fields.items():
        if not isinstance(key, str):
            raise TypeError(f"object keys are strings, got {key!r}")
        raw[key] = expr(value)
    return Expr({"object": raw})


Body = ExprLike | Callable[..., ExprLike]


def _binder(name: str, body_key: str, over: ExprLike, as_: str, body: Body, index: str | None) -> Expr:
    for bound in (as_, index):
        if bound is not None and not _NAME.match(bound):
            raise ValueError(f"{name}: a bound name is letters, digits and '_', got {bound!r}")
    if callable(body):
        body = body(ref(as_), ref(index)) if index else body(ref(as_))
    raw: dict[str, Any] = {"over": expr(over), "as": as_, body_key: expr(body)}
    if index is not None:
        raw["index"] = index
    return Expr({name: raw})


def map_(over: ExprLike, as_: str, to: Body, index: str | None = None) -> Expr:
    """`map: {over, as, to}`; `to` may be a function of the bound name's `Ref` (and the index's)."""
    return _binder("map", "to", over, as_, to, index)


def filter_(over: ExprLike, as_: str, where: Body, index: str | None = None) -> Expr:
    """`filter: {over, as, where}`; `where` may be a function of the bound name's `Ref`."""
    return _binder("filter", "where", over, as_, where, index)


@dataclass(frozen=True, slots=True)
class Formatted:
    """A reference with a format spec, inside a template."""

    ref: Ref
    spec: str


@dataclass(frozen=True, slots=True)
class Template:
    """Template text (`error:`, `fail:`, `format:`): literal text with `{ref}` holes."""

    text: str

    def __str__(self) -> str:
        return self.text


def _hole(part: Ref | Formatted) -> str:
    reference = part.ref if isinstance(part, Formatted) else part
    head, *rest = reference.path
    for segment in rest:
        if not _TEMPLATE_SEGMENT.match(segment):
            raise ValueError(f"a template cannot spell the path segment {segment!r} of {reference.raw}")
    body = ".".join(reference.path)
    return "{" + body + (f":{part.spec}" if isinstance(part, Formatted) else "") + "}"


def template(*parts: str | Ref | Formatted | Template) -> Template:
    """Template text from pieces: strings are literal text (braces doubled), refs are holes."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, Template):
            out.append(part.text)
        elif isinstance(part, str):
            out.append(part.replace("{", "{{").replace("}", "}}"))
        elif isinstance(part, Ref | Formatted):
            out.append(_hole(part))
        else:
            raise TypeError(f"a template piece is text, a Ref or a Formatted ref, got {part!r}")
    return Template("".join(out))


def text_of(value: str | Template) -> str:
    """A template field's text: a plain string is literal text (braces escaped)."""
    return value.text if isinstance(value, Template) else template(value).text


def fmt(value: str | Template) -> Expr:
    """`format: TEMPLATE`: the template's text as an expression's value."""
    return Expr({"format": text_of(value)})


#: operators whose operand has its own shape, and the builder that writes each
_SPECIAL: dict[str, Callable[..., Expr]] = {}


class _Ops:
    """`ops.add(a, b)`, `ops.if_(c, a, b)`, `ops.not_(x)`: every operator the registry knows.

    A trailing `_` is dropped (for Python keywords and builtins); `object`, `format`, `literal`,
    `map`, `filter` and `has` take their own shapes (`obj`, `fmt`, `literal`, `map_`, `filter_`, `has`).
    """

    def __getattr__(self, attr: str) -> Callable[..., Expr]:
        name = _operator(attr[:-1] if attr.endswith("_") else attr)
        if name in _SPECIAL:
            return _SPECIAL[name]
        return lambda *operands: op(name, *operands)

    def __dir__(self) -> list[str]:
        return sorted(OPERATORS)


_SPECIAL.update(
    {"object": obj, "format": fmt, "literal": literal, "map": map_, "filter": filter_, "has": has}
)
ops = _Ops()
