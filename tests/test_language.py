"""The operation language's general features, each on its own small domain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from scoring import load_domain
from scoring.tasks import Task
from scoring.validation.gold import replay_gold
from simulator import ToolError
from simulator.errors import TaskError

TABLES = {
    "people": {
        "primary_key": "id",
        "id_prefix": "P-",
        "columns": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "team": {"type": "string"},
            "salary": {"type": "number"},
            "joined": {"type": "datetime"},
        },
    },
    "notes": {
        "primary_key": "n",
        "columns": {
            "n": {"type": "integer"},
            "person": {"type": "string", "references": "people.id"},
            "text": {"type": "string"},
        },
    },
}
SEED = [
    {"id": "P-1", "name": "Ada", "team": "Core", "salary": 100.0, "joined": "2025-01-06T09:00:00Z"},
    {"id": "P-2", "name": "Bo", "team": "core", "salary": 50.5, "joined": "2025-03-01T09:00:00Z"},
    {"id": "P-3", "name": "Cy", "team": "Ops", "salary": 70.0, "joined": "2024-12-31T23:00:00Z"},
]


def make(tmp_path: Path, tools: list[dict], tasks: list[dict] | None = None):
    folder = tmp_path / "lang"
    (folder / "seed").mkdir(parents=True)
    (folder / "domain.yaml").write_text(
        yaml.safe_dump({"name": "lang", "version": "1.0.0", "tables": TABLES, "tools": tools})
    )
    (folder / "seed" / "people.jsonl").write_text("".join(json.dumps(r) + "\n" for r in SEED))
    if tasks:
        (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return load_domain(folder)


def tool(name: str, operation, kind: str = "read", props: dict | None = None) -> dict:
    return {
        "name": name,
        "description": name,
        "kind": kind,
        "input_schema": {"type": "object", "properties": props or {}},
        "operation": operation,
    }


def test_when_sum_collect_format_and_index_paths(tmp_path):
    d = make(
        tmp_path,
        [
            tool(
                "payroll",
                [
                    {
                        "sum": "people",
                        "column": "salary",
                        "where": [{"column": "team", "op": "ieq", "value": "$args.team"}],
                        "as": "total",
                    },
                    {"return": "$total"},
                ],
                props={"team": {"type": "string"}},
            ),
            tool(
                "note_all",
                [
                    {"list": "people", "order_by": ["-salary"], "as": "ps"},
                    {
                        "for_each": "$ps",
                        "as": "p",
                        "collect": "made",
                        "steps": [
                            {
                                "create": "notes",
                                "values": {
                                    "person": "$p.id",
                                    "text": {"format": "{p.name} earns {p.salary:.2f}"},
                                },
                                "when": {"gt": ["$p.salary", 60]},
                            }
                        ],
                    },
                    {"require": {"eq": ["$ps.0.name", "Ada"]}, "error": "first is {ps.0.name}"},
                    {"return": "$made"},
                ],
                kind="write",
            ),
        ],
    )
    ep = d.episode()
    assert ep.call("payroll", {"team": "CORE"}) == 150.5
    assert ep.call("payroll", {"team": "none"}) == 0
    made = ep.call("note_all", {})
    assert [m and m["text"] for m in made] == ["Ada earns 100.00", "Cy earns 70.00", None]
    assert [m["n"] for m in made if m] == [1, 2]  # integer keys: max + 1


def test_datetime_and_string_operators(tmp_path):
    expr = {
        "object": {
            "later": {"datetime_add": ["$p.joined", 86400 * 2]},
            "days": {"div": [{"datetime_diff": ["$p.joined", "2025-01-01T09:00:00Z"]}, 86400]},
            "weekday": {"weekday": "$p.joined"},
            "date": {"date": "$p.joined"},
            "starts": {"starts_with": ["$p.name", "A"]},
            "joined": {"join": [{"sort": [["b", "a", "c"]]}, "+"]},
            "by": {"pluck": [{"sort": ["$all", "salary"]}, "name"]},
        }
    }
    d = make(
        tmp_path,
        [
            tool(
                "info",
                [
                    {"get": "people", "key": {"id": "P-1"}, "as": "p"},
                    {"list": "people", "as": "all"},
                    {"return": expr},
                ],
            )
        ],
    )
    assert d.episode().call("info", {}) == {
        "later": "2025-01-08T09:00:00Z",
        "days": 5.0,
        "weekday": 1,
        "date": "2025-01-06",
        "starts": True,
        "joined": "a+b+c",
        "by": ["Bo", "Cy", "Ada"],
    }


def test_get_order_by_picks_the_row(tmp_path):
    d = make(
        tmp_path,
        [
            tool(
                "newest",
                {
                    "get": "people",
                    "where": [{"column": "salary", "op": "gt", "value": 0}],
                    "order_by": ["-joined"],
                },
            )
        ],
    )
    assert d.episode().call("newest", {})["id"] == "P-2"


def test_gold_calls_can_use_earlier_results_under_any_seed(tmp_path):
    tools = [
        tool(
            "hire",
            {
                "create": "people",
                "values": {
                    "name": "$args.name",
                    "team": "New",
                    "salary": 1,
                    "joined": "2026-01-01T00:00:00Z",
                },
            },
            "write",
            {"name": {"type": "string"}},
        ),
        tool(
            "note",
            {"create": "notes", "values": {"person": "$args.person", "text": "hi"}},
            "write",
            {"person": {"type": "string"}},
        ),
    ]
    task = {
        "id": "t",
        "instruction": "hire Zed and note it",
        "calls": [
            {"name": "hire", "arguments": {"name": "Zed"}},
            {"name": "note", "arguments": {"person": "$calls.0.id"}},
        ],
    }
    d = make(tmp_path, tools, [task])
    ids = set()
    for seed in (0, 1, 2):
        ep = d.episode(seed=seed)
        outcomes = replay_gold(ep, d.tasks[0])
        assert outcomes[1].arguments["person"] == outcomes[0].result["id"]
        ids.add(outcomes[0].result["id"])
    assert len(ids) == 3
    bad = Task(id="b", instruction="x", calls=[{"name": "note", "arguments": {"person": "P-404"}}])
    with pytest.raises(TaskError, match="gold call 0 \\(note\\) failed"):
        replay_gold(d.episode(), bad)
    wrong = Task(
        id="w",
        instruction="x",
        calls=[{"name": "note", "arguments": {"person": "P-1"}, "expect_error": True}],
    )
    with pytest.raises(TaskError, match="marked expect_error but succeeded"):
        replay_gold(d.episode(), wrong)


def test_foreign_keys_are_enforced_with_a_readable_error(tmp_path):
    d = make(
        tmp_path,
        [
            tool(
                "note",
                {"create": "notes", "values": {"person": "$args.person", "text": "x"}},
                "write",
                {"person": {"type": "string"}},
            )
        ],
    )
    with pytest.raises(ToolError, match="a referenced record does not exist"):
        d.episode().call("note", {"person": "P-404"})


def test_map_filter_object_from_pick_and_calc(tmp_path):
    expr = {
        "object": {
            "by_id": {
                "index_by": [
                    {"map": {"over": "$all", "as": "p", "to": {"pick": ["$p", ["id", "name"]]}}},
                    "id",
                ]
            },
            "rich": {"filter": {"over": "$all", "as": "p", "where": {"gt": ["$p.salary", 60]}}},
            "calc": [
                {"calc": "(1 + 2) * 3 / 4"},
                {"calc": "7 // 2"},
                {"calc": "1/0"},
                {"calc": "__import__('os')"},
            ],
            "str": {"to_string": {"round": [{"calc": "4"}, 2]}},
            "desc": {"pluck": [{"sort": ["$all", "-salary"]}, "id"]},
            "lean": {"compact": {"object": {"a": 1, "b": None}}},
        }
    }
    d = make(
        tmp_path,
        [
            tool("t", [{"list": "people", "as": "all"}, {"return": expr}]),
            tool(
                "who",
                {"get": "people", "where": [{"column": "name", "op": "ieq", "value": "$args.n"}]},
                props={"n": {"type": "string"}},
            ),
        ],
    )
    out = d.episode().call("t", {})
    assert out["by_id"] == {
        "P-1": {"id": "P-1", "name": "Ada"},
        "P-2": {"id": "P-2", "name": "Bo"},
        "P-3": {"id": "P-3", "name": "Cy"},
    }
    assert [p["id"] for p in out["rich"]] == ["P-1", "P-3"]
    assert out["calc"] == [2.25, 3, None, None]
    assert out["str"] == "4" and out["desc"] == ["P-1", "P-3", "P-2"] and out["lean"] == {"a": 1}
    assert d.episode().call("who", {"n": "ADA"})["id"] == "P-1"


def test_loop_carried_let_and_python_float_semantics(tmp_path):
    """A `let` inside for_each rebinds the outer name (accumulation), and arithmetic is Python's, left to right."""
    ops = [
        {"let": "total", "value": 0},
        {"for_each": "$args.xs", "as": "x", "steps": [{"let": "total", "value": {"add": ["$total", "$x"]}}]},
        {
            "return": {
                "object": {
                    "loop": "$total",
                    "sum": {"sum": "$args.xs"},
                    "round": {"round": ["$total", 2]},
                    "half": {"round": [2.675, 2]},
                }
            }
        },
    ]
    d = make(tmp_path, [tool("acc", ops, props={"xs": {"type": "array"}})])
    xs = [0.1, 0.2, 0.3, 1e16, 1.0, -1e16]
    expected = 0
    for x in xs:
        expected += x
    out = d.episode().call("acc", {"xs": xs})
    assert out["loop"] == expected and out["sum"] == expected  # bit-identical to a plain Python loop
    assert out["round"] == round(expected, 2) and out["half"] == round(2.675, 2) == 2.67


def test_unicode_case_folding_agrees_between_sql_and_expressions(tmp_path):
    d = make(
        tmp_path,
        [
            tool(
                "who",
                {"list": "people", "where": [{"column": "name", "op": "icontains", "value": "$args.n"}]},
                props={"n": {"type": "string"}},
            )
        ],
    )
    ep = d.episode()
    ep.conn.execute("UPDATE people SET name = 'Ádám' WHERE id = 'P-1'")
    assert [p["id"] for p in ep.call("who", {"n": "ÁDÁM"})] == ["P-1"]


def test_fragments_are_inlined_with_their_own_scope(tmp_path):
    folder = tmp_path / "frag"
    (folder / "seed").mkdir(parents=True)
    spec = {
        "name": "frag",
        "version": "1.0.0",
        "tables": TABLES,
        "fragments": {
            "person_view": {
                "params": ["pid"],
                "steps": [
                    {"get": "people", "key": {"id": "$pid"}, "as": "p", "error": "no person {pid}"},
                    {"return": {"object": {"who": {"upper": "$p.name"}, "team": "$p.team"}}},
                ],
            }
        },
        "tools": [
            tool(
                "view",
                {"use": "person_view", "with": {"pid": "$args.id"}, "as": "v"},
                props={"id": {"type": "string"}},
            )
        ],
    }
    (folder / "domain.yaml").write_text(yaml.safe_dump(spec))
    (folder / "seed" / "people.jsonl").write_text("".join(json.dumps(r) + "\n" for r in SEED))
    d = load_domain(folder)
    assert d.episode().call("view", {"id": "P-2"}) == {"who": "BO", "team": "core"}
    with pytest.raises(ToolError, match="no person P-9"):
        d.episode().call("view", {"id": "P-9"})
    # a fragment cannot see the caller's names or arguments, and must get exactly its parameters
    spec["fragments"]["person_view"]["steps"][0]["key"] = {"id": "$args.id"}
    spec["tools"].append(tool("bad", {"use": "person_view", "with": {"pid": 1, "x": 2}}))
    (folder / "domain.yaml").write_text(yaml.safe_dump(spec))
    from simulator import SpecError

    with pytest.raises(SpecError) as info:
        load_domain(folder)
    text = str(info.value)
    assert "fragments.person_view" in text
    assert "key.id: unknown name $args" in text
    assert "fragment 'person_view' takes ['pid']; missing [], unknown ['x']" in text


def test_a_literal_null_filter_tests_for_null_and_a_runtime_null_keeps_its_meaning(tmp_path):
    folder = tmp_path / "loans"
    (folder / "seed").mkdir(parents=True)
    loans = {
        "primary_key": "id",
        "columns": {
            "id": {"type": "integer"},
            "who": {"type": "string"},
            "closed_at": {"type": "datetime", "nullable": True},
        },
    }
    open_loans = [{"column": "who", "value": "$args.who"}, {"column": "closed_at", "op": "eq", "value": None}]
    tools = [
        tool(
            "borrow",
            [
                {"count": "loans", "where": open_loans, "as": "open"},
                {"require": {"lt": ["$open", 2]}, "error": "{args.who} has two open loans already."},
                {"create": "loans", "values": {"who": "$args.who"}},
            ],
            kind="write",
            props={"who": {"type": "string"}},
        ),
        tool("closed", {"count": "loans", "where": [{"column": "closed_at", "op": "ne", "value": None}]}),
        tool(
            "closed_on",
            {
                "count": "loans",
                "where": [{"column": "closed_at", "value": "$args.at", "skip_if_null": False}],
            },
            props={"at": {}},
        ),
        tool(
            "closed_since",
            {"count": "loans", "where": [{"column": "closed_at", "value": "$args.at"}]},
            props={"at": {}},
        ),
    ]
    (folder / "domain.yaml").write_text(
        yaml.safe_dump({"name": "loans", "version": "1.0.0", "tables": {"loans": loans}, "tools": tools})
    )
    rows = [
        {"id": 1, "who": "ann", "closed_at": None},
        {"id": 2, "who": "ann", "closed_at": "2025-01-01T00:00:00Z"},
    ]
    (folder / "seed" / "loans.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    d = load_domain(folder)
    with d.episode() as ep:
        assert ep.call("closed", {}) == 1
        ep.call("borrow", {"who": "ann"})  # ann's second open loan
        with pytest.raises(ToolError, match="two open loans"):
            ep.call("borrow", {"who": "ann"})
        ep.call("borrow", {"who": "bo"})
        # a value that is null only at run time keeps its meaning: matches nothing, or is skipped
        assert ep.call("closed_on", {}) == 0
        assert ep.call("closed_since", {}) == 4
        assert ep.call("closed_on", {"at": "2025-01-01T00:00:00Z"}) == 1


def test_a_literal_null_with_an_operator_that_cannot_match_it_is_a_load_problem(tmp_path):
    from simulator import SpecError

    with pytest.raises(SpecError) as info:
        make(
            tmp_path,
            [tool("x", {"count": "people", "where": [{"column": "salary", "op": "lt", "value": None}]})],
        )
    assert "`lt` with a literal null matches nothing" in str(info.value)
    with pytest.raises(SpecError) as info:
        make(tmp_path / "b", [tool("x", {"count": "people", "where": [{"column": "salary", "op": "eq"}]})])
    assert "a filter needs a `value`" in str(info.value)


def test_a_number_column_keeps_the_json_type_that_was_stored(tmp_path):
    d = make(
        tmp_path,
        [
            tool(
                "hire",
                {
                    "create": "people",
                    "values": {"name": "Di", "team": "Ops", "salary": "$args.pay", "joined": "$now"},
                },
                kind="write",
                props={"pay": {"type": "number"}},
            ),
            tool(
                "raise_pay",
                {
                    "update": "people",
                    "key": {"id": "$args.id"},
                    "set": {"salary": {"add": ["$row.salary", "$args.by"]}},
                },
                kind="write",
                props={"id": {}, "by": {"type": "number"}},
            ),
            tool(
                "total", {"sum": "people", "column": "salary", "where": [{"column": "team", "value": "Ops"}]}
            ),
        ],
    )
    with d.episode() as ep:
        hired = ep.call("hire", {"pay": 250})
        assert hired["salary"] == 250 and isinstance(hired["salary"], int)
        assert type(ep.row("people", hired["id"])["salary"]) is int
        assert type(ep.call("hire", {"pay": 99.5})["salary"]) is float
        assert type(ep.call("hire", {"pay": 250.0})["salary"]) is float  # a float stays a float
        assert json.dumps(ep.call("raise_pay", {"id": hired["id"], "by": 1})["salary"]) == "251"
        assert ep.row("people", "P-3")["salary"] == 70.0 and type(ep.row("people", "P-3")["salary"]) is float
        assert ep.call("total", {}) == 70.0 + 251 + 99.5 + 250.0
        exported = {r["id"]: r["salary"] for r in ep.export()["people"]}
        assert json.dumps(exported[hired["id"]]) == "251"
