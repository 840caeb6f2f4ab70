"""Related rows: `join` adds the row a foreign key refers to, in the same SQL statement."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator import Domain, ToolError
from simulator.errors import SpecError

from .test_steps_registry import MENTORED, MENTORS, domain, tool

CITY = {"city": {"type": "string"}}
#: today's way to search people by their team's city and show the team: ~20 lines of list + index_by + filter
WORKAROUND = [
    {"list": "teams", "max_limit": None, "as": "teams"},
    {"let": "by_id", "value": {"index_by": ["$teams", "id"]}},
    {"list": "people", "max_limit": None, "as": "everyone"},
    {
        "let": "found",
        "value": {
            "filter": {
                "over": "$everyone",
                "as": "p",
                "where": {
                    "eq": [
                        {"get_key": [{"get_key": ["$by_id", {"coalesce": ["$p.team", ""]}]}, "city"]},
                        "$args.city",
                    ]
                },
            }
        },
    },
    {
        "return": {
            "map": {
                "over": "$found",
                "as": "p",
                "to": {"merge": ["$p", {"object": {"team_row": {"get_key": ["$by_id", "$p.team"]}}}]},
            }
        }
    },
]
#: the same with a filter through the foreign key and a join
RELATED = {
    "list": "people",
    "where": [{"column": "team.city", "value": "$args.city"}],
    "join": {"team_row": "team"},
}


def test_a_join_replaces_list_index_by_and_filter(tmp_path: Path) -> None:
    d = domain(tmp_path, [tool("old", WORKAROUND, props=CITY), tool("new", RELATED, props=CITY)])
    ep = d.episode()
    for city in ("Oslo", "Lima", "Rome"):
        assert ep.call("new", {"city": city}) == ep.call("old", {"city": city})
    assert ep.call("new", {"city": "Oslo"})[0]["team_row"] == {"id": "T-1", "name": "Core", "city": "Oslo"}
    assert d.tools["new"].tables_read == {"people", "teams"}


@pytest.fixture(scope="module")
def growing(tmp_path_factory: pytest.TempPathFactory) -> Domain:
    """The workaround and the related-row form side by side, with tools that add teams and people."""
    team = {"name": {"type": "string"}, "city": {"type": "string"}}
    person = {"name": {"type": "string"}, "team": {"type": ["string", "null"]}}
    children = {"rows": "people", "by": "team", "order_by": ["name"]}
    return domain(
        tmp_path_factory.mktemp("growing"),
        [
            tool("old", WORKAROUND, props=CITY),
            tool("new", RELATED, props=CITY),
            tool(
                "add_team",
                {"create": "teams", "values": {"name": "$args.name", "city": "$args.city"}},
                "write",
                team,
            ),
            tool(
                "add_person",
                {"create": "people", "values": {"name": "$args.name", "team": "$args.team"}},
                "write",
                person,
            ),
            tool("teams", {"list": "teams", "internal": True, "join": {"members": children}}),
            tool("people", {"list": "people", "internal": True, "order_by": ["name"]}),
        ],
    )


CITIES = st.sampled_from(["Oslo", "Lima", "oslo", ""])


@given(
    teams=st.lists(CITIES, max_size=4),
    people=st.lists(st.tuples(st.text(max_size=3), st.integers(-1, 5)), max_size=8),
    city=CITIES,
)
def test_related_rows_agree_with_the_workaround_on_any_data(
    growing: Domain, teams: list[str], people: list[tuple[str, int]], city: str
) -> None:
    ep = growing.episode()
    ids = [ep.call("add_team", {"name": f"t{i}", "city": c})["id"] for i, c in enumerate(teams)]
    for name, at in people:  # a team of the list, or none (-1, or past the end)
        ep.call("add_person", {"name": name, "team": ids[at] if 0 <= at < len(ids) else None})
    assert ep.call("new", {"city": city}) == ep.call("old", {"city": city})
    everyone = ep.call("people", {})
    for t in ep.call("teams", {}):
        assert t["members"] == [p for p in everyone if p["team"] == t["id"]]


def test_joined_rows_are_null_without_a_referenced_row_and_get_keeps_its_error(tmp_path: Path) -> None:
    d = domain(
        tmp_path,
        [
            tool("everyone", {"list": "people", "join": {"crew": "team"}}),
            tool(
                "one",
                {"get": "people", "key": {"id": "$args.id"}, "join": {"crew": "team"}},
                props={"id": {"type": "string"}},
            ),
        ],
    )
    ep = d.episode()
    assert [p["crew"] and p["crew"]["name"] for p in ep.call("everyone", {})] == ["Core", "Ops", None]
    assert ep.call("one", {"id": "P-2"})["crew"]["city"] == "Lima"
    assert ep.call("one", {"id": "P-3"})["crew"] is None
    with pytest.raises(ToolError, match="No people record with id P-9"):
        ep.call("one", {"id": "P-9"})
    ep.reads = set()
    ep.call("one", {"id": "P-1"})
    assert ep.reads == {("people", "P-1"), ("teams", "*")}  # a join reads the related table


def test_joins_follow_key_paths_and_a_table_may_join_itself(tmp_path: Path) -> None:
    d = domain(
        tmp_path,
        [
            tool(
                "tree",
                {
                    "list": "people",
                    "join": {"guide": "mentor", "guide_team": "mentor.team", "grand": "mentor.mentor"},
                    "order_by": ["-name"],
                },
            )
        ],
        tables=MENTORS,
        seed=MENTORED,
    )
    rows = {p["id"]: p for p in d.episode().call("tree", {})}
    assert list(rows) == ["P-3", "P-2", "P-1"]
    assert rows["P-3"]["guide"]["id"] == "P-2" and rows["P-3"]["grand"]["id"] == "P-1"
    assert rows["P-3"]["guide_team"]["city"] == "Lima"
    assert rows["P-2"]["guide_team"]["city"] == "Oslo" and rows["P-2"]["grand"] is None
    assert rows["P-1"]["guide"] is None and rows["P-1"]["guide_team"] is None


def test_a_join_lists_the_rows_that_refer_to_each_row(tmp_path: Path) -> None:
    members = {"rows": "people", "by": "team", "order_by": ["-name"]}
    d = domain(
        tmp_path,
        [
            tool("teams", {"list": "teams", "join": {"members": members}, "order_by": ["city"]}),
            tool(
                "team",
                {
                    "get": "teams",
                    "key": {"id": "$args.id"},
                    "join": {"members": {"rows": "people", "by": "team"}},
                },
                props={"id": {"type": "string"}},
            ),
            tool(
                "mentees",
                {
                    "list": "people",
                    "join": {"mentees": {"rows": "people", "by": "mentor"}, "guide": "mentor"},
                },
            ),
        ],
        tables=MENTORS,
        seed={
            **MENTORED,
            "people": [*MENTORED["people"], {**MENTORED["people"][0], "id": "P-4", "name": "Di"}],
        },
    )
    ep = d.episode()
    teams = ep.call("teams", {})
    assert [(t["city"], [p["name"] for p in t["members"]]) for t in teams] == [
        ("Lima", ["Bo"]),
        ("Oslo", ["Di", "Ada"]),
    ]
    assert [p["id"] for p in ep.call("team", {"id": "T-1"})["members"]] == ["P-1", "P-4"]  # by key
    ep.call("team", {"id": "T-2"})
    rows = {p["id"]: p for p in ep.call("mentees", {})}
    assert [m["id"] for m in rows["P-1"]["mentees"]] == ["P-2"] and rows["P-3"]["mentees"] == []
    assert rows["P-3"]["guide"]["id"] == "P-2"
    assert d.tools["teams"].tables_read == {"teams", "people"}


@pytest.mark.parametrize(
    ("join", "where", "message"),
    [
        (
            {"x": {"rows": "teams", "by": "city"}},
            "join.x.by",
            "teams.city does not refer to people (it has no `references`)",
        ),
        (
            {"x": {"rows": "people", "by": "team"}},
            "join.x.by",
            "people.team does not refer to people (it refers to teams.id)",
        ),
        ({"x": {"rows": "log", "by": "nope"}}, "join.x.by", "table 'log' has no column 'nope'"),
        ({"team": "team"}, "join.team", "'team' is a column of people; name the joined row otherwise"),
        (
            {"x": "name"},
            "join.x",
            "people.name is not a foreign key (no `references`), so it cannot be followed",
        ),
        ({"x": "squad"}, "join.x", "table 'people' has no column 'squad'"),
    ],
)
def test_join_mistakes_are_load_problems_at_their_place(
    tmp_path: Path, join: dict[str, str], where: str, message: str
) -> None:
    with pytest.raises(
        SpecError, match=re.escape(f"tools[0] (t).operation[0].{where}: ") + ".*" + re.escape(message)
    ):
        domain(tmp_path, [tool("t", {"list": "people", "join": join})])


def test_every_bad_join_and_patch_entry_is_its_own_problem(tmp_path: Path) -> None:
    operation = [
        {
            "list": "people",
            "join": {"a": "squad", "b": {"rows": "teams", "by": "city"}, "c": "team"},
            "as": "ps",
        },
        {"update": "people", "key": {"id": "P-1"}, "patch": {"mail": "$args.v", "note": "fixed"}},
    ]
    with pytest.raises(SpecError) as caught:
        domain(tmp_path, [tool("t", operation, "write", {"v": {}})])
    text = str(caught.value)
    assert text.startswith("4 problem(s)")
    for where in (
        "operation[0].join.a",
        "operation[0].join.b.by",
        "operation[1].patch.mail",
        "operation[1].patch.note",
    ):
        assert f"(t).{where}: " in text
