"""Numbers in range: the one check of finite floats and bounded integers, and its generated form.

`in_range` (and `finite`, `is_number`) are the check in Python; `in_range_source` (and
`finite_source`, `int_source`) write the same condition into generated source, its bounds bound
as values. Callers word their own errors.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:
    from .generated import Source

FLOAT_MAX = sys.float_info.max
LIMIT = 10**308  # numbers beyond a double's range are out of range, integers included
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_LOW, _HIGH = -FLOAT_MAX, FLOAT_MAX


def finite(value: float) -> bool:
    """`value` is neither NaN nor infinite (of a float; an int passes unless past a double's range)."""
    return _LOW <= value <= _HIGH


def is_number(value: Any) -> TypeGuard[int | float]:
    """An int (not a bool) or a finite float."""
    t = type(value)
    return t is int or t is float and _LOW <= value <= _HIGH


def in_range(value: Any, low: int = -LIMIT, high: int = LIMIT) -> bool:
    """A finite float, or an int (not a bool) from `low` to `high`."""
    t = type(value)
    return t is float and _LOW <= value <= _HIGH or t is int and low <= value <= high


def finite_source(src: Source, v: str) -> str:
    """Source of: the local `v` is a finite float."""
    return f"type({v}) is float and {src.bind(_LOW, 'm')} <= {v} <= {src.bind(_HIGH, 'm')}"


def int_source(src: Source, v: str, low: int, high: int) -> str:
    """Source of: the local `v` is an int (not a bool) from `low` to `high`."""
    return f"type({v}) is int and {src.bind(low, 'm')} <= {v} <= {src.bind(high, 'm')}"


def in_range_source(src: Source, v: str, low: int = -LIMIT, high: int = LIMIT) -> str:
    """Source of `in_range(v, low, high)` for the local `v`."""
    return f"{finite_source(src, v)} or {int_source(src, v, low, high)}"
