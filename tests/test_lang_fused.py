"""Fused arithmetic and comparisons (simulator.lang.fused) give exactly what the reference path's
closures give (`Scope(..., generated=False)`): the same value of the same type, or the same agent's
error, on any values (nulls, texts, bools, huge integers, non-finite floats, missing keys,
references through lists), which tool calls rarely reach."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator.lang import OPERATORS, Scope, compile_node, parse
from simulator.lang.errors import EvalError
from simulator.lang.nodes import Call
from simulator.lang.values import LIMIT

SHAPES = [
    {"round": [{"sub": ["$row.balance", "$args.amount"]}, 2]},
    {"round": [{"add": ["$total", {"mul": ["$product.price", "$item.quantity"]}]}, 2]},
    {"ge": ["$product.stock", "$item.quantity"]},
    {"lt": ["$total", 3]},
    {"sub": ["$row.balance", 1.5]},
    {"add": ["$total", "$args.amount", "$row.balance"]},
    {"mul": ["$item.quantity", "$product.price", "$total"]},
    {"round": ["$total"]},
    {"round": [{"mul": ["$total", 1e300]}, -1]},
    {"le": [{"add": ["$total", 1]}, {"sub": ["$row.balance", "$args.amount"]}]},
]

NUMBERS = st.one_of(
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e308, -1e308, LIMIT, LIMIT + 1, -LIMIT - 1, 10**400, 2.5, 0.01]),
)
VALUES = st.one_of(
    NUMBERS, NUMBERS, st.none(), st.booleans(), st.text(max_size=3), st.lists(NUMBERS, max_size=2)
)


def _holder(key: str) -> st.SearchStrategy[Any]:
    """A bound name holding `key` (or not): mostly a dict, sometimes a list of them, null, a number."""
    record = st.dictionaries(st.just(key), VALUES, max_size=1)
    return st.one_of(record, record, record, st.lists(record, max_size=2), st.none(), NUMBERS)


ENVS = st.fixed_dictionaries(
    {
        "row": _holder("balance"),
        "args": _holder("amount"),
        "product": st.one_of(
            st.fixed_dictionaries({"price": VALUES, "stock": VALUES}), st.fixed_dictionaries({})
        ),
        "item": _holder("quantity"),
        "total": VALUES,
    }
)


def outcome(fn: Any, env: dict[str, Any]) -> tuple[Any, ...]:
    try:
        value = fn(env)
    except EvalError as exc:
        return ("error", str(exc))
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return ("value", type(value), repr(value))


def _both(shape: Any) -> tuple[Any, Any]:
    node = parse(shape)
    names = ["row", "product", "item", "total"]
    assert isinstance(node, Call)
    return compile_node(node, Scope(None, names)), compile_node(node, Scope(None, names, generated=False))


COMPILED = [_both(shape) for shape in SHAPES]


def test_every_shape_here_is_fused() -> None:
    for fused, general in COMPILED:
        assert fused is not general and fused.__name__ == "fused"


@given(env=ENVS, which=st.integers(0, len(SHAPES) - 1))
def test_fused_is_the_general_evaluation(env: dict[str, Any], which: int) -> None:
    fused, general = COMPILED[which]
    assert outcome(fused, env) == outcome(general, env)


@pytest.mark.parametrize(
    "shape",
    [
        {"add": ["$total", {"len": "$row"}]},  # another operator inside: not fused (it could charge)
        {"sub": ["$row.a.b", 1]},  # a reference two levels deep
        {"round": ["$total", "$args.digits"]},  # digits not a literal
        {"add": ["$total", True]},  # a bool literal
        {"eq": ["$total", 1]},  # not an ordering comparison
    ],
)
def test_what_is_not_fused_compiles_the_general_way(shape: Any) -> None:
    node = parse(shape)
    compiled = compile_node(node, Scope(None, ["row", "total"]))
    assert compiled.__name__ != "fused"


def test_an_operator_put_in_place_of_a_known_one_is_not_fused(monkeypatch: pytest.MonkeyPatch) -> None:
    mine = dataclasses.replace(OPERATORS["sub"], fn=lambda a, b: "mine")
    monkeypatch.setitem(OPERATORS, "sub", mine)  # (in place: the registry's order stays)
    compiled = compile_node(parse({"sub": ["$total", 1]}), Scope(None, ["total"]))
    assert compiled({"total": 5}) == "mine"
