"""Composite primary keys end to end: DDL, get/update/delete by key, create (a key part generated
within its parent), change log, export, digest, seed checks, and scoring's diff matching rows by key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.diff import diff_states
from simulator import Domain, ToolError
from simulator.errors import SpecError

from .tables_kit import build, tool

S, INT = {"type": "string"}, {"type": "integer"}
TABLES: dict[str, Any] = {
    "flights": {
        "primary_key": "flight_id",
        "id_prefix": "FL-",
        "columns": {"flight_id": {"type": "string"}, "origin": {"type": "string"}},
    },
    "seats": {
        "primary_key": ["flight_id", "seat"],
        "columns": {
            "flight_id": {"type": "string", "references": "flights.flight_id"},
            "seat": {"type": "integer"},
            "cabin": {"type": "string", "enum": ["economy", "business"], "default": "economy"},
        },
    },
}
KEY = {"flight_id": "$args.flight_id", "seat": "$args.seat"}
TOOLS = [
    tool("add_flight", "write", {"create": "flights", "values": {"origin": "$args.origin"}}, {"origin": S}),
    tool(
        "add_seat",
        "write",
        {
            "create": "seats",
            "values": {
                "flight_id": "$args.flight_id",
                "seat": "$args.seat",
                "cabin": {"coalesce": ["$args.cabin", "economy"]},
            },
        },
        {"flight_id": S, "seat": INT, "cabin": S},
    ),
    tool("get_seat", "read", {"get": "seats", "key": KEY}, {"flight_id": S, "seat": INT}),
    tool(
        "upgrade",
        "write",
        {"update": "seats", "key": KEY, "set": {"cabin": "business"}},
        {"flight_id": S, "seat": INT},
    ),
    tool("remove_seat", "write", {"delete": "seats", "key": KEY}, {"flight_id": S, "seat": INT}),
    tool(
        "move_seat",
        "write",
        {"update": "seats", "key": KEY, "set": {"seat": "$args.to"}},
        {"flight_id": S, "seat": INT, "to": INT},
    ),
    tool(
        "list_seats",
        "read",
        {"list": "seats", "where": [{"column": "flight_id", "value": "$args.flight_id"}]},
        {"flight_id": S},
    ),
]
SEED: dict[str, list[dict[str, Any]]] = {
    "flights": [{"flight_id": "F1", "origin": "SFO"}, {"flight_id": "F2", "origin": "JFK"}],
    "seats": [
        {"flight_id": "F1", "seat": 1},
        {"flight_id": "F1", "seat": 2},
        {"flight_id": "F2", "seat": 1, "cabin": "business"},
    ],
}


@pytest.fixture(scope="module")
def domain(tmp_path_factory: pytest.TempPathFactory) -> Domain:
    return build(tmp_path_factory.mktemp("keys") / "d", TABLES, TOOLS, seed=SEED)


def test_the_key_is_the_pair_in_sqlite(domain: Domain) -> None:
    with domain.episode() as ep:
        ddl = ep.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'seats'").fetchone()[0]
    assert "PRIMARY KEY (flight_id, seat)" in ddl
    assert domain.seed_index()["seats"].keys() == {("F1", 1), ("F1", 2), ("F2", 1)}


def test_get_update_delete_by_the_whole_key(domain: Domain) -> None:
    with domain.episode() as ep:
        assert ep.call("get_seat", {"flight_id": "F2", "seat": 1})["cabin"] == "business"
        assert ep.call("upgrade", {"flight_id": "F1", "seat": 2}) == {
            "flight_id": "F1",
            "seat": 2,
            "cabin": "business",
        }
        assert ep.row("seats", ("F1", 1)) == {"flight_id": "F1", "seat": 1, "cabin": "economy"}
        assert ep.call("remove_seat", {"flight_id": "F1", "seat": 1})["seat"] == 1
        assert ep.row("seats", ("F1", 1)) is None
        with pytest.raises(ToolError, match=r"No seats record with flight_id F2, seat 2\."):
            ep.call("get_seat", {"flight_id": "F2", "seat": 2})
        assert ep.changes() == {("seats", ("F1", 2)), ("seats", ("F1", 1))}
        assert ep.export()["seats"] == [
            {"flight_id": "F1", "seat": 2, "cabin": "business"},
            {"flight_id": "F2", "seat": 1, "cabin": "business"},
        ]


def test_create_numbers_the_last_key_column_within_its_parent(domain: Domain) -> None:
    with domain.episode() as ep:
        assert ep.call("add_seat", {"flight_id": "F1"})["seat"] == 3
        assert ep.call("add_seat", {"flight_id": "F2"})["seat"] == 2
        flight = ep.call("add_flight", {"origin": "LHR"})["flight_id"]
        assert ep.call("add_seat", {"flight_id": flight})["seat"] == 1
        assert ep.call("add_seat", {"flight_id": "F2", "seat": 9})["seat"] == 9
        with pytest.raises(
            ToolError, match="cannot create seats: another row already has this flight_id, seat"
        ):
            ep.call("add_seat", {"flight_id": "F1", "seat": 1})
        with pytest.raises(ToolError, match="cannot create seats: a referenced record does not exist"):
            ep.call("add_seat", {"flight_id": "NOPE"})
        assert ("seats", (flight, 1)) in ep.changes()


def test_changing_a_key_logs_both_keys(domain: Domain) -> None:
    with domain.episode() as ep:
        assert ep.call("move_seat", {"flight_id": "F1", "seat": 2, "to": 5})["seat"] == 5
        assert ep.changes() == {("seats", ("F1", 2)), ("seats", ("F1", 5))}
        assert ep.call("get_seat", {"flight_id": "F1", "seat": 5})["seat"] == 5
        with pytest.raises(ToolError):
            ep.call("get_seat", {"flight_id": "F1", "seat": 2})


_CALLS = st.lists(
    st.one_of(
        st.tuples(st.just("add_seat"), st.fixed_dictionaries({"flight_id": st.sampled_from(["F1", "F2"])})),
        st.tuples(
            st.sampled_from(["upgrade", "remove_seat"]),
            st.fixed_dictionaries({"flight_id": st.sampled_from(["F1", "F2"]), "seat": st.integers(1, 4)}),
        ),
        st.tuples(
            st.just("move_seat"),
            st.fixed_dictionaries(
                {
                    "flight_id": st.sampled_from(["F1", "F2"]),
                    "seat": st.integers(1, 4),
                    "to": st.integers(1, 4),
                }
            ),
        ),
    ),
    max_size=8,
)


def _run(domain: Domain, calls: list[tuple[str, dict[str, Any]]], seed: int = 0) -> tuple[str, str]:
    with domain.episode(seed=seed) as ep:
        for name, args in calls:
            try:
                ep.call(name, args)
            except ToolError:
                pass
        return ep.digest(), ep.full_digest()


@given(_CALLS, _CALLS)
def test_digests_agree_exactly_when_the_states_do(
    domain: Domain, first: list[tuple[str, dict[str, Any]]], second: list[tuple[str, dict[str, Any]]]
) -> None:
    a, b = _run(domain, first), _run(domain, second)
    assert (a[0] == b[0]) == (a[1] == b[1])
    assert _run(domain, first, seed=5) == a  # seats are numbered the same in every seed
    assert (a[0] == _run(domain, [])[0]) == (a[1] == _run(domain, [])[1])


def test_scoring_matches_rows_by_their_whole_key(domain: Domain) -> None:
    gold: list[tuple[str, dict[str, Any]]] = [
        ("upgrade", {"flight_id": "F1", "seat": 2}),
        ("add_seat", {"flight_id": "F2", "cabin": "business"}),
    ]
    with domain.episode() as expected, domain.episode() as same, domain.episode() as other:
        for name, args in gold:
            expected.call(name, args)
            same.call(name, args)
        other.call("upgrade", {"flight_id": "F1", "seat": 1})  # the seat next to the one asked for
        other.call("add_seat", {"flight_id": "F2"})
        assert diff_states(expected, same).credit == 2.0
        report = diff_states(expected, other)
    assert report.expected_changes == 2 and report.credit < 2.0
    wrong = {(r.status, tuple(r.key)) for rows in report.tables.values() for r in rows}
    assert ("wrong", ("F2", 2)) in wrong  # the created seat, matched by its key within F2: wrong cabin
    assert {(r.status, tuple(r.key)) for r in report.missing} == {("missing", ("F1", 2))}
    assert {(r.status, tuple(r.key)) for r in report.unexpected} == {("unexpected", ("F1", 1))}


def test_created_children_of_created_parents_match_across_seeds(domain: Domain) -> None:
    calls = [("add_flight", {"origin": "LHR"})]
    with domain.episode(seed=1) as expected, domain.episode(seed=2) as actual:
        for ep in (expected, actual):
            flight = ep.call(*calls[0])["flight_id"]
            ep.call("add_seat", {"flight_id": flight, "cabin": "business"})
        assert expected.export()["flights"] != actual.export()["flights"]  # different generated ids
        report = diff_states(expected, actual)
    assert report.expected_changes == 2 and report.credit == 2.0


@pytest.mark.parametrize(
    ("tables", "seed", "message"),
    [
        (
            {**TABLES, "seats": {**TABLES["seats"], "primary_key": ["flight_id", "row"]}},
            {},
            "primary key 'row' is not a column",
        ),
        (
            {**TABLES, "seats": {**TABLES["seats"], "primary_key": ["seat", "seat"]}},
            {},
            "a column appears twice",
        ),
        (
            {
                **TABLES,
                "passes": {
                    "primary_key": "pass_id",
                    "columns": {
                        "pass_id": {"type": "string"},
                        "seat": {"type": "integer", "references": "seats.seat"},
                    },
                },
            },
            {},
            "foreign key to seats.seat, which is neither the key nor unique",
        ),
        (
            TABLES,
            {**SEED, "seats": [*SEED["seats"], {"flight_id": "F1", "seat": 2}]},
            "duplicate primary key (flight_id, seat)=('F1', 2)",
        ),
    ],
)
def test_bad_keys_are_load_problems(tmp_path: Path, tables: dict[str, Any], seed: Any, message: str) -> None:
    with pytest.raises(SpecError) as info:
        build(tmp_path / "d", tables, TOOLS, seed=seed)
    assert message in str(info.value)


def test_create_must_be_given_the_parent_part_of_the_key(tmp_path: Path) -> None:
    bad = tool("orphan", "write", {"create": "seats", "values": {"cabin": "economy"}})
    with pytest.raises(SpecError, match=r"seats.flight_id is part of the key \['flight_id', 'seat'\]"):
        build(tmp_path / "d", TABLES, [*TOOLS, bad], seed=SEED)


def test_a_single_column_key_written_as_a_list_is_that_key(tmp_path: Path) -> None:
    one = {
        **TABLES,
        "flights": {**TABLES["flights"], "primary_key": ["flight_id"]},
    }  # seats still refer to it
    listed = build(tmp_path / "a", one, TOOLS, seed=SEED)
    plain = build(tmp_path / "b", TABLES, TOOLS, seed=SEED)
    digests = []
    for d in (listed, plain):
        with d.episode(seed=4) as ep:
            ep.call("add_flight", {"origin": "LHR"})
            digests.append((ep.digest(), ep.changes()))
    assert digests[0] == digests[1]
    assert not listed.tables["flights"].composite
