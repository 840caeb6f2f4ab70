"""Value helpers shared by the operators: type checks worded for the agent, text for messages."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from .errors import EvalError
from .numbers import LIMIT, finite, in_range, is_number

__all__ = ["LIMIT", "brief", "dt", "dt_text", "json_type", "num", "ranged", "seq", "show", "whole"]


def json_type(value: Any) -> str:
    """The JSON type of a value, for messages: "a string", "an object", ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def show(value: Any) -> str:
    """A value as template/concat text: strings as they are, whole floats as `2.0`, others as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(value)
    return json.dumps(value, sort_keys=True, default=str)


def brief(value: Any, limit: int = 60) -> str:
    """A value as JSON text for an error message, cut to `limit` characters."""
    try:
        text = json.dumps(value, default=str, allow_nan=True)
    except ValueError:  # an integer too long to print
        text = f"<{json_type(value)}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def num(value: Any, op: str) -> float | int:
    if is_number(value):  # (the common cases first: every arithmetic operand passes here)
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise EvalError(f"{op}: expected a number, got {brief(value)}")
    if isinstance(value, float) and not finite(value):
        raise EvalError(f"{op}: expected a finite number, got {value}")
    return value


def ranged(value: float | int, op: str) -> float | int:
    """An arithmetic result, checked: an overflow is the agent's tool error, never inf or a giant integer."""
    if in_range(value):
        return value
    if isinstance(value, float) and not finite(value) or isinstance(value, int) and abs(value) > LIMIT:
        raise EvalError(f"{op}: the result is out of range (overflow)")
    return value


def seq(value: Any, op: str) -> list[Any]:
    """A list operand; null reads as an empty list."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise EvalError(f"{op}: expected a list, got {brief(value)}")
    return value


def whole(value: Any, op: str) -> int:
    """A whole number (an integer, or a float without a fraction) as an int."""
    if type(value) is int:
        return value
    if isinstance(value, float) and finite(value) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise EvalError(f"{op}: expected a whole number, got {brief(value)}")
    return value


def dt(value: Any, op: str) -> datetime:
    if not isinstance(value, str):
        raise EvalError(f"{op}: expected an ISO-8601 date-time string, got {brief(value)}")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise EvalError(f"{op}: {brief(value)} is not an ISO-8601 date-time") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def dt_text(value: datetime, like: str) -> str:
    if like.endswith("Z") and value.utcoffset() == timedelta(0):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return value.isoformat()
