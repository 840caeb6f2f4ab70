"""Reads take the shortest statement that gives the same rows: a list that takes every row from the
first runs without LIMIT/OFFSET; any other page binds them as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator import Domain
from tests.test_language import make, tool

PAGE = {"type": ["integer", "null"]}


@pytest.fixture(scope="module")
def people(tmp_path_factory: pytest.TempPathFactory) -> Domain:
    listing = {
        "list": "people",
        "where": [{"column": "team", "op": "ieq", "value": "$args.team"}],
        "order_by": ["-salary"],
        "limit": "$args.limit",
        "offset": "$args.offset",
        "max_limit": None,
    }
    props = {"team": {"type": ["string", "null"]}, "limit": PAGE, "offset": PAGE}
    return make(Path(tmp_path_factory.mktemp("q")), [tool("people", listing, props=props)])


def _statements(domain: Domain, args: dict[str, Any]) -> tuple[Any, list[str]]:
    with domain.episode() as ep:
        seen: list[str] = []
        ep.conn.set_trace_callback(seen.append)
        try:
            return ep.call("people", args), [s for s in seen if "FROM people" in s]
        finally:
            ep.conn.set_trace_callback(None)


@given(
    team=st.sampled_from([None, "core", "ops", "nobody"]),
    limit=st.none() | st.integers(-2, 4),
    offset=st.none() | st.integers(-1, 4),
)
def test_every_page_is_a_slice_of_the_whole_list(
    people: Domain, team: str | None, limit: int | None, offset: int | None
) -> None:
    everything, _ = _statements(people, {"team": team})
    rows, statements = _statements(people, {"team": team, "limit": limit, "offset": offset})
    start = max(0, offset or 0)
    end = None if limit is None else start + max(0, limit)
    assert rows == everything[start:end]
    assert len(statements) == 1
    assert ("LIMIT" in statements[0]) == (limit is not None or start > 0)


def test_the_whole_list_is_ordered_as_asked(people: Domain) -> None:
    rows, statements = _statements(people, {})
    assert [r["salary"] for r in rows] == [100.0, 70.0, 50.5]
    assert "LIMIT" not in statements[0] and "ORDER BY people.salary DESC, people.id ASC" in statements[0]
