"""The operator registry is the one source: the docs table, the JSON Schema, the evaluator and the
null policy all follow it — a new operator registered there alone is known everywhere."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from simulator import ToolError
from simulator.format.spec import DomainSpec
from simulator.lang import (
    OPERATORS,
    EvalError,
    NullPolicy,
    Operator,
    Scope,
    compile_node,
    deprecations,
    parse,
    register,
    unregister,
)
from simulator.lang.docs import BEGIN, DOCS, END, operator_table, with_table
from tests.test_language import make, tool
from toolgym import schemas


def _domain_schema() -> dict[str, Any]:
    return json.loads(schemas.render(DomainSpec))


def test_the_docs_table_is_generated_from_the_registry():
    text = DOCS.read_text(encoding="utf-8")
    assert BEGIN in text and END in text
    assert with_table(text) == text, "docs/domain-format.md drifted: run `python -m simulator.lang.docs`"
    table = operator_table()
    for op in OPERATORS.values():
        assert f"| `{op.name}`" in table
        for alias in op.aliases:
            assert f"(old: `{alias}`)" in table


def test_the_schema_checks_expressions_against_the_registry():
    schema = _domain_schema()
    names = set(schema["$defs"]["Operator"]["properties"])
    assert names == set(OPERATORS) | {a for op in OPERATORS.values() for a in op.aliases}
    validator = jsonschema.Draft202012Validator(schema)

    def errors(require: Any) -> list[str]:
        spec = {
            "name": "d",
            "version": "1.0.0",
            "tables": {"t": {"primary_key": "id", "columns": {"id": {"type": "string"}}}},
            "tools": [tool("f", [{"require": require, "error": "no"}], props={"x": {"type": "string"}})],
        }
        return [e.message for e in validator.iter_errors(spec)]

    assert errors({"and": [{"has": "x"}, {"eq": ["$args.x", {"get": [{"object": {"a": 1}}, "a"]}]}]}) == []
    assert errors({"map": {"over": [1], "as": "v", "to": "$v"}}) == []
    assert errors({"nope": 1}) != []  # unknown operator
    assert errors({"sub": [1]}) != []  # wrong arity
    assert errors({"if": [True, 1]}) != []
    assert errors({"len": [1, 2]}) != []  # one operand: bare, or a list of one
    assert errors({"len": [[1, 2]]}) == errors({"len": "$args.x"}) == []
    assert errors({"eq": [1, {"a": 1, "b": 2}]}) != []  # two keys: not an operator
    assert errors({"map": {"over": [1], "as": "v"}}) != []  # missing `to`


@pytest.fixture
def clamp():
    """`clamp: [x, lo, hi]`, registered through the registry alone (old spelling `bound`)."""
    op = register(
        Operator(
            "clamp",
            "arithmetic",
            "[x, lo, hi]",
            "x limited to the range lo..hi",
            NullPolicy.ERROR,
            fn=lambda x, lo, hi: max(lo, min(x, hi)),
            arity=3,
            aliases=("bound",),
        )
    )
    try:
        yield op
    finally:
        unregister("clamp")


def test_a_new_operator_registered_alone_reaches_docs_schema_and_evaluator(clamp, tmp_path):
    # docs: a row in the table, and the committed file now drifts (the drift test would say so)
    assert (
        "| arithmetic | `clamp` (old: `bound`) | `[x, lo, hi]` | error | x limited to the range lo..hi |"
        in (operator_table())
    )
    assert with_table(DOCS.read_text(encoding="utf-8")) != DOCS.read_text(encoding="utf-8")
    # schema: a domain using it validates; a misspelling or a wrong arity does not
    validator = jsonschema.Draft202012Validator(_domain_schema())
    ok = tool("f", [{"return": {"clamp": ["$args.n", 0, 10]}}], props={"n": {"type": ["number", "null"]}})
    spec = {"name": "d", "version": "1.0.0", "tables": {}, "tools": [ok]}
    assert list(validator.iter_errors(spec)) == []
    spec["tools"] = [tool("f", [{"return": {"clamp": ["$args.n", 0]}}])]
    assert list(validator.iter_errors(spec)) != []
    # evaluator: a domain using it loads and runs it; the old spelling loads and is reported
    domain = make(tmp_path, [ok, tool("g", [{"return": {"bound": [42, 0, 10]}}])])
    with domain.episode() as ep:
        assert ep.call("f", {"n": 15}) == 10
        assert ep.call("f", {"n": -2}) == 0
        assert ep.call("g", {}) == 10
        with pytest.raises(ToolError, match="clamp: cannot work on these values"):
            ep.call("f", {"n": None})
    assert [(d.old, d.new) for d in deprecations(parse({"bound": [1, 2, 3]}))] == [("bound", "clamp")]


#: the operands after a null subject, per eager operator (an operator without one fails the test)
REST: dict[str, list[Any]] = {
    **dict.fromkeys(["add", "sub", "eq", "ne", "lt", "le", "gt", "ge", "count_of", "append"], [1]),
    **dict.fromkeys(["neg", "abs", "not", "is_null", "exists", "len", "sum_of", "unique", "flatten"], []),
    **dict.fromkeys(["compact", "lower", "upper", "chars", "sort", "calc", "to_number", "to_string"], []),
    **dict.fromkeys(["weekday", "date"], []),
    **dict.fromkeys(["starts_with", "ends_with", "icontains", "ieq", "pluck", "get_key", "index_by"], ["a"]),
    "mul": [2],
    "div": [2],
    "round": [1],
    "min": [3],
    "max": [3],
    "in": [[1]],
    "not_in": [[1]],
    "at": [0],
    "concat_lists": [[1]],
    "contains": [1],
    "merge": [{"literal": {"a": 1}}],
    "set_key": ["k", 1],
    "object_from": [[]],
    "pick": [["a"]],
    "omit": [["a"]],
    "concat": ["x"],
    "slice": [0, 1],
    "join": [","],
    "datetime_add": [60],
    "datetime_diff": ["2025-01-01T00:00:00Z"],
    "and": [True],
    "or": [True],
    "if": [1, 2],
    "coalesce": [3],
}
#: operators whose operand has its own shape: (expression with a null subject, with an empty one)
SHAPED: dict[str, tuple[Any, Any]] = {
    "map": ({"map": {"over": None, "as": "v", "to": "$v"}}, {"map": {"over": [], "as": "v", "to": "$v"}}),
    "filter": (
        {"filter": {"over": None, "as": "v", "where": True}},
        {"filter": {"over": [], "as": "v", "where": 1}},
    ),
    "object": ({"object": {"a": None}}, None),
    "format": ({"format": "{x}"}, None),
    "literal": ({"literal": None}, None),
    "has": ({"has": [None, "k"]}, None),
}


def _outcome(raw: Any) -> tuple[str, Any]:
    try:
        return "value", compile_node(parse(raw), Scope(None, ["x"]))({"x": None})
    except EvalError as exc:
        return "error", str(exc)


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_every_operator_follows_its_recorded_null_policy(name):
    op = OPERATORS[name]
    if name in SHAPED:
        null_expr, empty_expr = SHAPED[name]
    else:
        assert name in REST, f"give {name!r} sample operands in REST"
        null_expr, empty_expr = {name: [None, *REST[name]]}, None
    kind, value = _outcome(null_expr)
    if op.null is NullPolicy.ERROR:
        assert kind == "error" and value.startswith(f"{name}:"), value
        return
    assert kind == "value", f"{name} raised {value!r} on a null subject; its policy is {op.null.value}"
    if op.null is NullPolicy.FALSE:
        assert value is False
    elif op.null is NullPolicy.PROPAGATE:
        assert value is None
    elif op.null is NullPolicy.SKIP:
        assert (kind, value) == _outcome({name: REST[name]})
    elif op.null is NullPolicy.EMPTY:
        empties = [empty_expr] if empty_expr else [{name: [e, *REST[name]]} for e in ([], {"literal": {}})]
        assert (kind, value) in [_outcome(e) for e in empties]
