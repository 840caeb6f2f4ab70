"""The step registry and the analyses every compiled tool derives from its step tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scoring import load_domain
from simulator import Domain
from simulator.format.spec import STEP_KINDS, Tool
from simulator.plan.compiler import COMPILERS
from simulator.serve.mcptools import tool_annotations

TABLES: dict[str, Any] = {
    "teams": {
        "primary_key": "id",
        "id_prefix": "T-",
        "columns": {"id": {"type": "string"}, "name": {"type": "string"}, "city": {"type": "string"}},
    },
    "people": {
        "primary_key": "id",
        "id_prefix": "P-",
        "columns": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "team": {"type": "string", "references": "teams.id", "nullable": True},
            "email": {"type": "string", "nullable": True},
            "note": {"type": "string", "nullable": True},
            "since": {"type": "datetime", "nullable": True},
        },
    },
    "log": {
        "primary_key": "n",
        "columns": {
            "n": {"type": "integer"},
            "text": {"type": "string"},
            "at": {"type": "datetime", "default": "$now"},
        },
    },
}
SEED: dict[str, list[dict[str, Any]]] = {
    "teams": [
        {"id": "T-1", "name": "Core", "city": "Oslo"},
        {"id": "T-2", "name": "Ops", "city": "Lima"},
    ],
    "people": [
        {"id": "P-1", "name": "Ada", "team": "T-1", "email": "ada@x.org", "note": "a", "since": None},
        {"id": "P-2", "name": "Bo", "team": "T-2", "email": None, "note": None, "since": None},
        {"id": "P-3", "name": "Cy", "team": None, "email": "cy@y.org", "note": "c", "since": None},
    ],
    "log": [],
}

#: people with a mentor (a foreign key to their own table): P-3 -> P-2 -> P-1
MENTORS: dict[str, Any] = {
    **TABLES,
    "people": {
        **TABLES["people"],
        "columns": {
            **TABLES["people"]["columns"],
            "mentor": {"type": "string", "references": "people.id", "nullable": True},
        },
    },
}
MENTORED = {
    **SEED,
    "people": [{**p, "mentor": m} for p, m in zip(SEED["people"], [None, "P-1", "P-2"], strict=True)],
}


def tool(
    name: str, operation: Any, kind: str = "read", props: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "name": name,
        "description": name,
        "kind": kind,
        "input_schema": {"type": "object", "properties": props or {}},
        "operation": operation,
    }


def domain(
    tmp_path: Path,
    tools: list[dict[str, Any]],
    fragments: dict[str, Any] | None = None,
    tables: dict[str, Any] = TABLES,
    seed: dict[str, list[dict[str, Any]]] = SEED,
) -> Domain:
    """A small domain folder with these tools (and `TABLES` and `SEED` unless given), loaded."""
    folder = tmp_path / "steps"
    (folder / "seed").mkdir(parents=True, exist_ok=True)
    spec = {"name": "steps", "version": "1.0.0", "tables": tables, "tools": tools}
    if fragments:
        spec["fragments"] = fragments
    (folder / "domain.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    for table, rows in seed.items():
        (folder / "seed" / f"{table}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return load_domain(folder)


def test_every_registered_kind_compiles_and_is_named_by_its_keys() -> None:
    assert set(COMPILERS) == set(STEP_KINDS)
    keys = [key for cls in STEP_KINDS.values() for key in cls.keys]
    assert len(keys) == len(set(keys))
    for kind, cls in STEP_KINDS.items():
        assert cls.kind == kind and cls.effect in ("none", "read", "create", "change")
    # the YAML keys decide the model: the alias `search` is a list
    parsed = Tool.model_validate(tool("t", {"search": "people"}))
    assert parsed.steps[0].kind == "list"
    with pytest.raises(ValueError, match="a step needs one of the keys: count, create, delete"):
        Tool.model_validate(tool("t", {"fetch": "people"}))


def test_footprints_follow_fragments_loops_and_when(tmp_path: Path) -> None:
    fragments = {
        "forget": {
            "params": ["pid"],
            "steps": [{"delete": "people", "key": {"id": "$pid"}}, {"return": "$now"}],
        },
        "note": {"params": ["text"], "steps": [{"create": "log", "values": {"text": "$text"}}]},
    }
    d = domain(
        tmp_path,
        [
            tool(
                "purge",
                [
                    {"list": "teams", "as": "ts"},
                    {
                        "for_each": "$args.ids",
                        "as": "pid",
                        "steps": [{"use": "forget", "with": {"pid": "$pid"}, "as": "when"}],
                    },
                ],
                "write",
                {"ids": {"type": "array"}},
            ),
            tool(
                "jot",
                {"use": "note", "with": {"text": "$args.text"}, "when": {"ne": ["$args.text", ""]}},
                "write",
                {"text": {"type": "string"}},
            ),
            tool(
                "headcount",
                {"count": "people", "where": [{"column": "team", "value": "$args.team"}]},
                props={"team": {"type": "string"}},
            ),
        ],
        fragments,
    )
    purge, jot, headcount = d.tools["purge"], d.tools["jot"], d.tools["headcount"]
    # a delete inside a fragment inside a loop: destructive, reads and writes people
    assert purge.destructive and purge.writes
    assert purge.tables_read == {"teams", "people"} and purge.tables_written == {"people"}
    assert purge.uses_now  # `$now` returned by the fragment
    # a create only: a write, not destructive; the table's `$now` default needs the clock
    assert jot.writes and not jot.destructive
    assert jot.tables_read == frozenset() and jot.tables_written == {"log"}
    assert jot.uses_now
    assert not headcount.writes and not headcount.uses_now and headcount.tables_read == {"people"}
    # the server's hints come from the analysis, not from a walk of its own
    assert tool_annotations(purge).destructive_hint is True
    assert tool_annotations(jot).destructive_hint is False
    assert tool_annotations(headcount).read_only_hint is True


def test_a_read_tool_that_writes_through_a_fragment_does_not_load(tmp_path: Path) -> None:
    fragments = {"note": {"params": ["text"], "steps": [{"create": "log", "values": {"text": "$text"}}]}}
    with pytest.raises(Exception, match="a `read` tool may not create, update or delete"):
        domain(tmp_path, [tool("sneaky", {"use": "note", "with": {"text": "x"}})], fragments)


def test_clock_and_arguments_come_from_each_expression_tree(tmp_path: Path) -> None:
    props = {"a": {}, "b": {}, "c": {}, "d": {}}
    d = domain(
        tmp_path,
        [
            # `{now}` in an error template, `has: d`, `$args.a` in a key, `{args.b}` in a template
            tool(
                "stamp",
                [
                    {"get": "people", "key": {"id": "$args.a"}, "error": "no {args.b} at {now}", "as": "p"},
                    {"return": {"if": [{"has": "d"}, "$p.name", "none"]}},
                ],
                props=props,
            ),
            # a map binding `now` shadows the clock; `$$now` is text; `literal` is not read
            tool(
                "shadowed",
                {
                    "return": [
                        {"map": {"over": "$args.c", "as": "now", "to": "$now"}},
                        "$$now",
                        {"literal": "$args.b"},
                    ]
                },
                props=props,
            ),
        ],
    )
    stamp, shadowed = d.tools["stamp"], d.tools["shadowed"]
    assert stamp.uses_now and stamp.arguments_read == {"a", "b", "d"}
    assert not shadowed.uses_now and shadowed.arguments_read == {"c"}
    ep = d.episode()
    assert ep.call("shadowed", {"c": [1, 2]}) == [[1, 2], "$now", "$args.b"]
    assert ep.call("stamp", {"a": "P-1", "d": None}) == "Ada"
    with pytest.raises(Exception, match=r"no x at 20\d\d-"):
        ep.call("stamp", {"a": "P-9", "b": "x"})


def test_a_step_kind_added_through_the_registry_alone_loads_compiles_and_is_analysed(tmp_path: Path) -> None:
    from pydantic import Field

    from simulator.format.spec import DomainSpec, Filter, StepModel, register_step, unregister_step
    from simulator.plan._query import Query
    from simulator.plan.compiler import compiles
    from simulator.plan.readsteps import CountRun

    class ExistsStep(StepModel):
        """Whether any row matches the filters."""

        kind = "exists"
        keys = ("exists",)
        effect = "read"

        table: str = Field(alias="exists")
        where: list[Filter] = Field(default_factory=list)
        bind: str | None = Field(default=None, alias="as")

    def compile_exists(c: Any, step: ExistsStep, scope: Any, at: str) -> Any:
        info = c.table(step.table, at)
        count = CountRun(
            Query(info, c.filters(info, None, step.where, scope, at), [], paged=False, count=True), None
        )
        run = type("ExistsRun", (CountRun,), {"run": lambda self, rt, env: count.run(rt, env) > 0})
        return run(count.query, step.bind)

    register_step(ExistsStep)
    compiles("exists")(compile_exists)
    try:
        assert "exists" in str(DomainSpec.model_json_schema())
        d = domain(
            tmp_path,
            [
                tool(
                    "any_in",
                    {"exists": "people", "where": [{"column": "team", "value": "$args.t"}]},
                    props={"t": {}},
                )
            ],
        )
        tool_ = d.tools["any_in"]
        assert tool_.tables_read == {"people"} and not tool_.writes and tool_.arguments_read == {"t"}
        ep = d.episode()
        assert ep.call("any_in", {"t": "T-1"}) is True and ep.call("any_in", {"t": "T-9"}) is False
    finally:
        COMPILERS.pop("exists")
        unregister_step("exists")
    assert "exists" not in str(DomainSpec.model_json_schema())
    with pytest.raises(ValueError, match="a step needs one of the keys"):
        Tool.model_validate(tool("t", {"exists": "people"}))
