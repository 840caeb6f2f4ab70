"""The simulated clock's text form: reading a domain's `clock.start`, rendering `$now`.

`$now` (and every `default: $now`) is rendered like the domain's own timestamps: with an explicit
`clock.format` (a `strftime` format), or else in the shape of `clock.start` itself — the same
date/time separator, precision (minutes, seconds, fractions of a second) and zone (`Z`, an offset,
or none). A start ending in `Z`, or one whose shape is not one of those, renders as it always has:
`2026-01-01T09:00:00Z` (UTC), or Python's ISO form for another offset.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

#: the shapes of `clock.start` a rendering is derived from (anything else renders the classic way)
_SHAPE = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:(?P<sep>[T ])(?P<hm>\d{2}:\d{2})(?P<sec>:\d{2}(?P<frac>\.\d{1,6})?)?)?"
    r"(?P<zone>Z|[+-]\d{2}:?\d{2})?"
)

Render = Callable[[datetime], str]


def parse_time(text: str) -> datetime:
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def format_time(value: datetime) -> str:
    """The classic rendering: `...Z` in UTC, Python's ISO form at another offset."""
    if value.utcoffset() == UTC.utcoffset(None):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return value.isoformat()


def renderer(start: str, fmt: str | None = None) -> Render:
    """How `$now` is written for a clock starting at `start` (explicit `fmt`: a strftime format)."""
    if fmt is not None:
        return lambda value: value.strftime(fmt)
    shape = _SHAPE.fullmatch(start)
    if shape is None or shape["zone"] == "Z":
        return format_time
    derived = "%Y-%m-%d"
    if shape["sep"]:
        derived += shape["sep"] + "%H:%M" + (":%S" if shape["sec"] else "")
    digits = len(shape["frac"] or ".") - 1
    zone = shape["zone"]
    if zone is None:
        tail: Callable[[datetime], str] = lambda value: ""  # noqa: E731 - naive, like the start
    elif ":" in zone:
        tail = lambda value: _offset(value, ":")  # noqa: E731
    else:
        tail = lambda value: _offset(value, "")  # noqa: E731

    def render(value: datetime) -> str:
        text = value.strftime(derived)
        if digits:
            text += "." + f"{value.microsecond:06d}"[:digits]
        return text + tail(value)

    return render


def _offset(value: datetime, sep: str) -> str:
    delta = value.utcoffset()
    minutes = 0 if delta is None else int(delta.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hours, rest = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}{sep}{rest:02d}"


def rendering_problem(start: str, fmt: str | None) -> str | None:
    """Why a clock cannot be used (its start is no ISO-8601 date-time, or its format does not
    render one, so a `datetime` column would refuse `$now`); None when it can."""
    try:
        first = parse_time(start)
    except ValueError:
        return f"clock.start {start!r} is not an ISO-8601 date-time"
    if fmt is None:
        return None
    text = renderer(start, fmt)(first)
    try:
        parse_time(text)
    except ValueError:
        return (
            f"clock.format {fmt!r} renders the start as {text!r}, which is not an ISO-8601 "
            "date-time (datetime columns could not hold $now)"
        )
    return None
