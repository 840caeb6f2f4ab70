"""A write call runs only its own statements; the change log and counters reach SQLite when read.

The episode keeps the clock, the id counters and the change log in memory while calls run and
writes them to its `_toolgym_*` tables before anything reads those (`digest`, `changes`, `close`):
these tests hold an episode that saves after every call and one that saves only at the end to the
same state, log, counters and digests, under random calls (failing ones included).
"""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator import Domain
from tests.test_episode_pool import seed_state, state
from tests.test_properties import calls, run
from tests.test_steps_registry import domain, tool


def _bookkeeping(conn: sqlite3.Connection) -> tuple[list[tuple], list[tuple]]:
    meta = conn.execute("SELECT * FROM _toolgym_meta ORDER BY key").fetchall()
    log = conn.execute("SELECT * FROM _toolgym_changes ORDER BY tbl, pk").fetchall()
    return meta, log


def test_a_write_call_runs_only_its_own_statements(shop):
    with shop.episode() as ep:
        statements: list[str] = []
        ep.conn.set_trace_callback(statements.append)
        ep.call("place_order", {"customer_id": "C-0001", "items": [{"sku": "SKU-001", "quantity": 1}]})
        ep.conn.set_trace_callback(None)
        assert statements[0] == "BEGIN" and statements[-1] == "COMMIT"
        assert not [s for s in statements if "_toolgym_" in s]
        assert ep.changes() >= {("customers", "C-0001"), ("products", "SKU-001")}


def test_the_log_and_counters_are_in_sqlite_once_read(shop):
    with shop.episode(seed=3) as ep:
        ep.call("add_customer", {"name": "Ada", "email": "ada@example.com"})
        ep.call("set_note", {"customer_id": "C-0001", "notes": "hi"})
        changes = ep.changes()
        meta, log = _bookkeeping(ep.conn)
        assert {(t, k) for t, k in log} == changes and len(changes) == 2
        assert dict(meta)["ticks"] == 2 and "id:customers" in dict(meta)


@given(st.lists(calls, max_size=12), st.integers(0, 3))
def test_saving_late_or_after_every_call_gives_the_same_episode(shop, sequence, seed):
    eager, lazy = shop.episode(seed=seed), shop.episode(seed=seed)
    try:
        for name, args in sequence:
            run(eager, [(name, args)])
            eager.changes()  # saves
            run(lazy, [(name, args)])
        assert lazy.changes() == eager.changes()
        assert _bookkeeping(lazy.conn) == _bookkeeping(eager.conn)
        assert lazy.now() == eager.now()
        assert lazy.digest() == eager.digest() and lazy.full_digest() == eager.full_digest()
        # and the next calls make the same ids and times on both
        follow = [("add_customer", {"name": "Z", "email": "z@example.com"})]
        assert run(lazy, follow) == run(eager, follow)
        assert lazy.export() == eager.export()
    finally:
        eager.close()
        lazy.close()


def test_a_connection_written_outside_a_call_is_not_reused(shop):
    ep = shop.episode()
    conn = ep.conn
    ep.call("set_note", {"customer_id": "C-0001", "notes": "x"})
    conn.execute("UPDATE customers SET notes = 'outside' WHERE customer_id = 'C-0002'")
    ep.call("set_note", {"customer_id": "C-0001", "notes": "y"})  # a later call does not hide it
    ep.close()
    again = shop.episode()
    try:
        assert again.conn is not conn
        assert again.row("customers", "C-0002")["notes"] != "outside"
    finally:
        again.close()


LOG_TOOLS = [
    tool("add", {"create": "log", "values": {"text": "$args.text"}}, "write", {"text": {"type": "string"}}),
    tool(
        "add_at",
        {"create": "log", "values": {"n": "$args.n", "text": "x"}},
        "write",
        {"n": {"type": "integer"}},
    ),
    tool("drop", {"delete": "log", "key": {"n": "$args.n"}}, "write", {"n": {"type": "integer"}}),
    tool(
        "renumber",
        {"update": "log", "key": {"n": "$args.n"}, "set": {"n": "$args.to"}},
        "write",
        {"n": {"type": "integer"}, "to": {"type": "integer"}},
    ),
    tool(
        "two",
        [{"create": "log", "values": {"text": "a"}}, {"create": "log", "values": {"text": "b"}}],
        "write",
    ),
    # creates one row, then fails: the key it took is not taken
    tool(
        "add_then_fail",
        [{"create": "log", "values": {"text": "a"}}, {"require": False, "error": "no"}],
        "write",
    ),
]

_numbers = st.integers(1, 6)
log_calls = st.one_of(
    st.tuples(st.just("add"), st.fixed_dictionaries({"text": st.just("t")})),
    st.tuples(st.just("add_at"), st.fixed_dictionaries({"n": _numbers})),
    st.tuples(st.just("drop"), st.fixed_dictionaries({"n": _numbers})),
    st.tuples(st.just("renumber"), st.fixed_dictionaries({"n": _numbers, "to": _numbers})),
    st.tuples(st.just("two"), st.just({})),
    st.tuples(st.just("add_then_fail"), st.just({})),
)


@pytest.fixture(scope="module")
def logbook(tmp_path_factory: pytest.TempPathFactory) -> Domain:
    return domain(tmp_path_factory.mktemp("logbook"), LOG_TOOLS)


@given(st.lists(log_calls, max_size=14))
def test_a_generated_integer_key_is_always_max_plus_one(logbook, sequence):
    with logbook.episode() as ep:
        for name, args in sequence:
            run(ep, [(name, args)])
            expected = ep.conn.execute("SELECT coalesce(max(n), 0) + 1 FROM log").fetchone()[0]
            assert ep.call("add", {"text": "probe"})["n"] == expected
        # a row written outside any call is seen too
        ep.conn.execute("INSERT INTO log (n, text, at) VALUES (100, 'outside', 'x')")
        assert ep.call("add", {"text": "after"})["n"] == 101


@given(st.lists(calls, max_size=8), st.lists(calls, max_size=8), st.integers(0, 3))
def test_a_connection_closed_with_saved_and_unsaved_changes_is_restored(shop, first, then, seed):
    ep = shop.episode(seed=seed)
    conn = ep.conn
    run(ep, first)
    ep.digest()  # saves the log so far: the rest stays in memory until close
    run(ep, then)
    ep.close()
    again = shop.episode(seed=seed)
    try:
        assert again.conn is conn
        assert state(again.conn, shop) == seed_state(shop)
    finally:
        again.close()


def test_a_deleted_row_saved_and_changed_again_is_restored(logbook):
    ep = logbook.episode()
    conn = ep.conn
    ep.call("add", {"text": "a"})
    ep.call("add", {"text": "b"})
    ep.digest()
    ep.call("drop", {"n": 1})  # in the saved log and changed again, unsaved
    ep.call("renumber", {"n": 2, "to": 5})
    ep.close()
    again = logbook.episode()
    try:
        assert again.conn is conn and state(again.conn, logbook) == seed_state(logbook)
    finally:
        again.close()
