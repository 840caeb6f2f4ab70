"""The write plans (simulator.codegen.encoding) do exactly what the general code does.

`column_encoder` against `TableInfo.encode` (values, types and error messages), and `create` /
`update` through real tool calls against the general algorithm written out here as the oracle:
each column given or defaulted, a missing key generated, every column encoded in column order (the
first value that does not fit is the error), the row returned as a read would return it.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator import Domain, ToolError
from simulator.codegen.encoding import UpdatePlan, column_encoder
from simulator.plan.tables import TableInfo, ValueProblem

from .tables_kit import build
from .tables_kit import tool as build_tool
from .test_steps_registry import domain, tool

COLUMNS: dict[str, Any] = {
    "id": {"type": "string"},
    "name": {"type": "string"},
    "size": {"type": "integer", "nullable": True},
    "price": {"type": "number", "default": 0},
    "ok": {"type": "boolean", "default": False},
    "tags": {"type": "json", "default": []},
    "at": {"type": "datetime", "default": "$now"},
    "when": {"type": "datetime", "nullable": True},
    "state": {"type": "string", "enum": ["new", "old"], "default": "new"},
    "level": {"type": "integer", "enum": [1, 2, 3], "nullable": True},
}
TABLES = {"things": {"primary_key": "id", "id_prefix": "T-", "columns": COLUMNS}}
SEED = {"things": [{"id": "T-1", "name": "one", "size": 1, "when": None, "level": None}]}
#: the arguments `make` and `edit` take, one per column (untyped: any JSON value reaches the step)
ARGS = ["name", "size", "price", "ok", "tags", "when", "state", "level"]


@pytest.fixture(scope="module")
def things(tmp_path_factory: pytest.TempPathFactory) -> Domain:
    values = {a: f"$args.{a}" for a in ARGS}
    return domain(
        tmp_path_factory.mktemp("plans"),
        [
            tool("make", {"create": "things", "values": values}, "write", dict.fromkeys(ARGS, {})),
            tool("make_bare", {"create": "things", "values": {"name": "$args.name"}}, "write", {"name": {}}),
            # name (not null, no default) is left out: its default never fits
            tool(
                "make_nameless",
                {"create": "things", "values": {"price": "$args.price"}},
                "write",
                {"price": {}},
            ),
            # set columns listed against the table's order, and a key that moves
            tool(
                "edit",
                {
                    "update": "things",
                    "key": {"id": "$args.id"},
                    "set": {
                        "level": "$args.level",
                        "tags": "$args.tags",
                        "ok": "$args.ok",
                        "size": "$args.size",
                    },
                },
                "write",
                dict.fromkeys(["id", "level", "tags", "ok", "size"], {}),
            ),
            # one column by key: the written-out path of UpdateRun (`_one`)
            tool(
                "resize",
                {"update": "things", "key": {"id": "$args.id"}, "set": {"size": "$args.size"}},
                "write",
                {"id": {}, "size": {}},
            ),
            tool(
                "rename",
                {
                    "update": "things",
                    "key": {"id": "$args.id"},
                    "set": {"id": "$args.to", "name": "$args.to"},
                },
                "write",
                {"id": {}, "to": {}},
            ),
        ],
        tables=TABLES,
        seed=SEED,
    )


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.sampled_from([0, 1, 2, 3, -(2**63), 2**63 - 1, 2**63, 1.0, 2.5, -0.0, math.nan, math.inf, -math.inf]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["new", "old", "x", "", "2026-01-01T09:00:00Z", "2026-13-01", "\ud800"]),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        value = fn(*args)
    except ValueProblem as exc:
        return "error", str(exc)
    return repr(type(value)), value if value == value else "nan"


@given(st.sampled_from(list(COLUMNS)), values)
def test_a_column_encoder_is_encode(things: Domain, column: str, value: Any) -> None:
    info = things.tables["things"]
    assert outcome(column_encoder(info, column), value) == outcome(info.encode, column, value)


def general_create(info: TableInfo, row: dict[str, Any], now: str, key: Any) -> dict[str, Any]:
    """The general algorithm: the given values, each other column's default, the key, encoded in
    column order; the row as a read returns it (raises ValueProblem)."""
    full = {c: row[c] if c in row else info.default(c, now) for c in info.columns}
    if full[info.pk] is None:
        full[info.pk] = key
    return info.decode(tuple(info.encode(c, full[c]) for c in info.columns))


def call(ep: Any, name: str, args: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "ok", ep.call(name, args)
    except ToolError as exc:
        return "error", str(exc)


def expected(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(*args)
    except ValueProblem as exc:
        return "error", f"invalid value: {exc}"


#: a value that fits each column (most calls then succeed), else any value
FITTING = {
    "name": st.text(max_size=5),
    "size": st.none() | st.integers(-5, 5),
    "price": st.integers(0, 9) | st.floats(0, 10),
    "ok": st.booleans(),
    "tags": st.lists(st.integers(), max_size=2),
    "when": st.none() | st.just("2026-02-03T04:05:06Z"),
    "state": st.sampled_from(["new", "old"]),
    "level": st.sampled_from([None, 1, 2, 3]),
}


@given(
    st.fixed_dictionaries({a: st.one_of(*[FITTING[a]] * 4, values) for a in ARGS}),
    st.integers(0, 3),
)
def test_create_is_the_general_algorithm(things: Domain, args: dict[str, Any], seed: int) -> None:
    info = things.tables["things"]
    args = {k: v for k, v in args.items() if not (isinstance(v, str) and "\ud800" in v)}  # (below)
    with things.episode(seed=seed) as ep:
        key = info.ids.key(seed, 1)
        want = expected(general_create, info, {a: args.get(a) for a in ARGS}, ep.now(), key)
        got = call(ep, "make", args)
        assert _same(got, want)
        if got[0] == "ok":
            assert ep.row("things", key) == got[1]  # what is stored reads back as returned
        want = expected(general_create, info, {"name": args.get("name")}, ep.now(), _next_key(ep))
        assert _same(call(ep, "make_bare", {"name": args.get("name")}), want)


def _next_key(ep: Any) -> Any:
    info = ep.domain.tables["things"]
    n = ep._counters.get("id:things", info.ids.floor)
    return info.ids.key(ep.seed, n + 1)


def _same(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    return repr(a) == repr(b)  # (types too: 1 is not True, 1.0 is not 1)


@given(
    st.fixed_dictionaries(
        {a: st.one_of(FITTING[a], FITTING[a], values) for a in ["level", "tags", "ok", "size"]}
    ),
)
def test_update_is_the_general_algorithm(things: Domain, new: dict[str, Any]) -> None:
    info = things.tables["things"]
    with things.episode() as ep:
        before = ep.row("things", "T-1")
        assert before is not None
        try:
            encoded = {c: info.encode(c, new[c]) for c in ["level", "tags", "ok", "size"]}
        except ValueProblem as exc:
            want: tuple[str, Any] = ("error", f"invalid value: {exc}")
        else:
            stored = tuple(encoded.get(c, v) for c, v in zip(info.columns, _stored(ep), strict=True))
            want = ("ok", info.decode(stored))
        got = call(ep, "edit", {"id": "T-1", **new})
        assert _same(got, want)
        assert ep.row("things", "T-1") == (got[1] if got[0] == "ok" else before)


@given(st.one_of(FITTING["size"], values), st.sampled_from(["T-1", "T-404", 7, None]))
def test_a_one_column_update_is_the_general_algorithm(things: Domain, size: Any, key: Any) -> None:
    info = things.tables["things"]
    step = things.tools["resize"].steps[0]
    assert getattr(step, "_simple", False)
    with things.episode() as ep:
        before = ep.row("things", "T-1")
        assert before is not None
        if key != "T-1":
            want: tuple[str, Any] = call(ep, "edit", {"id": key})  # (the general path's error)
        else:
            try:
                encoded = info.encode("size", size)
            except ValueProblem as exc:
                want = ("error", f"invalid value: {exc}")
            else:
                stored = tuple(
                    encoded if c == "size" else v for c, v in zip(info.columns, _stored(ep), strict=True)
                )
                want = ("ok", info.decode(stored))
        got = call(ep, "resize", {"id": key, "size": size})
        assert _same(got, want)
        assert ep.row("things", "T-1") == (got[1] if got[0] == "ok" else before)


def _stored(ep: Any) -> tuple[Any, ...]:
    info = ep.domain.tables["things"]
    row = ep.conn.execute(info.select_by_pk, {"pk": "T-1"}).fetchone()
    assert row is not None
    return tuple(row)


def test_an_update_that_moves_the_key_moves_the_row(things: Domain) -> None:
    with things.episode() as ep:
        assert ep.call("rename", {"id": "T-1", "to": "T-9"})["id"] == "T-9"
        assert ep.row("things", "T-1") is None and ep.row("things", "T-9")["name"] == "T-9"
        assert {("things", "T-1"), ("things", "T-9")} <= ep.changes()
        with pytest.raises(ToolError, match="No things"):
            ep.call("rename", {"id": "T-1", "to": "T-2"})


def test_the_first_value_that_does_not_fit_is_the_error(things: Domain) -> None:
    with things.episode() as ep:
        # name is missing (not null) and state is not in its enum: name comes first in column order
        with pytest.raises(ToolError, match=r"^invalid value: things\.name may not be null$"):
            ep.call("make", {"state": "gone"})
        with pytest.raises(ToolError, match=r"^invalid value: things\.state must be one of"):
            ep.call("make", {"name": "n", "price": 1, "ok": True, "tags": [], "state": "gone", "level": 9})


def test_a_default_that_never_fits_is_refused_in_its_place(things: Domain) -> None:
    with things.episode() as ep:
        before = ep.digest()
        for price in (1, "bad"):  # name (column 2) comes before price (column 4) either way
            with pytest.raises(ToolError, match=r"^invalid value: things\.name may not be null$"):
                ep.call("make_nameless", {"price": price})
        assert ep.digest() == before


def test_a_value_sqlite_cannot_take_is_named_in_the_agents_words(things: Domain) -> None:
    with things.episode() as ep:
        before = ep.digest()
        with pytest.raises(ToolError, match=r"^name holds characters that are not valid Unicode text"):
            ep.call("make_bare", {"name": "bad \ud800"})
        with pytest.raises(ToolError, match=r"^to holds characters that are not valid Unicode text"):
            ep.call("rename", {"id": "T-1", "to": "\ud800"})
        assert ep.digest() == before


def test_update_plans_put_parameters_in_the_statements_order(things: Domain) -> None:
    info = things.tables["things"]
    plan = UpdatePlan.of(info, ("level", "tags", "ok", "size"))
    assert plan.order == (3, 2, 1, 0)  # SQLite's SET follows the table's column order
    assert plan.statement.count("?") == 5 and plan.moves_key is False
    assert UpdatePlan.of(info, ("size",)).order is None


# -- generated string keys: inserted first, looked up only when something fails -----------------

TINY = {
    "tiny": {
        "primary_key": "tiny_id",
        "ids": {"scheme": "pattern", "pattern": "9"},  # ten keys: candidates collide often
        "columns": {"tiny_id": {"type": "string"}, "note": {"type": "string"}},
    }
}
TINY_TOOLS = [
    build_tool("new_tiny", "write", {"create": "tiny", "values": {"note": "$args.note"}}, {"note": {}}),
    build_tool(
        "drop_tiny", "write", {"delete": "tiny", "key": {"tiny_id": "$args.tiny_id"}}, {"tiny_id": {}}
    ),
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Domain:
    return build(
        tmp_path_factory.mktemp("tiny") / "d",
        TINY,
        TINY_TOOLS,
        seed={"tiny": [{"tiny_id": "3", "note": "s"}]},
    )


tiny_calls = st.lists(
    st.one_of(
        st.tuples(st.just("new_tiny"), st.fixed_dictionaries({"note": st.sampled_from(["a", 5, None])})),
        st.tuples(st.just("drop_tiny"), st.fixed_dictionaries({"tiny_id": st.sampled_from("0123456789")})),
    ),
    max_size=30,
)


@given(tiny_calls, st.integers(0, 2))
def test_generated_keys_and_errors_are_the_looked_up_ones(tiny: Domain, sequence: Any, seed: int) -> None:
    """The oracle is the general algorithm: the first candidate after the counter that no row has
    (an exhausted scheme is the error, before any value's), then the values encoded."""
    info = tiny.tables["tiny"]
    existing, counter = {"3"}, info.ids.floor
    with tiny.episode(seed=seed) as ep:
        for name, args in sequence:
            got = call(ep, name, args)
            if name == "drop_tiny":
                if got[0] == "ok":
                    existing.discard(args["tiny_id"])
                continue
            n, key = counter, None
            for _ in range(1000):
                n += 1
                if info.ids.key(seed, n) not in existing:
                    key = info.ids.key(seed, n)
                    break
            if key is None:
                assert got == (
                    "error",
                    "cannot create a tiny row: its id scheme found no free key in 1000 tries; give tiny_id explicitly",
                )
            elif not isinstance(args["note"], str):
                assert got[0] == "error" and got[1].startswith("invalid value: tiny.note")
            else:
                assert got == ("ok", {"tiny_id": key, "note": args["note"]})
                existing.add(key)
                counter = n
        assert {r["tiny_id"] for r in ep.export()["tiny"]} == existing
