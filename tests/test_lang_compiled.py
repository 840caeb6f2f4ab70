"""The compiler's tighter closures give exactly what the operators give: `pick`/`omit` of constant
keys (`Operator.specialize`), a literal last operand, a list of plain values, and `map`."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator.errors import ToolError
from simulator.lang import OPERATORS
from simulator.lang.expressions import Scope, compile_expr
from simulator.runtime.budget import Budget, Meter

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abcd"), inner, max_size=4),
    max_leaves=8,
)
KEYS = st.lists(st.sampled_from(["a", "b", "c", "x"]), max_size=5)


def outcome(fn: Any, *values: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(*values)
    except ToolError as exc:
        return type(exc).__name__, str(exc)


def evaluate(expr: Any, env: dict[str, Any]) -> tuple[str, Any]:
    return outcome(compile_expr(expr, Scope(None, env)), env)


@pytest.mark.parametrize("op", ["pick", "omit"])
@given(obj=VALUES, keys=KEYS)
def test_pick_and_omit_of_constant_keys_are_the_operator(op: str, obj: Any, keys: list[str]) -> None:
    fn = OPERATORS[op].fn
    expected = outcome(fn, obj, keys)
    got = evaluate({op: ["$o", keys]}, {"o": obj})
    assert repr(got) == repr(expected)
    if got[0] == "ok":
        assert list(got[1]) == list(expected[1])  # the same key order


@pytest.mark.parametrize("op", sorted(name for name, op in OPERATORS.items() if op.fn and op.arity == 2))
@given(
    a=VALUES,
    b=st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False) | st.text(max_size=3),
)
def test_a_literal_last_operand_is_the_operator_on_it(op: str, a: Any, b: Any) -> None:
    variable = evaluate({op: ["$a", "$b"]}, {"a": a, "b": b})
    if isinstance(b, str) and b.startswith("$"):
        return  # (a reference, not a literal)
    assert repr(evaluate({op: ["$a", b]}, {"a": a})) == repr(variable)


def test_a_list_of_plain_values_is_a_new_list_each_time() -> None:
    fn = compile_expr(["a", 1, None, True, 2.5], Scope(None))
    first = fn({})
    first.append("changed")
    assert fn({}) == ["a", 1, None, True, 2.5]
    assert fn({}) is not fn({})


@given(items=st.none() | st.lists(VALUES, max_size=5), outer=st.sampled_from([None, "kept"]))
def test_map_binds_its_name_inside_only_and_charges_per_item(items: Any, outer: str | None) -> None:
    env: dict[str, Any] = {"xs": items}
    if outer is not None:
        env["x"] = outer
    fn = compile_expr({"map": {"over": "$xs", "as": "x", "to": {"object": {"v": "$x"}}}}, Scope(None, ["xs"]))
    meter = Meter(Budget())
    with meter.run(sqlite3.connect(":memory:")):
        assert fn(env) == [{"v": v} for v in items or []]
    assert meter.eval_steps == len(items or [])
    assert env.get("x", None) == outer and ("x" in env) == (outer is not None)


def test_map_over_a_non_list_is_the_agents_error() -> None:
    fn = compile_expr({"map": {"over": "$xs", "as": "x", "to": "$x"}}, Scope(None, ["xs"]))
    assert outcome(fn, {"xs": "text"}) == ("EvalError", 'map: expected a list, got "text"')


@pytest.mark.parametrize("op", ["pick", "omit"])
@given(items=st.none() | VALUES | st.lists(VALUES, max_size=4), keys=KEYS)
def test_map_of_a_function_of_the_item_is_the_general_map(op: str, items: Any, keys: list[str]) -> None:
    fused = {"map": {"over": "$xs", "as": "r", "to": {op: ["$r", keys]}}}
    general = {"map": {"over": "$xs", "as": "r", "index": "i", "to": {op: ["$r", keys]}}}  # (not fused)
    results, charged = [], []
    for expr in (fused, general):
        meter = Meter(Budget())
        with meter.run(sqlite3.connect(":memory:")):
            results.append(evaluate(expr, {"xs": items}))
        charged.append(meter.eval_steps)
    assert repr(results[0]) == repr(results[1])
    assert charged[0] == charged[1]


DISPLAY_KEYS = st.sampled_from(["a", "b", "'", "x y", "__import__", "{k}"])


@given(
    fields=st.dictionaries(DISPLAY_KEYS, st.sampled_from(["$a", "$b.c", "$b", 1, "text"]), max_size=5),
    env=st.fixed_dictionaries({"a": VALUES, "b": VALUES}),
)
def test_list_and_object_displays_are_the_plain_closures(fields: dict[str, Any], env: dict[str, Any]) -> None:
    """A generated display (`_display`) gives what the reference path's comprehension gives, any keys."""
    for expr in ({"object": fields}, list(fields.values())):
        generated = compile_expr(expr, Scope(None, env))
        plain = compile_expr(expr, Scope(None, env, generated=False))
        assert outcome(generated, env) == outcome(plain, env)
