"""The fast argument check agrees with the input validator (jsonschema, patterns on RE2) on every
bundled tool's schema."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import load_domain
from simulator import list_domain_dirs
from simulator.codegen.fastschema import compile_check, input_validator

SCHEMAS = [
    (f"{d.name}.{t.spec.name}", t.spec.input_schema)
    for d in map(load_domain, list_domain_dirs())
    for t in d.tools.values()
]
EXTRA = [
    {"type": ["string", "null"], "minLength": 2, "pattern": "^a"},
    {"type": "array", "items": {"enum": [1, "1", True, None, [1]]}, "uniqueItems": True, "maxItems": 3},
    {
        "type": "object",
        "properties": {"n": {"type": "integer", "exclusiveMaximum": 5, "minimum": -2}},
        "additionalProperties": {"type": "boolean"},
    },
    {"const": {"a": [1, 2.0]}},
    {"type": "string", "pattern": "^[a-z]+$"},  # Python's re would accept "abc\n"; RE2 and ECMA do not
    {"type": "string", "pattern": "^\\d+$"},  # RE2's \d is ASCII, as ECMA's is
    {"type": "string", "pattern": "^(?:[^|]*\\|?)+$"},  # nested quantifiers: linear on RE2
    {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
    {"type": "number", "minLength": 1},  # a keyword of another type: the type test stays
    {"type": "number", "exclusiveMinimum": 0, "enum": [1, "1", 2.5]},
    {"type": "object", "minItems": 1, "pattern": "a"},
    {"type": "object", "required": ["a"], "properties": {"a": {"type": "number", "maximum": 3}}},
    {"type": "object", "additionalProperties": {"type": "integer"}},  # no properties: every key is extra
    {"required": ["a", "b"]},
    {  # enough properties that a key's check is found in a dict
        "type": "object",
        "properties": {f"p{i}": {"type": ["integer", "string"][i % 2]} for i in range(13)},
        "required": ["p0"],
        "additionalProperties": False,
    },
    {"type": "array", "items": {"type": "array", "items": {"type": "object", "required": ["x"]}}},
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-10, 10)
    | st.floats(-10, 10, allow_nan=False)
    | st.text(max_size=6)
    | st.text("a1\n٣", max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def _instances(schema):
    props = schema.get("properties") or {}
    shaped = st.fixed_dictionaries({}, optional={k: json_values for k in props}) if props else st.nothing()
    return json_values | shaped


@pytest.mark.parametrize(
    ("name", "schema"),
    SCHEMAS + [(f"extra{i}", s) for i, s in enumerate(EXTRA)],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_fast_check_agrees_with_jsonschema(name, schema):
    check = compile_check(schema)
    assert check is not None, f"{name}: schema uses keywords the fast check does not support"
    validator = input_validator(schema)

    @settings(max_examples=60)
    @given(_instances(schema))
    def agree(value):
        assert check(value) == validator.is_valid(value), value

    agree()


def test_unsupported_keywords_fall_back():
    assert compile_check({"type": "string", "format": "email"}) is None
    assert compile_check({"anyOf": [{"type": "string"}]}) is None
