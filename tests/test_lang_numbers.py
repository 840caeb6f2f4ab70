"""`num`, `ranged` and `whole` (simulator.lang.values) check every arithmetic operand and result:
their fast path for plain ints and finite floats gives exactly what the general checks give."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from simulator.lang.errors import EvalError
from simulator.lang.values import LIMIT, num, ranged, whole


def general_num(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "error"
    if isinstance(value, float) and not math.isfinite(value):
        return "error"
    return value


def general_ranged(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value) or isinstance(value, int) and abs(value) > LIMIT:
        return "error"
    return value


def general_whole(value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return "error"
    return value


def outcome(fn: Any, value: Any) -> Any:
    try:
        return fn(value, "op")
    except EvalError:
        return "error"


values = st.one_of(
    st.booleans(),
    st.integers(),
    st.integers(-(10**309), 10**309),
    st.sampled_from([LIMIT, -LIMIT, LIMIT + 1, -LIMIT - 1, 0.0, -0.0, math.inf, -math.inf, math.nan]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=2),
)


@given(values)
def test_the_fast_checks_are_the_general_ones(value: Any) -> None:
    for fast, general in ((num, general_num), (ranged, general_ranged), (whole, general_whole)):
        got, want = outcome(fast, value), general(value)
        assert repr(got) == repr(want)
