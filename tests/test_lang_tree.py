"""The expression tree: parsing with paths, the one walker, and the analyses derived from it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator.errors import ToolError
from simulator.lang import (
    Binder,
    Call,
    ExprError,
    ListNode,
    Literal,
    ObjectNode,
    Ref,
    Scope,
    Template,
    arguments_read,
    compile_node,
    constant,
    deprecations,
    free_names,
    parse,
    parse_template,
    uses_now,
    walk,
)
from simulator.lang.expressions import OPERATORS, argument_name, compile_expr


def test_each_form_parses_to_its_node():
    assert parse(3) == Literal(3)
    assert parse("$$5") == Literal("$5", "escaped")
    assert parse("$args.x.y") == Ref("args", ("x", "y"))
    assert parse({"literal": {"a": "$x"}}) == Literal({"a": "$x"}, "literal")
    assert isinstance(parse([1, "$now"]), ListNode)
    assert isinstance(parse({"object": {"a": 1}}), ObjectNode)
    assert isinstance(parse({"format": "n={args.n:.2f}"}), Template)
    mapped = parse({"map": {"over": "$xs", "as": "x", "to": "$x"}})
    assert isinstance(mapped, Binder) and mapped.bound == ("x",)
    call = parse({"add": [1, "$args.a"]})
    assert isinstance(call, Call) and call.op == "add" and len(call.args) == 2


@pytest.mark.parametrize(
    ("raw", "path", "message"),
    [
        ({"add": [1, {"nope": 2}]}, "add[1]", "unknown operator 'nope'"),
        ({"if": [True, {"sub": [1]}, 0]}, "if[1]", "sub takes 2 operand(s), got 1"),
        ({"not": {"if": [True, 1]}}, "not", "if takes 3 operand(s), got 2"),
        ({"object": {"total": {"a": 1, "b": 2}}}, "object.total", "exactly one key"),
        ({"map": {"over": [], "as": "x"}}, "map", "map takes {over: LIST, as: NAME, to: EXPR"),
        ({"not": {"format": "{x:%%%}"}}, "not.format", "bad format spec"),
        ({"has": "$args.x"}, "has", "has takes an argument's name"),
    ],
)
def test_a_malformed_expression_names_the_path_inside_it(raw, path, message):
    with pytest.raises(ExprError) as info:
        parse(raw)
    assert info.value.path == path
    assert message in info.value.message
    assert str(info.value).endswith(f"(at {path})") if path else message in str(info.value)


def test_a_name_out_of_scope_is_reported_where_it_is():
    with pytest.raises(ExprError) as info:
        compile_node(parse({"add": [1, {"mul": ["$args.a", "$total"]}]}), Scope(["a"]))
    assert info.value.path == "add[1].mul[1]"
    assert info.value.message.startswith("unknown name $total")
    with pytest.raises(ExprError, match=r"\$args.b is not a property"):
        compile_node(parse({"format": "{args.b}"}), Scope(["a"]))


def test_walk_visits_every_node_with_the_names_bound_around_it():
    node = parse({"filter": {"over": "$args.items", "as": "it", "where": {"gt": ["$it.qty", "$limit"]}}})
    seen = {(type(n).__name__, n.path, tuple(sorted(bound))) for n, bound in walk(node)}
    assert ("Ref", "filter.over", ()) in seen
    assert ("Ref", "filter.where.gt[0]", ("it",)) in seen
    assert ("Ref", "filter.where.gt[1]", ("it",)) in seen
    assert len(seen) == 5  # filter, over, gt, two refs


def test_analyses_come_from_the_tree():
    node = parse(
        {
            "if": [
                {"has": "note"},
                {"format": "at {now}: {args.note}"},
                {"map": {"over": "$args.items", "as": "now", "to": "$now.sku"}},
            ]
        }
    )
    assert free_names(node) == {"args", "now"}
    assert arguments_read(node) == {"note", "items"}
    assert uses_now(node)  # the template's {now}; the map's `now` is its own bound name
    assert not uses_now(parse({"map": {"over": "$xs", "as": "now", "to": "$now"}}))
    assert uses_now(parse("$now.date")) and not uses_now(parse("$$now"))
    assert free_names(parse({"add": ["$order.total", "$fee"]})) == {"order", "fee"}


def test_argument_name_is_the_one_value_argument():
    assert argument_name({"mul": ["$args.amount", 100]}) == "amount"
    assert argument_name({"add": ["$args.a", "$args.b"]}) is None
    assert argument_name({"literal": "$args.a"}) is None
    assert argument_name({"format": "{args.a}"}) is None  # a template is text, not the value
    assert argument_name({"bad": 1, "mapping": 2}) is None


def test_old_spellings_load_and_are_reported_with_the_new_name():
    node = parse({"add": [{"sum": "$xs"}, {"count": ["$xs", 1]}, {"get": ["$o", "k"]}]})
    found = [(d.path, d.old, d.new) for d in deprecations(node)]
    assert found == [
        ("add[0]", "sum", "sum_of"),
        ("add[1]", "count", "count_of"),
        ("add[2]", "get", "get_key"),
    ]
    assert "write `sum_of`" in str(deprecations(node)[0])
    assert deprecations(parse({"add": [{"sum_of": "$xs"}, 1]})) == []
    env = {"xs": [1, 1, 2], "o": {"k": 5}}
    old = compile_node(node, Scope(None, ["xs", "o"]))
    new = compile_expr(
        {"add": [{"sum_of": "$xs"}, {"count_of": ["$xs", 1]}, {"get_key": ["$o", "k"]}]},
        Scope(None, ["xs", "o"]),
    )
    assert old(env) == new(env) == 11
    assert {"sum", "sum_of", "get", "get_key", "has", "literal"} <= set(OPERATORS)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (7, (True, 7)),
        ({"add": [1, {"mul": [2, 3]}]}, (True, 7)),
        ({"object": {"a": [1, {"neg": 2}]}}, (True, {"a": [1, -2]})),
        ({"format": "x{{y}}"}, (True, "x{y}")),
        ({"map": {"over": [1, 2], "as": "v", "to": {"mul": ["$v", 10]}}}, (True, [10, 20])),
        ({"if": [False, {"div": [1, 0]}, "ok"]}, (True, "ok")),
        ({"div": [1, 0]}, (False, None)),  # fails on its own values: left to call time
        ({"add": [1, "$args.x"]}, (False, None)),
        ("$now", (False, None)),
        ({"has": "x"}, (False, None)),
    ],
)
def test_constant_says_whether_and_what(raw, expected):
    assert constant(parse(raw)) == expected


def test_templates_parse_into_literal_text_and_slots():
    node = parse_template("{{id}} {args.id} costs {args.price:.2f}")
    assert node.pieces[0] == "{id} "
    assert [r.text for r in node.refs] == ["args.id", "args.price"]
    fn = compile_node(node, Scope(["id", "price"]))
    assert fn({"args": {"id": "o1", "price": 2}}) == "{id} o1 costs 2.00"


_NAMES = sorted(set(OPERATORS))
_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=True),
    st.sampled_from(["a", "", "$x", "$x.a", "$x.-1", "$now", "2025-01-01T00:00:00Z", "1+2", "{x}"]),
)
_EXPR = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(_NAMES), inner, min_size=1, max_size=1),
        st.fixed_dictionaries({"over": inner, "as": st.just("v"), "to": inner}).map(lambda d: {"map": d}),
    ),
    max_leaves=8,
)


@given(
    raw=_EXPR, x=st.one_of(_LEAF, st.lists(_LEAF, max_size=3), st.dictionaries(st.sampled_from("ab"), _LEAF))
)
def test_any_expression_loads_or_is_a_load_problem_and_runs_or_is_a_tool_error(raw, x):
    """Nothing an expression or the values it meets can do raises anything but ExprError / ToolError."""
    try:
        fn = compile_node(parse(raw), Scope(None, ["x"]))
    except ExprError:
        return
    env = {"x": x, "now": "2025-01-01T00:00:00Z"}
    outcomes = []
    for _ in range(2):
        try:
            outcomes.append(("value", json.dumps(fn(dict(env)), sort_keys=True, default=str)))
        except ToolError as exc:
            outcomes.append(("error", str(exc)))
    assert outcomes[0] == outcomes[1]  # deterministic


@given(value=st.recursive(_LEAF, lambda inner: st.lists(inner) | st.dictionaries(st.text(max_size=3), inner)))
def test_literal_is_data_and_a_constant(value):
    node = parse({"literal": value})
    assert constant(node) == (True, value)
    assert json.dumps(compile_node(node, Scope(None))({}), default=str) == json.dumps(value, default=str)
