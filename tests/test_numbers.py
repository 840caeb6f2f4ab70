"""The one numeric check (`simulator.lang.numbers`): its generated form is the same condition."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from simulator.lang.generated import Source
from simulator.lang.numbers import (
    INT64_MAX,
    INT64_MIN,
    LIMIT,
    finite_source,
    in_range,
    in_range_source,
    int_source,
    is_number,
)

EDGES = [
    0,
    -1,
    True,
    False,
    None,
    "1",
    INT64_MAX,
    INT64_MAX + 1,
    INT64_MIN,
    INT64_MIN - 1,
    LIMIT,
    LIMIT + 1,
    -LIMIT - 1,
]
VALUES = (
    st.sampled_from(EDGES)
    | st.integers()
    | st.floats()
    | st.integers(min_value=-(2**1100), max_value=2**1100)
)


def _check(write: Any) -> Any:
    src = Source()
    with src.block("def check(v):"):
        src.add(f"return bool({write(src)})")
    return src.define("check", "<test>")


@given(VALUES)
def test_the_generated_check_is_the_check(value: Any) -> None:
    assert _check(lambda src: in_range_source(src, "v"))(value) == in_range(value)
    int64 = _check(lambda src: in_range_source(src, "v", INT64_MIN, INT64_MAX))
    assert int64(value) == in_range(value, INT64_MIN, INT64_MAX)
    only_int = _check(lambda src: int_source(src, "v", INT64_MIN, INT64_MAX))
    assert only_int(value) == (type(value) is int and INT64_MIN <= value <= INT64_MAX)
    number = _check(lambda src: f"type(v) is int or {finite_source(src, 'v')}")
    assert number(value) == is_number(value)
