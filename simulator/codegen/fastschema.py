"""A fast accept/reject check for the JSON Schema subset tool inputs use, compiled once per tool.

`compile_check(schema)` returns a function `value -> bool`, or None when the schema uses keywords
outside the subset (callers then use jsonschema). It agrees exactly with `InputValidator`.
Patterns run on RE2, never on a backtracking engine; `bound_inputs` adds default `maxItems` and
`maxLength` limits. Design notes: docs/design/engine.md.
"""

from __future__ import annotations

import copy
import functools
import reprlib
from collections.abc import Callable, Iterator
from typing import Any, TypeGuard

import jsonschema
import re2

from ..errors import clip
from ..lang.generated import Source

Check = Callable[[Any], bool]

#: the `maxItems` an input-schema array gets when its author gave none (documented in domain-format)
DEFAULT_MAX_ITEMS = 1000
#: the `maxLength` an input-schema string without `enum` or `const` gets when its author gave none
DEFAULT_MAX_LENGTH = 10_000
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


class BacktrackingPattern(ValueError):
    """A regular expression that a linear-time engine (RE2) cannot run."""


def linear_time_problem(pattern: str) -> str | None:
    """Why RE2 cannot run `pattern` (a lookaround, a backreference, bad syntax), or None if it can."""
    try:
        _linear(pattern)
    except BacktrackingPattern as exc:
        return str(exc)
    return None


@functools.lru_cache(maxsize=1024)
def _linear(pattern: str) -> Any:
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as exc:
        raise BacktrackingPattern(
            f"the pattern {clip(repr(pattern), 120)} needs a backtracking regex engine ({exc}); "
            "only patterns a linear-time engine (RE2) runs are allowed: no lookaround, no backreference"
        ) from None


@functools.lru_cache(maxsize=1024)
def search_pattern(pattern: str) -> Check:
    """`text -> bool`: does the JSON Schema `pattern` match somewhere in text (unanchored)?

    Always on RE2, in time linear in the text; BacktrackingPattern for a pattern RE2 cannot run.
    """
    compiled = _linear(pattern)

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


def _pattern_properties_keyword(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        search = search_pattern(pattern)
        for key, value in instance.items():
            if search(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


#: the validator of tool arguments: jsonschema's draft 2020-12, with `pattern` and
#: `patternProperties` on RE2, and arrays over their `maxItems` rejected without reading every item
InputValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    {
        "pattern": _pattern_keyword,
        "patternProperties": _pattern_properties_keyword,
        "items": _items_keyword,
        "maxItems": _max_items_keyword,
    },
)


def backtracking_patterns(schema: Any) -> Iterator[str]:
    """Why each `pattern` / `patternProperties` key of `schema` that RE2 cannot run is refused."""
    if isinstance(schema, dict):
        pattern = schema.get("pattern")
        keys = schema.get("patternProperties")
        for text in [pattern, *(keys if isinstance(keys, dict) else ())]:
            problem = linear_time_problem(text) if isinstance(text, str) else None
            if problem is not None:
                yield problem
        for value in schema.values():
            if isinstance(value, dict | list):
                yield from backtracking_patterns(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from backtracking_patterns(item)


def input_validator(schema: dict[str, Any]) -> Any:
    """The validator of a tool's arguments (formats checked, as `FormatChecker` does)."""
    return InputValidator(schema, format_checker=jsonschema.FormatChecker())


def bound_inputs(
    schema: Any, max_items: int = DEFAULT_MAX_ITEMS, max_length: int = DEFAULT_MAX_LENGTH
) -> Any:
    """A copy of `schema` in which every array schema without `maxItems` has `maxItems: max_items`,
    and every string schema without `maxLength`, `enum` or `const` has `maxLength: max_length`."""
    schema = copy.deepcopy(schema)
    _bound(schema, max_items, max_length)
    return schema


def _bound(schema: Any, max_items: int, max_length: int) -> None:
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    is_array = kind == "array" or (isinstance(kind, list) and "array" in kind)
    if (is_array or "items" in schema or "prefixItems" in schema) and "maxItems" not in schema:
        schema["maxItems"] = max_items
    is_string = kind == "string" or (isinstance(kind, list) and "string" in kind)
    if is_string and not {"maxLength", "enum", "const"} & schema.keys():
        schema["maxLength"] = max_length
    for key in _SUBSCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            for sub in schema[key].values():
                _bound(sub, max_items, max_length)
    for key in _SUBSCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            for sub in schema[key]:
                _bound(sub, max_items, max_length)
    for key in _SUBSCHEMAS:
        _bound(schema.get(key), max_items, max_length)


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


def _equal(a: object, b: object) -> bool:
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


def _num(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _in_enum(v: Any, options: list[Any]) -> bool:
    return any(_equal(v, o) for o in options)


def _unique_items(v: Any) -> bool:
    return not isinstance(v, list) or all(not _equal(a, b) for i, a in enumerate(v) for b in v[i + 1 :])


#: each JSON type's test of the value in `{v}`
_TYPES: dict[str, str] = {
    "string": "isinstance({v}, str)",
    "integer": "(isinstance({v}, int) and not isinstance({v}, bool) or isinstance({v}, float) and {v}.is_integer())",
    "number": "(isinstance({v}, (int, float)) and not isinstance({v}, bool))",
    "boolean": "isinstance({v}, bool)",
    "object": "isinstance({v}, dict)",
    "array": "isinstance({v}, list)",
    "null": "{v} is None",
}
_BOUNDS = (("minimum", ">="), ("maximum", "<="), ("exclusiveMinimum", ">"), ("exclusiveMaximum", "<"))
_DISPATCH_FROM = 12  # an object schema with this many properties finds a key's check in a dict


class _Table(dict[str, str]):
    """{key: the name of its property's helper}, made {key: helper} once the helpers exist."""


def _function(src: Source, body: list[str]) -> str:
    """A helper `f_N(v)` with these lines; its name."""
    name = src.temp("f")
    with src.block(f"def {name}(v):"):
        src.add(*body)
    return name


def _test(src: Source, schema: Any, v: str) -> str:
    """A boolean expression: does the value in the local `v` pass `schema`? (Helpers per array's
    items and per object's properties are defined first, in `src`.)"""
    if schema is True or schema == {}:
        return "True"
    if schema is False:
        return "False"
    if not isinstance(schema, dict) or set(schema) - _SUPPORTED:
        raise _Unsupported
    parts: list[str] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not names or any(not isinstance(n, str) or n not in _TYPES for n in names):
            raise _Unsupported
        parts.append("(" + " or ".join(_TYPES[n].format(v=v) for n in names) + ")")
    if "enum" in schema:
        parts.append(f"_in_enum({v}, {src.bind(list(schema['enum']), 'c')})")
    if "const" in schema:
        parts.append(f"_equal({v}, {src.bind(schema['const'], 'c')})")
    number = _TYPES["number"].format(v=v)
    for key, op in _BOUNDS:  # (numbers only: any other value passes, as in JSON Schema)
        if key in schema:
            if not _num(schema[key]):
                raise _Unsupported
            parts.append(f"(not {number} or {v} {op} {src.bind(schema[key], 'c')})")
    _lengths(src, schema, v, parts)
    if "pattern" in schema:
        try:
            search = search_pattern(schema["pattern"])
        except (BacktrackingPattern, TypeError) as exc:
            raise _Unsupported from exc
        parts.append(f"(not isinstance({v}, str) or {src.bind(search, 'c')}({v}))")
    if "items" in schema:
        item = _test(src, schema["items"], "x")
        each = _function(src, ["for x in v:", f"    if not ({item}): return False", "return True"])
        parts.append(f"(not isinstance({v}, list) or {each}({v}))")
    if schema.get("uniqueItems") is True:
        parts.append(f"_unique_items({v})")
    members = _object(src, schema)
    if members is not None:
        parts.append(f"{members}({v})")
    return "(" + " and ".join(parts) + ")" if parts else "True"


def _lengths(src: Source, schema: dict[str, Any], v: str, parts: list[str]) -> None:
    """minLength / maxLength of strings, minItems / maxItems of arrays (maxItems before `items`:
    a long array is rejected without reading it)."""
    for key, kind, op in (
        ("minLength", "str", ">="),
        ("maxLength", "str", "<="),
        ("minItems", "list", ">="),
        ("maxItems", "list", "<="),
    ):
        if key in schema:
            parts.append(f"(not isinstance({v}, {kind}) or len({v}) {op} {src.bind(schema[key], 'c')})")


def _object(src: Source, schema: dict[str, Any]) -> str | None:
    """The helper checking an object's required keys and its properties (any other value
    passes: the type test is apart), or None when the schema says nothing of them."""
    props = schema.get("properties") or {}
    required = list(schema.get("required") or [])
    extra = schema.get("additionalProperties", True)
    if not props and not required and extra is True:
        return None
    body = ["if not isinstance(v, dict): return True"]
    body += [f"if {src.bind(key, 'c')} not in v: return False" for key in required]
    others = None if extra is True else _test(src, extra, "value")
    if not props and others is None:
        return _function(src, [*body, "return True"])
    body.append("for key, value in v.items():")
    if len(props) >= _DISPATCH_FROM:  # {key: helper}, filled once the helpers exist (`_compile`)
        table = src.bind(
            _Table({k: _function(src, [f"return {_test(src, sub, 'v')}"]) for k, sub in props.items()}), "c"
        )
        body += [f"    prop = {table}.get(key)", "    if prop is not None:"]
        body.append("        if not prop(value): return False")
        if others is not None:
            body.append(f"    elif not {others}: return False")
    else:
        for i, (key, sub) in enumerate(props.items()):
            body.append(f"    {'if' if i == 0 else 'elif'} key == {src.bind(key, 'c')}:")
            body.append(f"        if not {_test(src, sub, 'value')}: return False")
        if others == "False":  # (`additionalProperties: false`)
            body.append(f"    {'else' if props else 'if True'}: return False")
        elif others is not None:
            body.append(f"    {'else' if props else 'if True'}:")
            body.append(f"        if not {others}: return False")
    return _function(src, [*body, "return True"])


def _compile(schema: Any) -> Check:
    src = Source(_equal=_equal, _in_enum=_in_enum, _unique_items=_unique_items)
    test = _test(src, schema, "v")
    with src.block("def check(v):"):
        src.add(f"return {test}")
    check: Check = src.define("check", "<argument check>")
    namespace = src.namespace
    for name, value in src.bound.items():
        if isinstance(value, _Table):
            namespace[name] = {key: namespace[helper] for key, helper in value.items()}
    return check


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
