"""Filters: one predicate vocabulary with expressions, internal lookups, filters through foreign keys."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator import Domain
from simulator.errors import SpecError
from simulator.format.spec import FILTER_ALIASES, Tool, step_spellings
from simulator.plan._query import PREDICATES

from .test_steps_registry import MENTORED, MENTORS, domain, tool

#: text SQLite stores as given (no surrogates; a NUL ends text for some SQLite functions)
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=6)
STRING_TESTS = [op for op in PREDICATES if op not in ("in", "not_in")]  # (those take a list)
VALUE = {"v": {}}


def _vocabulary_domain(tmp_path: Path) -> Domain:
    tools = [
        tool("add", {"create": "teams", "values": {"name": "$args.v", "city": "x"}}, "write", VALUE),
        tool("all", {"list": "teams", "internal": True}),
    ]
    for op in [*STRING_TESTS, "in", "not_in"]:
        tools.append(
            tool(
                f"sql_{op}",
                {"list": "teams", "where": [{"column": "name", "op": op, "value": "$args.v"}]},
                props=VALUE,
            )
        )
        tools.append(
            tool(
                f"expr_{op}",
                [
                    {"list": "teams", "as": "rows"},
                    {
                        "return": {
                            "filter": {"over": "$rows", "as": "r", "where": {op: ["$r.name", "$args.v"]}}
                        }
                    },
                ],
                props=VALUE,
            )
        )
    return domain(tmp_path, tools)


@pytest.fixture(scope="module")
def vocabulary(tmp_path_factory: pytest.TempPathFactory) -> Domain:
    return _vocabulary_domain(tmp_path_factory.mktemp("vocabulary"))


def test_every_filter_predicate_is_named_like_its_expression_operator() -> None:
    from simulator.lang import OPERATORS

    assert set(PREDICATES) <= set(OPERATORS)
    assert set(FILTER_ALIASES.values()) <= set(PREDICATES)


@given(names=st.lists(TEXT, max_size=5), value=TEXT, others=st.lists(TEXT, max_size=3))
def test_a_filter_in_sql_and_its_expression_agree(
    vocabulary: Domain, names: list[str], value: str, others: list[str]
) -> None:
    ep = vocabulary.episode()
    for name in names:
        ep.call("add", {"v": name})
    for op in STRING_TESTS:
        sql, expr = ep.call(f"sql_{op}", {"v": value}), ep.call(f"expr_{op}", {"v": value})
        assert [r["id"] for r in sql] == [r["id"] for r in expr], op
    for op in ("in", "not_in"):
        members = [value, *others]
        sql, expr = ep.call(f"sql_{op}", {"v": members}), ep.call(f"expr_{op}", {"v": members})
        assert [r["id"] for r in sql] == [r["id"] for r in expr], op


def test_prefix_loads_as_starts_with_and_is_reported_as_an_old_spelling(tmp_path: Path) -> None:
    where = [{"column": "name", "op": "prefix", "value": "$args.v"}]
    d = domain(
        tmp_path,
        [
            tool("old", {"list": "people", "where": where}, props=VALUE),
            tool("new", {"list": "people", "where": [{**where[0], "op": "starts_with"}]}, props=VALUE),
            tool("tail", {"list": "people", "where": [{**where[0], "op": "ends_with"}]}, props=VALUE),
        ],
    )
    ep = d.episode()
    assert [p["name"] for p in ep.call("old", {"v": "A"})] == ["Ada"]
    assert ep.call("old", {"v": "A"}) == ep.call("new", {"v": "A"})
    assert [p["name"] for p in ep.call("tail", {"v": "o"})] == ["Bo"]
    assert [p["name"] for p in ep.call("tail", {"v": ""})] == ["Ada", "Bo", "Cy"]
    old = d.tools["old"].spec
    nested = Tool.model_validate(
        tool("t", {"for_each": [1], "as": "i", "steps": [{"count": "people", "where": where}]})
    )
    assert step_spellings(old.steps, "operation") == [("operation[0].where[0].op", "prefix", "starts_with")]
    assert step_spellings(nested.steps, "operation") == [
        ("operation[0].steps[0].where[0].op", "prefix", "starts_with")
    ]
    assert step_spellings(d.tools["new"].spec.steps, "operation") == []


def test_internal_lookups_never_skip_a_null_filter_and_are_not_capped(tmp_path: Path) -> None:
    by_email = [{"column": "email", "value": "$args.email"}]
    d = domain(
        tmp_path,
        [
            tool("search", {"list": "people", "where": by_email}, props={"email": {}}),
            tool("lookup", {"list": "people", "where": by_email, "internal": True}, props={"email": {}}),
            tool(
                "lenient",
                {"list": "people", "where": [{**by_email[0], "skip_if_null": True}], "internal": True},
                props={"email": {}},
            ),
            tool(
                "first",
                {"get": "people", "where": by_email, "internal": True, "optional": True},
                props={"email": {}},
            ),
            tool("capped", {"list": "people", "internal": True, "max_limit": 2}),
            tool("how_many", {"count": "people", "where": by_email, "internal": True}, props={"email": {}}),
        ],
    )
    ep = d.episode()
    assert len(ep.call("search", {})) == 3  # an agent's search: a missing argument is no filter
    assert ep.call("lookup", {}) == []  # internal: null matches nothing
    assert ep.call("how_many", {"email": None}) == 0
    assert ep.call("first", {}) is None
    assert [p["id"] for p in ep.call("lookup", {"email": "cy@y.org"})] == ["P-3"]
    assert len(ep.call("lenient", {})) == 3  # a filter may still ask to be skipped
    assert len(ep.call("capped", {})) == 2  # an explicit cap still holds
    lookup = d.tools["lookup"].steps[0]
    assert lookup.max_limit is None  # type: ignore[attr-defined]


def test_list_without_internal_keeps_its_cap(tmp_path: Path) -> None:
    d = domain(tmp_path, [tool("l", {"list": "people"}), tool("i", {"list": "people", "internal": True})])
    assert d.tools["l"].steps[0].max_limit == 100  # type: ignore[attr-defined]
    assert d.tools["i"].steps[0].max_limit is None  # type: ignore[attr-defined]


def _people(rows: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in rows]


def test_a_filter_follows_foreign_keys_in_sql(tmp_path: Path) -> None:
    city = {"city": {}}
    d = domain(
        tmp_path,
        [
            tool(
                "by_city",
                {"list": "people", "where": [{"column": "team.city", "value": "$args.city"}]},
                props=city,
            ),
            tool(
                "not_in_city",
                {"list": "people", "where": [{"column": "team.city", "op": "ne", "value": "$args.city"}]},
                props=city,
            ),
            tool(
                "first_by_city",
                {"get": "people", "where": [{"column": "team.city", "op": "ieq", "value": "$args.city"}]},
                props=city,
            ),
            tool("teamless", {"count": "people", "where": [{"column": "team", "value": None}]}),
        ],
    )
    ep = d.episode()
    assert _people(ep.call("by_city", {"city": "Oslo"})) == ["P-1"]
    assert _people(ep.call("by_city", {})) == ["P-1", "P-2", "P-3"]  # null: skipped, as any filter
    assert _people(ep.call("not_in_city", {"city": "Oslo"})) == ["P-2"]  # no team: no city to compare
    assert ep.call("first_by_city", {"city": "lima"})["id"] == "P-2"
    assert d.tools["by_city"].tables_read == {"people", "teams"}


def test_filters_through_foreign_keys_nest_and_may_refer_to_their_own_table(tmp_path: Path) -> None:
    d = domain(
        tmp_path,
        [
            tool(
                "mentored_by",
                {"list": "people", "where": [{"column": "mentor.name", "value": "$args.v"}]},
                props=VALUE,
            ),
            tool(
                "grand_city",
                {"list": "people", "where": [{"column": "mentor.mentor.team.city", "value": "$args.v"}]},
                props=VALUE,
            ),
        ],
        tables=MENTORS,
        seed=MENTORED,
    )
    ep = d.episode()
    assert _people(ep.call("mentored_by", {"v": "Ada"})) == ["P-2"]
    assert _people(ep.call("grand_city", {"v": "Oslo"})) == ["P-3"]  # P-3 -> P-2 -> P-1 -> T-1 (Oslo)


@pytest.mark.parametrize(
    ("column", "message"),
    [
        ("name.city", "people.name is not a foreign key (no `references`), so it cannot be followed"),
        ("team.budget", "table 'teams' has no column 'budget'"),
        ("squad.city", "table 'people' has no column 'squad'"),
    ],
)
def test_a_path_that_does_not_follow_a_foreign_key_is_a_load_problem(
    tmp_path: Path, column: str, message: str
) -> None:
    with pytest.raises(SpecError, match=re.escape(message)):
        domain(tmp_path, [tool("t", {"list": "people", "where": [{"column": column, "value": "x"}]})])
