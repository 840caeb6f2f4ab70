"""Language additions, end to end through a loaded domain: presence (`has`), list concatenation and
flattening, slicing, computed keys, negative indexes, `literal`, and one predicate vocabulary
shared by filters (SQL) and expressions (Python)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator import SpecError
from tests.test_language import make, tool

NULLABLE = {"type": ["string", "null"]}


def test_has_tells_an_absent_argument_from_a_null_one(tmp_path):
    d = make(
        tmp_path,
        [
            tool(
                "probe",
                {
                    "return": {
                        "object": {
                            "given": {"has": "note"},
                            "value": "$args.note",
                            "keyed": {"has": ["$args", "note"]},
                        }
                    }
                },
                props={"note": NULLABLE},
            )
        ],
    )
    with d.episode() as ep:
        assert ep.call("probe", {}) == {"given": False, "value": None, "keyed": False}
        assert ep.call("probe", {"note": None}) == {"given": True, "value": None, "keyed": True}
        assert ep.call("probe", {"note": "hi"}) == {"given": True, "value": "hi", "keyed": True}


def test_has_of_an_argument_the_tool_does_not_take_is_a_load_problem(tmp_path):
    with pytest.raises(SpecError, match="has: nope is not a property of the tool's input_schema"):
        make(tmp_path, [tool("probe", {"return": {"has": "nope"}}, props={"note": NULLABLE})])


def test_lists_strings_and_computed_keys(tmp_path):
    d = make(
        tmp_path,
        [
            tool(
                "shape",
                [
                    {"list": "people", "order_by": ["id"], "as": "rows"},
                    {
                        "return": {
                            "object": {
                                "both": {"concat_lists": ["$rows.id", ["X"], None]},
                                "flat": {"flatten": [[["$args.tag"], [1, [2]], 3]]},
                                "head": {"slice": ["$args.tag", 0, 3]},
                                "tail": {"slice": ["$args.tag", -2]},
                                "middle": {"slice": ["$rows.name", 1, -1]},
                                "last": {"at": ["$rows.name", -1]},
                                "last_path": "$rows.-1.id",
                                "past": {"at": ["$rows", -9]},
                                "keyed": {
                                    "set_key": [{"literal": {"a": 1}}, {"concat": ["k_", "$args.tag"]}, 2]
                                },
                                "from_null": {"set_key": [None, 7, "seven"]},
                                "data": {"literal": {"x": "$args.tag", "y": [{"add": [1, 2]}]}},
                                "text": {"get_key": [{"object_from": [["a"], ["b"]]}, "a"]},
                            }
                        }
                    },
                ],
                props={"tag": {"type": "string"}},
            )
        ],
    )
    with d.episode() as ep:
        out = ep.call("shape", {"tag": "abcdef"})
    assert out == {
        "both": ["P-1", "P-2", "P-3", "X"],
        "flat": ["abcdef", 1, [2], 3],
        "head": "abc",
        "tail": "ef",
        "middle": ["Bo"],
        "last": "Cy",
        "last_path": "P-3",
        "past": None,
        "keyed": {"a": 1, "k_abcdef": 2},
        "from_null": {"7": "seven"},
        "data": {"x": "$args.tag", "y": [{"add": [1, 2]}]},
        "text": "b",
    }


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ({"slice": [5, 0]}, "slice: expected a string or a list, got 5"),
        ({"slice": ["abc", 0.5]}, "slice: expected a whole number, got 0.5"),
        ({"set_key": [[1], "k", 1]}, "set_key: expected an object, got [1]"),
        ({"set_key": [{"literal": {}}, True, 1]}, "set_key: a key is a string or a number, got true"),
        ({"concat_lists": [[1], "ab"]}, 'concat_lists: expected a list, got "ab"'),
    ],
)
def test_bad_values_are_the_agents_tool_error_naming_the_operator(tmp_path, expr, message):
    from simulator import ToolError

    d = make(tmp_path, [tool("bad", {"return": expr})])
    with d.episode() as ep, pytest.raises(ToolError) as info:
        ep.call("bad", {})
    assert str(info.value) == message


PREDICATES = ["eq", "ne", "lt", "le", "gt", "ge", "ieq", "contains", "icontains", "starts_with", "ends_with"]
CHARS = st.sampled_from(list("aAbBzZ äÄßİıσΣ9"))
TEXT = st.text(CHARS, max_size=4)


def test_filters_and_expressions_agree_on_every_shared_predicate(tmp_path):
    tools = [
        tool(
            f"by_{op}",
            [
                {"list": "people", "where": [{"column": "name", "op": op, "value": "$args.q"}], "as": "sql"},
                {"list": "people", "as": "everyone"},
                {
                    "return": {
                        "object": {
                            "sql": {"sort": "$sql.id"},
                            "expr": {
                                "sort": {
                                    "pluck": [
                                        {
                                            "filter": {
                                                "over": "$everyone",
                                                "as": "p",
                                                "where": {op: ["$p.name", "$args.q"]},
                                            }
                                        },
                                        "id",
                                    ]
                                }
                            },
                        }
                    }
                },
            ],
            props={"q": {"type": "string"}},
        )
        for op in PREDICATES
    ]
    d = make(tmp_path, tools)

    @given(
        names=st.lists(TEXT, min_size=3, max_size=3),
        q=TEXT,
        op=st.sampled_from(PREDICATES),
    )
    def agree(names: list[str], q: str, op: str) -> None:
        with d.episode() as ep:
            for pid, name in zip(["P-1", "P-2", "P-3"], names, strict=True):
                ep.conn.execute("UPDATE people SET name = ? WHERE id = ?", (name, pid))
            out = ep.call(f"by_{op}", {"q": q})
        assert out["sql"] == out["expr"], (op, names, q)

    agree()
