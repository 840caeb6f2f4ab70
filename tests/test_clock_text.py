"""`Domain.clock_text`: the classic UTC rendering by arithmetic (each day's text kept, the time of
day computed) gives exactly the text of the general rendering, at every tick count."""

from __future__ import annotations

import dataclasses
import functools
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator import Domain
from simulator.format.spec import Clock

from .tables_kit import build, tool

TABLES = {"events": {"primary_key": "event_id", "columns": {"event_id": {"type": "integer"}}}}


@functools.cache
def _domain() -> Domain:
    folder = Path(tempfile.mkdtemp(prefix="clock_text")) / "d"
    return build(folder, TABLES, [tool("now", "read", {"return": "$now"})])


def _general(d: Domain, ticks: int) -> str:
    return d.render_time(d.clock_start + timedelta(seconds=ticks * d.spec.clock.tick_seconds))


def _with_clock(d: Domain, start: str, tick: int) -> Domain:
    spec = d.spec.model_copy(update={"clock": Clock(start=start, tick_seconds=tick)})
    return dataclasses.replace(d, spec=spec)


_STARTS = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59))


@given(
    _STARTS,
    st.sampled_from(["Z", "", "+00:00", "+02:00", ".250Z"]),
    st.integers(-(10**6), 10**6),
    st.lists(st.integers(0, 10**7) | st.integers(-(10**12), 10**12), min_size=1, max_size=8),
)
def test_clock_text_is_the_general_rendering(start: datetime, zone: str, tick: int, ticks: list[int]) -> None:
    d = _with_clock(_domain(), start.isoformat(timespec="seconds") + zone, tick)
    for n in ticks + ticks:  # twice: the kept day texts and tick texts give the same
        try:
            expected: str | type[Exception] = _general(d, n)
        except OverflowError:
            expected = OverflowError
        if expected is OverflowError:
            with pytest.raises(OverflowError):
                d.clock_text(n)
        else:
            assert d.clock_text(n) == expected


def test_clock_text_past_the_kept_tick_counts() -> None:
    d = _with_clock(_domain(), "2026-01-01T09:00:00Z", 60)
    for n in (0, 1, 4095, 4096, 4097, 10**5, 10**6 + 7):
        assert d.clock_text(n) == _general(d, n)
    assert d.clock_text(4096 + 900) == "2026-01-04T20:16:00Z"
