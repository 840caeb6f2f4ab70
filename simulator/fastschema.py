"""A fast accept/reject check for the JSON Schema subset tool inputs use, compiled once per tool.

`compile_check(schema)` returns a function `value -> bool` for schemas built only from the keywords
below (plus annotations), or None when the schema uses anything else (then callers use jsonschema).
It must agree with jsonschema (draft 2020-12) exactly; a hypothesis test checks that. When it
rejects, callers ask jsonschema for the wording of the error, so messages are jsonschema's.
"""

from __future__ import annotations

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
        return lambda v: True
    if schema is False:
        return lambda v: False
    if not isinstance(schema, dict) or set(schema) - _SUPPORTED:
        raise _Unsupported
    checks: list[Check] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if any(n not in _TYPES for n in names):
            raise _Unsupported
        tests = [_TYPES[n] for n in names]
        checks.append(tests[0] if len(tests) == 1 else (lambda v, tests=tests: any(t(v) for t in tests)))
    if "enum" in schema:
        options = list(schema["enum"])
        checks.append(lambda v, options=options: any(_equal(v, o) for o in options))
    if "const" in schema:
        const = schema["const"]
        checks.append(lambda v, const=const: _equal(v, const))
    _numbers(schema, checks)
    _strings(schema, checks)
    _arrays(schema, checks)
    _objects(schema, checks)
    if len(checks) == 1:
        return checks[0]
    return lambda v: all(c(v) for c in checks)


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _numbers(schema: dict[str, Any], checks: list[Check]) -> None:
    for key, test in (
        ("minimum", lambda v, b: v >= b),
        ("maximum", lambda v, b: v <= b),
        ("exclusiveMinimum", lambda v, b: v > b),
        ("exclusiveMaximum", lambda v, b: v < b),
    ):
        if key in schema:
            bound = schema[key]
            if not _num(bound):
                raise _Unsupported
            checks.append(lambda v, bound=bound, test=test: not _num(v) or test(v, bound))


def _strings(schema: dict[str, Any], checks: list[Check]) -> None:
    if "minLength" in schema:
        n = schema["minLength"]
        checks.append(lambda v, n=n: not isinstance(v, str) or len(v) >= n)
    if "maxLength" in schema:
        n = schema["maxLength"]
        checks.append(lambda v, n=n: not isinstance(v, str) or len(v) <= n)
    if "pattern" in schema:
        try:
            pattern = re.compile(schema["pattern"])
        except re.error as exc:
            raise _Unsupported from exc
        checks.append(lambda v, p=pattern: not isinstance(v, str) or p.search(v) is not None)


def _arrays(schema: dict[str, Any], checks: list[Check]) -> None:
    if "items" in schema:
        item = _compile(schema["items"])
        checks.append(lambda v, item=item: not isinstance(v, list) or all(item(x) for x in v))
    if "minItems" in schema:
        n = schema["minItems"]
        checks.append(lambda v, n=n: not isinstance(v, list) or len(v) >= n)
    if "maxItems" in schema:
        n = schema["maxItems"]
        checks.append(lambda v, n=n: not isinstance(v, list) or len(v) <= n)
    if schema.get("uniqueItems") is True:
        checks.append(
            lambda v: (
                not isinstance(v, list) or all(not _equal(a, b) for i, a in enumerate(v) for b in v[i + 1 :])
            )
        )


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
