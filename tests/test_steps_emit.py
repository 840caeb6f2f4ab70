"""Steps written out in an operation's generated function (`Run.emit`: a read by key, a one-column
update by key, a create) fail as on the reference path (`load_domain(..., generated=False)`) in the
cases random calls rarely reach: keys and texts SQLite cannot bind, a `$row` decoded in part, a
create whose first attempt fails. Call after call, the same results and errors, the same reads
told to an observer, and in the end the same tables, change log and digest. Random calls on every
domain: tests/test_reference_switch.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scoring import load_domain
from scoring.calls import NO_RESULT, resolve_arguments
from scoring.errors import CallReferenceError
from simulator import Domain
from simulator.errors import CallFailed
from tests.conftest import FIXTURES, ROOT

FOLDERS = {"shop": FIXTURES / "shop", "tau2-retail": ROOT / "domains" / "tau2-retail"}


def _both(folder: Path) -> tuple[Domain, Domain]:
    """The domain in `folder` loaded with its code generated, and on the reference path."""
    return load_domain(folder), load_domain(folder, generated=False)


def _outcome(domain: Domain, calls: list[tuple[str, dict[str, Any]]], seed: int = 7) -> list[Any]:
    out: list[Any] = []
    reads: set[Any] = set()
    with domain.episode(seed=seed, observer=reads) as ep:
        results: list[Any] = []
        for i, (name, args) in enumerate(calls):
            reads.clear()
            try:
                results.append(ep.call(name, resolve_arguments(args, results, "t", i)))
                out.append(("ok", results[-1]))
            except CallFailed as exc:
                results.append(NO_RESULT)
                out.append((type(exc).__name__, str(exc)))
            except CallReferenceError as exc:
                out.append(("reference", str(exc)))
                break
            out.append(sorted(reads, key=repr))
        out += [ep.export(), sorted(ep.changes(), key=repr), ep.digest()]
    return out


@pytest.mark.parametrize("key", ["\ud800", "x\udfff", 2**70, -(2**64)])
def test_keys_sqlite_cannot_bind_are_the_same_error(key: Any) -> None:
    """A text key with an unpaired surrogate (the written-out fetch fails to bind) and an integer out
    of SQLite's range (looked up through `Query.row_of`) fail as on the reference path."""
    written, reference = _both(FIXTURES / "shop")
    for name, tool in written.tools.items():
        props = tool.spec.input_schema.get("properties", {})
        required = tool.spec.input_schema.get("required", [])
        if len(required) != 1 or not required[0].endswith("_id"):
            continue
        calls = [(name, {required[0]: key})]
        outcome = _outcome(written, calls)
        assert outcome == _outcome(reference, calls)
        if isinstance(key, str) and props[required[0]].get("type") == "string":
            assert outcome[0][0] == "ToolError" and "unpaired surrogates" in outcome[0][1], outcome[0]


ROW_TABLES: dict[str, Any] = {
    "items": {
        "primary_key": "item_id",
        "columns": {
            "item_id": {"type": "string"},
            "flag": {"type": "boolean", "nullable": True},
            "meta": {"type": "json", "nullable": True},
            "count": {"type": "integer", "nullable": True},
            "note": {"type": "string", "nullable": True},
        },
    }
}
ROW_SETS: dict[str, Any] = {
    "flip": {"not": "$row.flag"},
    "meta": {"coalesce": ["$row.meta.a", "none"]},
    "nosuch": {"coalesce": ["$row.nosuch", "absent"]},
    "whole": {"len": {"omit": ["$row", ["note"]]}},
    "rebound": {"len": {"map": {"over": "$args.list", "as": "row", "to": "$row.x"}}},
    "too_big": {"mul": ["$row.count", 10_000_000_000_000_000_000]},
}


def test_a_row_decoded_in_part_reads_as_the_whole_row(tmp_path: Path) -> None:
    """An update nothing reads gives `$row` only the columns its `set` reads: a boolean, JSON, a
    column the table lacks, the whole row, a binder's own `row`, and a value that cannot be stored
    read as they do on the whole decoded row (the reference path)."""
    from tests.tables_kit import build, tool

    column = {"flip": "flag", "meta": "note", "nosuch": "note", "whole": "count", "rebound": "count"}
    column["too_big"] = "count"
    tools = [
        tool(
            f"set_{name}",
            "write",
            [
                {"update": "items", "key": {"item_id": "$args.item_id"}, "set": {column[name]: value}},
                {"return": "done"},
            ],
            {"item_id": {"type": "string"}, "list": {"type": "array"}},
        )
        for name, value in ROW_SETS.items()
    ]
    seed = {
        "items": [
            {"item_id": "a", "flag": True, "meta": {"a": 1}, "count": 2, "note": "n"},
            {"item_id": "b", "flag": None, "meta": None, "count": None, "note": None},
        ]
    }
    written = build(tmp_path / "w", ROW_TABLES, tools, seed)
    reference = build(tmp_path / "c", ROW_TABLES, tools, seed, generated=False)
    steps = {name: tool.steps[0] for name, tool in written.tools.items()}
    assert steps["set_flip"].row_fields == ("flag",) and steps["set_whole"].row_fields is None
    calls = [
        (f"set_{name}", {"item_id": key, "list": [{"x": 1}]}) for key in ("a", "b", "zz") for name in ROW_SETS
    ]
    outcome = _outcome(written, calls)
    assert outcome == _outcome(reference, calls)
    assert sum(1 for entry in outcome if isinstance(entry, tuple) and entry[0] == "ok") >= 8


def test_a_source_binds_each_object_once_and_equal_objects_apart() -> None:
    from simulator.lang.generated import Source

    src, first, second = Source(), [], []
    name = src.bind(first, "k")
    assert src.bind(first, "x") == name and src.bind(second, "k") != name  # (a literal's list is its own)
    assert src.bound[name] is first and src.bound[src.bind(second)] is second


def test_a_create_that_fails_first_does_what_the_reference_create_does(tmp_path: Path) -> None:
    """The written-out create's first attempt failing: a generated key the seed already holds (it
    is replaced by the next free one), a given key that exists (the agent's error), a value that
    does not fit its column, a bad reference, and a composite key (its create is called)."""
    from simulator.plan.ids import IdMaker
    from tests.tables_kit import build, tool

    taken = [IdMaker("notes", prefix="N-").key(7, n) for n in (1, 2)]  # (seed 7: `_outcome`'s)
    tables: dict[str, Any] = {
        "notes": {
            "primary_key": "note_id",
            "id_prefix": "N-",
            "columns": {
                "note_id": {"type": "string"},
                "size": {"type": "integer", "nullable": True},
                "owner": {"type": "string", "nullable": True, "references": "owners.owner_id"},
            },
        },
        "owners": {"primary_key": "owner_id", "columns": {"owner_id": {"type": "string"}}},
        "pairs": {
            "primary_key": ["owner_id", "n"],
            "columns": {
                "owner_id": {"type": "string", "references": "owners.owner_id"},
                "n": {"type": "integer"},
            },
        },
    }
    values = {"note_id": "$args.note_id", "size": "$args.size", "owner": "$args.owner"}
    args = {"note_id": {"type": "string"}, "size": {}, "owner": {"type": "string"}, "n": {}}
    tools = [
        tool("add_note", "write", {"create": "notes", "values": values, "as": "note"}, args),
        tool(
            "add_pair",
            "write",
            {"create": "pairs", "values": {"owner_id": "$args.owner", "n": "$args.n"}},
            args,
        ),
    ]
    seed = {
        "notes": [{"note_id": key, "size": 1, "owner": None} for key in taken],
        "owners": [{"owner_id": "o"}],
    }
    written = build(tmp_path / "w", tables, tools, seed)
    reference = build(tmp_path / "c", tables, tools, seed, generated=False)
    calls = [
        ("add_note", {"size": 1}),  # generated: the first two candidates are taken
        ("add_note", {"note_id": taken[0]}),  # given, and taken
        ("add_note", {"size": "big"}),
        ("add_note", {"size": 2**70}),
        ("add_note", {"owner": "nobody"}),
        ("add_note", {"note_id": "x\udfff"}),
        ("add_note", {"owner": "o", "size": 3}),
        ("add_pair", {"owner": "o", "n": 1}),
        ("add_pair", {"owner": "o", "n": 1}),
        ("add_pair", {"owner": "o"}),
    ]
    outcome = _outcome(written, calls)
    assert outcome == _outcome(reference, calls)
    results = [entry for entry in outcome if isinstance(entry, tuple)]
    assert results[0][0] == "ok" and results[0][1]["note_id"] == IdMaker("notes", prefix="N-").key(7, 3)
    assert [r[0] for r in results[1:6]] == ["ToolError"] * 5 and results[6][0] == "ok"


@pytest.mark.parametrize("folder", ["shop", "tau2-retail"])
def test_every_text_argument_sqlite_cannot_bind_is_the_same_error(folder: str) -> None:
    """A text with an unpaired surrogate in each text argument of each tool (reads by key, lists,
    creates, updates): the written-out steps fail as on the reference path."""
    written, reference = _both(FOLDERS[folder])
    calls = []
    for name, tool in sorted(written.tools.items()):
        props = tool.spec.input_schema.get("properties", {})
        for arg, schema in props.items():
            if schema.get("type") == "string":
                calls.append((name, {arg: "x\udfff"}))
    outcome = _outcome(written, calls)
    assert outcome == _outcome(reference, calls)
    assert any(isinstance(e, tuple) and "unpaired surrogates" in str(e[1]) for e in outcome)
