"""`$now` follows the domain's own timestamps: an explicit `clock.format`, or the shape of `clock.start`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator.errors import SpecError
from simulator.runtime.clock import format_time, parse_time, renderer

from .tables_kit import build, tool

TABLES = {
    "events": {
        "primary_key": "event_id",
        "columns": {
            "event_id": {"type": "integer"},
            "note": {"type": "string"},
            "at": {"type": "datetime", "default": "$now"},
        },
    }
}
TOOLS = [
    tool(
        "log", "write", {"create": "events", "values": {"note": "$args.note"}}, {"note": {"type": "string"}}
    ),
    tool("now", "read", {"return": "$now"}),
]


def _clock_run(tmp_path: Path, clock: dict[str, object]) -> tuple[str, str, str]:
    """$now before any write, the datetime default a write stores, and $now after that write."""
    domain = build(tmp_path / "d", TABLES, TOOLS, clock=clock)
    with domain.episode() as ep:
        first = ep.call("now")
        row = ep.call("log", {"note": "x"})
        return first, row["at"], ep.call("now")


@pytest.mark.parametrize(
    ("clock", "expected"),
    [
        (
            {"start": "2026-01-01T09:00:00Z"},
            ("2026-01-01T09:00:00Z", "2026-01-01T09:00:00Z", "2026-01-01T09:01:00Z"),
        ),
        (
            {"start": "2024-05-15 15:00:00"},
            ("2024-05-15 15:00:00", "2024-05-15 15:00:00", "2024-05-15 15:01:00"),
        ),
        ({"start": "2024-05-15T15:00"}, ("2024-05-15T15:00", "2024-05-15T15:00", "2024-05-15T15:01")),
        (
            {"start": "2024-05-15T23:59:30.250+02:00", "tick_seconds": 45},
            (
                "2024-05-15T23:59:30.250+02:00",
                "2024-05-15T23:59:30.250+02:00",
                "2024-05-16T00:00:15.250+02:00",
            ),
        ),
        (
            {"start": "2024-05-15T15:00:00+0530"},
            ("2024-05-15T15:00:00+0530",) * 2 + ("2024-05-15T15:01:00+0530",),
        ),
        (
            {"start": "2024-05-15T15:00:00+00:00"},
            ("2024-05-15T15:00:00+00:00",) * 2 + ("2024-05-15T15:01:00+00:00",),
        ),
        (
            {"start": "2026-01-01T09:00:00Z", "format": "%Y-%m-%d %H:%M"},
            ("2026-01-01 09:00", "2026-01-01 09:00", "2026-01-01 09:01"),
        ),
    ],
)
def test_now_and_datetime_defaults_follow_the_clock(
    tmp_path: Path, clock: dict[str, object], expected: tuple[str, str, str]
) -> None:
    assert _clock_run(tmp_path, clock) == expected


@pytest.mark.parametrize(
    ("clock", "message"),
    [
        (
            {"start": "2026-01-01T09:00:00Z", "format": "%d/%m/%Y"},
            "clock.format '%d/%m/%Y' renders the start as '01/01/2026'",
        ),
        ({"start": "yesterday"}, "clock.start 'yesterday' is not an ISO-8601 date-time"),
    ],
)
def test_a_clock_that_cannot_render_a_datetime_is_a_load_problem(
    tmp_path: Path, clock: dict[str, object], message: str
) -> None:
    with pytest.raises(SpecError) as info:
        build(tmp_path / "d", TABLES, TOOLS, clock=clock)
    text = str(info.value)
    assert "clock" in text and message in text


_STARTS = st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2999, 12, 30))


@given(_STARTS, st.integers(0, 10**7))
def test_a_start_ending_in_z_renders_exactly_as_before(start: datetime, seconds: int) -> None:
    text = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    value = parse_time(text) + timedelta(seconds=seconds)
    assert renderer(text)(value) == format_time(value) == value.strftime("%Y-%m-%dT%H:%M:%SZ")


@given(
    _STARTS,
    st.sampled_from(["T", " "]),
    st.integers(0, 7),  # 0: minutes only; 1: seconds; 2..7: 1..6 fraction digits
    st.sampled_from([None, "+02:00", "-05:30", "+0100", "+00:00"]),
)
def test_a_derived_rendering_writes_the_start_as_itself(
    start: datetime, sep: str, precision: int, zone: str | None
) -> None:
    text = start.strftime(f"%Y-%m-%d{sep}%H:%M")
    if precision:
        text += start.strftime(":%S")
    if precision > 1:
        text += "." + f"{start.microsecond:06d}"[: precision - 1]
    text += zone or ""
    render = renderer(text)
    first = parse_time(text)
    assert render(first) == text
    later = render(first + timedelta(minutes=1))
    assert len(later) == len(text) and parse_time(later) == first + timedelta(minutes=1)
    assert render(datetime(2020, 1, 1, tzinfo=UTC)) != ""
