"""A fast accept/reject check for the JSON Schema subset tool inputs use, compiled once per tool.

`compile_check(schema)` returns a function `value -> bool` for schemas built only from the keywords
below (plus annotations), or None when the schema uses anything else (then callers use jsonschema).
It must agree with the input validator (`InputValidator`: jsonschema's draft 2020-12 validator
with patterns on RE2) exactly; a hypothesis test checks that. When it rejects, callers ask the
validator for the wording of the error.

Agent input never runs on a backtracking regex engine: a `pattern` runs on RE2, in time linear in
the string (`search_pattern`). A pattern RE2 cannot run (a lookaround, a backreference) runs on
Python's `re`, and only strings of at most `FALLBACK_PATTERN_LENGTH` characters can match it.
`bound_arrays` gives every array of an input schema a `maxItems` when its author gave none.
"""

from __future__ import annotations

import copy
import functools
import operator
import re
import reprlib
from collections.abc import Callable, Iterator
from typing import Any

import jsonschema
import re2

from .errors import clip

Check = Callable[[Any], bool]

#: the `maxItems` an input-schema array gets when its author gave none (documented in domain-format)
DEFAULT_MAX_ITEMS = 1000
#: the longest string a pattern that RE2 cannot run may match (Python's `re` backtracks)
FALLBACK_PATTERN_LENGTH = 1000
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


@functools.lru_cache(maxsize=1024)
def search_pattern(pattern: str) -> Check:
    """`text -> bool`: does the JSON Schema `pattern` match somewhere in text (unanchored)?

    RE2 where it can (linear time); otherwise Python's `re`, only on strings up to
    FALLBACK_PATTERN_LENGTH characters. Raises re.error for a pattern neither can compile.
    """
    try:
        compiled = re2.compile(pattern, _RE2_OPTIONS)
    except re2.error:
        fallback = re.compile(pattern)
        return lambda text: len(text) <= FALLBACK_PATTERN_LENGTH and fallback.search(text) is not None

    def search(text: str) -> bool:
        try:
            return compiled.search(text) is not None
        except UnicodeEncodeError:  # lone surrogates: RE2 reads UTF-8; match them as U+FFFD
            clean = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            return compiled.search(clean) is not None

    return search


_BRIEF = reprlib.Repr()
_BRIEF.maxlevel, _BRIEF.maxlist, _BRIEF.maxdict = 3, 8, 8
_BRIEF.maxstring = _BRIEF.maxlong = _BRIEF.maxother = 120


def brief(value: Any, limit: int = 200) -> str:
    """A repr of `value` that quotes at most about `limit` characters, whatever its size."""
    return clip(_BRIEF.repr(value), limit)


def _pattern_keyword(
    validator: Any, pattern: str, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if validator.is_type(instance, "string") and not search_pattern(pattern)(instance):
        yield jsonschema.ValidationError(f"{brief(instance)} does not match {pattern!r}")


_ITEMS = jsonschema.Draft202012Validator.VALIDATORS["items"]


def _items_keyword(
    validator: Any, items: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    # an array over its maxItems is reported as too long, without reading every item
    if validator.is_type(instance, "array") and len(instance) > schema.get("maxItems", len(instance)):
        return
    yield from _ITEMS(validator, items, instance, schema)


def _max_items_keyword(
    validator: Any, limit: int, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if validator.is_type(instance, "array") and len(instance) > limit:
        yield jsonschema.ValidationError(
            f"{brief(instance)} is too long: {len(instance):,} items, at most {limit:,} allowed"
        )


#: the validator of tool arguments: jsonschema's draft 2020-12, with `pattern` on RE2, and arrays
#: over their `maxItems` rejected without reading every item
InputValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    {"pattern": _pattern_keyword, "items": _items_keyword, "maxItems": _max_items_keyword},
)


def input_validator(schema: dict[str, Any]) -> Any:
    """The validator of a tool's arguments (formats checked, as `FormatChecker` does)."""
    return InputValidator(schema, format_checker=jsonschema.FormatChecker())


def bound_arrays(schema: Any, max_items: int = DEFAULT_MAX_ITEMS) -> Any:
    """A copy of `schema` in which every array schema without `maxItems` has `maxItems: max_items`."""
    schema = copy.deepcopy(schema)
    _bound(schema, max_items)
    return schema


def _bound(schema: Any, max_items: int) -> None:
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    is_array = kind == "array" or (isinstance(kind, list) and "array" in kind)
    if (is_array or "items" in schema or "prefixItems" in schema) and "maxItems" not in schema:
        schema["maxItems"] = max_items
    for key in _SUBSCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            for sub in schema[key].values():
                _bound(sub, max_items)
    for key in _SUBSCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            for sub in schema[key]:
                _bound(sub, max_items)
    for key in _SUBSCHEMAS:
        _bound(schema.get(key), max_items)


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
    # one type of `number` or `object`: its keywords' checks test the type themselves (one call less)
    only = schema.get("type") if schema.get("type") in ("number", "object") else None
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
    before = len(checks)
    _numbers(schema, checks, only == "number")
    numbered = len(checks) > before
    _strings(schema, checks)
    _arrays(schema, checks)
    before = len(checks)
    _objects(schema, checks, only == "object")
    if only == "number" and numbered or only == "object" and len(checks) > before:
        del checks[0]  # (the type test: a strict check after it does it)
    if len(checks) == 1:
        return checks[0]
    return _all_of(checks)


def _always(v: Any) -> bool:
    return True


def _never(v: Any) -> bool:
    return False


def _any_of(tests: list[Check]) -> Check:
    if len(tests) == 2:
        first, second = tests
        return lambda v: first(v) or second(v)

    def check(v: Any) -> bool:
        for t in tests:
            if t(v):
                return True
        return False

    return check


def _all_of(checks: list[Check]) -> Check:
    # (runs for every argument of every call: no generator, and the common pair as one expression)
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)

    def check(v: Any) -> bool:
        for c in checks:
            if not c(v):
                return False
        return True

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


def _bounded(test: Callable[[Any, Any], bool], bound: Any, strict: bool) -> Check:
    """Numbers must pass `test(value, bound)`; anything else passes (as in JSON Schema), or fails
    when `strict` (the schema's one type is `number`)."""
    if strict:
        return lambda v: _num(v) and test(v, bound)

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


def _numbers(schema: dict[str, Any], checks: list[Check], strict: bool = False) -> None:
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
            checks.append(_bounded(test, bound, strict))


def _strings(schema: dict[str, Any], checks: list[Check]) -> None:
    if "minLength" in schema:
        checks.append(_min_length(str, schema["minLength"]))
    if "maxLength" in schema:
        checks.append(_max_length(str, schema["maxLength"]))
    if "pattern" in schema:
        try:
            search = search_pattern(schema["pattern"])
        except (re.error, TypeError) as exc:
            raise _Unsupported from exc

        def matches(v: Any) -> bool:
            return not isinstance(v, str) or search(v)

        checks.append(matches)


def _arrays(schema: dict[str, Any], checks: list[Check]) -> None:
    if "minItems" in schema:
        checks.append(_min_length(list, schema["minItems"]))
    if "maxItems" in schema:  # before `items`: a long array is rejected without reading it
        checks.append(_max_length(list, schema["maxItems"]))
    if "items" in schema:
        item = _compile(schema["items"])

        def items_match(v: Any) -> bool:
            if isinstance(v, list):
                for x in v:
                    if not item(x):
                        return False
            return True

        checks.append(items_match)
    if schema.get("uniqueItems") is True:
        checks.append(_unique_items)


def _unique_items(v: Any) -> bool:
    return not isinstance(v, list) or all(not _equal(a, b) for i, a in enumerate(v) for b in v[i + 1 :])


def _objects(schema: dict[str, Any], checks: list[Check], strict: bool = False) -> None:
    """Objects must have the required keys and valid properties; anything else passes (as in JSON
    Schema), or fails when `strict` (the schema's one type is `object`)."""
    props = {k: _compile(s) for k, s in (schema.get("properties") or {}).items()}
    required = list(schema.get("required") or [])
    extra = schema.get("additionalProperties", True)
    extra_check = None if extra is True else _compile(extra)
    if not props and not required and extra_check is None:
        return

    def check_object(v: Any) -> bool:
        if not isinstance(v, dict):
            return not strict
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
