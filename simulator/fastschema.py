"""A fast accept/reject check for the JSON Schema subset tool inputs use, compiled once per tool.

`compile_check(schema)` returns a function `value -> bool` for schemas built only from the keywords
below (plus annotations), or None when the schema uses anything else (then callers use jsonschema).
It must agree with jsonschema (draft 2020-12) exactly; a hypothesis test checks that. When it
rejects, callers ask jsonschema for the wording of the error, so messages are jsonschema's.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

_ANNOTATIONS = {
    "description",
    "title",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$id",
}
_SUPPORTED = _ANNOTATIONS | {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "uniqueItems",
}


class _Unsupported(Exception):
    pass


def _is_integer(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())


_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true != 1; lists and objects compared deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list):
        return (
            isinstance(b, list) and len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if _num(a) and _num(b):
        return a == b
    return type(a) is type(b) and a == b


def _compile(schema: Any) -> Check:
    if schema is True or schema == {}:
        return _always
    if schema is False:
        return _never
    if not isinstance(schema, dict) or set(schema) - _SUPPORTED:
        raise _Unsupported
    checks: list[Check] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if any(n not in _TYPES for n in names):
            raise _Unsupported
        tests = [_TYPES[n] for n in names]
        checks.append(tests[0] if len(tests) == 1 else _any_of(tests))
    if "enum" in schema:
        checks.append(_in_enum(list(schema["enum"])))
    if "const" in schema:
        checks.append(_equal_to(schema["const"]))
    _numbers(schema, checks)
    _strings(schema, checks)
    _arrays(schema, checks)
    _objects(schema, checks)
    if len(checks) == 1:
        return checks[0]
    return _all_of(checks)


def _always(v: Any) -> bool:
    return True


def _never(v: Any) -> bool:
    return False


def _any_of(tests: list[Check]) -> Check:
    def check(v: Any) -> bool:
        return any(t(v) for t in tests)

    return check


def _all_of(checks: list[Check]) -> Check:
    def check(v: Any) -> bool:
        return all(c(v) for c in checks)

    return check


def _in_enum(options: list[Any]) -> Check:
    def check(v: Any) -> bool:
        return any(_equal(v, o) for o in options)

    return check


def _equal_to(const: Any) -> Check:
    def check(v: Any) -> bool:
        return _equal(v, const)

    return check


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _bounded(test: Callable[[Any, Any], bool], bound: Any) -> Check:
    """Numbers must pass `test(value, bound)`; anything else passes (as in JSON Schema)."""

    def check(v: Any) -> bool:
        return not _num(v) or test(v, bound)

    return check


def _min_length(kind: type[str] | type[list[Any]], n: int) -> Check:
    """Values of `kind` (str or list) must have at least n items; anything else passes."""

    def check(v: Any) -> bool:
        return not isinstance(v, kind) or len(v) >= n

    return check


def _max_length(kind: type[str] | type[list[Any]], n: int) -> Check:
    """Values of `kind` (str or list) must have at most n items; anything else passes."""

    def check(v: Any) -> bool:
        return not isinstance(v, kind) or len(v) <= n

    return check


def _numbers(schema: dict[str, Any], checks: list[Check]) -> None:
    for key, test in (
        ("minimum", operator.ge),
        ("maximum", operator.le),
        ("exclusiveMinimum", operator.gt),
        ("exclusiveMaximum", operator.lt),
    ):
        if key in schema:
            bound = schema[key]
            if not _num(bound):
                raise _Unsupported
            checks.append(_bounded(test, bound))


def _strings(schema: dict[str, Any], checks: list[Check]) -> None:
    if "minLength" in schema:
        checks.append(_min_length(str, schema["minLength"]))
    if "maxLength" in schema:
        checks.append(_max_length(str, schema["maxLength"]))
    if "pattern" in schema:
        try:
            pattern = re.compile(schema["pattern"])
        except re.error as exc:
            raise _Unsupported from exc

        def matches(v: Any) -> bool:
            return not isinstance(v, str) or pattern.search(v) is not None

        checks.append(matches)


def _arrays(schema: dict[str, Any], checks: list[Check]) -> None:
    if "items" in schema:
        item = _compile(schema["items"])

        def items_match(v: Any) -> bool:
            return not isinstance(v, list) or all(item(x) for x in v)

        checks.append(items_match)
    if "minItems" in schema:
        checks.append(_min_length(list, schema["minItems"]))
    if "maxItems" in schema:
        checks.append(_max_length(list, schema["maxItems"]))
    if schema.get("uniqueItems") is True:
        checks.append(_unique_items)


def _unique_items(v: Any) -> bool:
    return not isinstance(v, list) or all(not _equal(a, b) for i, a in enumerate(v) for b in v[i + 1 :])


def _objects(schema: dict[str, Any], checks: list[Check]) -> None:
    props = {k: _compile(s) for k, s in (schema.get("properties") or {}).items()}
    required = list(schema.get("required") or [])
    extra = schema.get("additionalProperties", True)
    extra_check = None if extra is True else _compile(extra)
    if not props and not required and extra_check is None:
        return

    def check_object(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        for key in required:
            if key not in v:
                return False
        for key, value in v.items():
            prop = props.get(key)
            if prop is not None:
                if not prop(value):
                    return False
            elif extra_check is not None and not extra_check(value):
                return False
        return True

    checks.append(check_object)


def compile_check(schema: Any) -> Check | None:
    """A fast validity check equivalent to jsonschema's for this schema, or None if unsupported."""
    try:
        return _compile(schema)
    except _Unsupported:
        return None


KNOWN_KEYWORDS = _SUPPORTED | {
    "format",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "$ref",
    "$defs",
    "definitions",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "multipleOf",
    "prefixItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentMediaType",
    "contentEncoding",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
}
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMAS = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
)


def unknown_keywords(schema: Any, path: str = "") -> list[str]:
    """Paths of keys that are no JSON Schema keyword (almost always a typo or a YAML slip)."""
    if not isinstance(schema, dict):
        return []
    out = [f"{path}/{k}" if path else k for k in schema if k not in KNOWN_KEYWORDS and not k.startswith("x-")]
    for key in _SUBSCHEMA_MAPS:
        for name, sub in (schema.get(key) or {}).items():
            out += unknown_keywords(sub, f"{path}/{key}/{name}".lstrip("/"))
    for key in _SUBSCHEMA_LISTS:
        for i, sub in enumerate(schema.get(key) or []):
            out += unknown_keywords(sub, f"{path}/{key}/{i}".lstrip("/"))
    for key in _SUBSCHEMAS:
        out += unknown_keywords(schema.get(key), f"{path}/{key}".lstrip("/"))
    return out
