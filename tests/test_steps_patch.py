"""`update` with `patch`: an absent argument leaves its column, an explicit null sets null."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator import Domain, ToolError
from simulator.errors import SpecError

from .test_steps_registry import domain, tool

OPTIONAL = {"type": ["string", "null"]}
PROPS = {"id": {"type": "string"}, "email": OPTIONAL, "note": OPTIONAL, "name": {"type": "string"}}


def _edit(**step: Any) -> dict[str, Any]:
    return tool("edit", {"update": "people", "key": {"id": "$args.id"}, **step}, "write", PROPS)


@pytest.fixture(scope="module")
def patched(tmp_path_factory: pytest.TempPathFactory) -> Domain:
    return domain(
        tmp_path_factory.mktemp("patch"),
        [
            _edit(
                patch={
                    "email": "$args.email",
                    "note": {
                        "if": [{"is_null": "$args.note"}, None, {"concat": ["$row.note", "+", "$args.note"]}]
                    },
                },
                set={"name": {"upper": "$row.name"}},
            ),
            tool(
                "touch",
                {"update": "people", "key": {"id": "$args.id"}, "patch": {"email": "$args.email"}},
                "write",
                PROPS,
            ),
            tool(
                "bulk",
                {
                    "update": "people",
                    "where": [{"column": "note", "op": "ne", "value": None}],
                    "patch": {"note": "$args.note"},
                },
                "write",
                PROPS,
            ),
        ],
    )


def test_absent_leaves_null_sets_and_set_always_applies(patched: Domain) -> None:
    ep = patched.episode()
    row = ep.call("edit", {"id": "P-1"})  # nothing to patch: only `set`
    assert (row["name"], row["email"], row["note"]) == ("ADA", "ada@x.org", "a")
    row = ep.call("edit", {"id": "P-1", "email": None})  # explicit null: written
    assert (row["email"], row["note"]) == (None, "a")
    row = ep.call("edit", {"id": "P-1", "note": "b"})  # `$row` is the row before the change
    assert (row["email"], row["note"]) == (None, "a+b")
    assert ep.export()["people"][0]["email"] is None


def test_a_patch_with_nothing_given_changes_nothing_but_still_needs_the_row(patched: Domain) -> None:
    ep = patched.episode()
    before = ep.digest()
    assert ep.call("touch", {"id": "P-2"})["email"] is None
    assert ep.digest() == before and not ep.changes()
    with pytest.raises(ToolError, match="No people record with id P-9"):
        ep.call("touch", {"id": "P-9"})
    assert len(ep.call("bulk", {})) == 2 and ep.digest() == before
    assert [r["note"] for r in ep.call("bulk", {"note": "z"})] == ["z", "z"]


@given(
    given_args=st.fixed_dictionaries(
        {}, optional={"email": st.none() | st.text(max_size=5), "note": st.none()}
    )
)
def test_each_column_changes_exactly_when_its_argument_is_given(
    patched: Domain, given_args: dict[str, Any]
) -> None:
    ep = patched.episode()
    before = {r["id"]: r for r in ep.export()["people"]}["P-1"]
    after = ep.call("touch", {"id": "P-1", **given_args})
    assert after["email"] == given_args.get("email", before["email"])
    assert after["note"] == before["note"]


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ({"patch": {"email": "x@y.z"}}, "a `patch` value must read a tool argument ($args.NAME)"),
        (
            {"set": {"email": "$args.email"}, "patch": {"email": "$args.email"}},
            "email is in both `set` and `patch`",
        ),
        ({"patch": {"mail": "$args.email"}}, "table 'people' has no column 'mail'"),
        ({}, "update needs `set` or `patch`"),
    ],
)
def test_patch_mistakes_are_load_problems(tmp_path: Path, step: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError, match=re.escape(message)):
        domain(tmp_path, [_edit(**step)])


def test_the_agent_cannot_grow_the_update_statement_cache_without_bound(tmp_path: Path) -> None:
    """A tool patching n columns has 2^n column sets, and each call picks one: the UPDATE statements
    kept per table are bounded, and every set still updates exactly what it gave."""
    from simulator.plan.compiler import UPDATE_PLANS_KEPT

    names = [f"c{i}" for i in range(10)]  # 1,024 subsets
    columns = {"id": {"type": "string"}, **{n: {"type": "string", "nullable": True} for n in names}}
    wide = domain(
        tmp_path,
        [
            tool(
                "edit_wide",
                {"update": "wide", "key": {"id": "$args.id"}, "patch": {n: f"$args.{n}" for n in names}},
                "write",
                {"id": {"type": "string"}, **{n: OPTIONAL for n in names}},
            )
        ],
        tables={"wide": {"primary_key": "id", "columns": columns}},
        seed={"wide": [{"id": "W-1", **dict.fromkeys(names)}]},
    )
    run = next(r for r in wide.tools["edit_wide"].steps if hasattr(r, "plan_for"))
    with wide.episode() as ep:
        for mask in range(1, 1024):
            given = {n: str(mask) for i, n in enumerate(names) if mask >> i & 1}
            row = ep.call("edit_wide", {"id": "W-1", **given})
            assert {n: row[n] for n in given} == given
    assert run.plan_for.cache_info().currsize <= UPDATE_PLANS_KEPT < 1023


def test_the_agent_cannot_grow_a_search_statement_cache_without_bound(tmp_path: Path) -> None:
    """A search with n optional filters has 2^n statements, one per set of filters given: the
    statements kept are bounded, and every set still filters by what it gave."""
    from simulator.plan._query import STATEMENTS_KEPT

    names = [f"c{i}" for i in range(10)]
    columns = {"id": {"type": "string"}, **{n: {"type": "string", "nullable": True} for n in names}}
    where = [{"column": n, "value": f"$args.{n}"} for n in names]
    wide = domain(
        tmp_path,
        [tool("find_wide", {"list": "wide", "where": where}, "read", {n: OPTIONAL for n in names})],
        tables={"wide": {"primary_key": "id", "columns": columns}},
        seed={"wide": [{"id": "W-1", **dict.fromkeys(names, "v")}, {"id": "W-2", **dict.fromkeys(names)}]},
    )
    run = wide.tools["find_wide"].steps[0]
    with wide.episode() as ep:
        for mask in range(1, 1024):
            given = {n: "v" for i, n in enumerate(names) if mask >> i & 1}
            assert [r["id"] for r in ep.call("find_wide", given)] == ["W-1"]
            assert ep.call("find_wide", {**given, "c0": "other"}) == []
    assert len(run.query._cache) <= STATEMENTS_KEPT < 1023
