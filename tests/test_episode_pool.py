"""Episode connections reused through the domain's pool (simulator.runtime._pool) start in the seed state.

A restored connection must answer every query as a fresh copy of the snapshot: the same rows with
the same rowids (so scans and aggregates in rowid order agree), no generated-id counters, no clock
ticks, no change log. Hypothesis drives random calls (including failing ones) on the test shop;
the bank's gold solutions add deletes and creates referencing other rows.
"""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring import load_domain
from scoring.calls import resolve_arguments
from simulator import Domain
from simulator.errors import ToolError
from simulator.runtime._pool import new_connection
from tests.conftest import ROOT
from tests.test_properties import calls, run


def state(conn: sqlite3.Connection, domain: Domain) -> dict[str, list[tuple]]:
    """Every table, runtime ones included, row by row with rowids (for rowid tables)."""
    out = {
        name: conn.execute(f'SELECT rowid, * FROM "{name}" ORDER BY rowid').fetchall()  # noqa: S608
        for name in domain.tables
    }
    for name in ("_toolgym_meta", "_toolgym_changes"):
        out[name] = conn.execute(f"SELECT * FROM {name}").fetchall()  # noqa: S608
    return out


def seed_state(domain: Domain) -> dict[str, list[tuple]]:
    conn = new_connection(domain.snapshot())
    try:
        return state(conn, domain)
    finally:
        conn.close()


@given(st.lists(calls, max_size=12), st.integers(0, 3), st.lists(calls, max_size=6))
def test_a_reused_connection_is_in_the_seed_state(shop, sequence, seed, after):
    seed_rows = seed_state(shop)
    ep = shop.episode(seed=seed)
    conn = ep.conn
    run(ep, sequence)
    ep.close()
    again = shop.episode(seed=seed)
    assert again.conn is conn  # the pool handed the same connection back
    assert state(again.conn, shop) == seed_rows
    # and the episode on it behaves as one on a fresh copy would
    fresh = shop.episode(seed=seed)
    assert run(again, after) == run(fresh, after)
    assert again.digest() == fresh.digest() and again.full_digest() == fresh.full_digest()
    again.close()
    fresh.close()


@pytest.fixture(scope="module")
def bank() -> Domain:
    return load_domain(ROOT / "domains" / "bank")


def test_gold_solutions_with_deletes_and_creates_are_undone(bank):
    seed_rows = seed_state(bank)
    deleted = 0
    for task in bank.tasks:
        ep = bank.episode(seed=task.seed)
        results: list = []
        for i, call in enumerate(task.calls):
            try:
                results.append(ep.call(call.name, resolve_arguments(call.arguments, results, task.id, i)))
            except ToolError:
                results.append(None)
        deleted += sum(ep.row(t, k) is None for t, k in ep.changes())
        conn = ep.conn
        ep.close()
        ep = bank.episode()
        assert ep.conn is conn, task.id
        assert state(ep.conn, bank) == seed_rows, task.id
        ep.close()
    assert deleted  # some gold solution deleted rows (or created ones, undone by a delete)


def test_a_closed_episode_cannot_reach_the_reused_connection(shop):
    ep = shop.episode()
    ep.close()
    ep.close()  # idempotent: the connection is not handed back twice
    first, second = shop.episode(), shop.episode()
    assert first.conn is not second.conn
    with pytest.raises(sqlite3.ProgrammingError):
        ep.call("get_customer", {"customer_id": "C-0001"})
    first.call("get_customer", {"customer_id": "C-0001"})  # (its generated body runs on a cursor)
    body = shop.tools["get_customer"]._body
    assert body is not None
    with pytest.raises(sqlite3.ProgrammingError):  # the closed episode's cursor, not a pooled one's
        body(ep, {"args": {"customer_id": "C-0001"}})
    with pytest.raises(sqlite3.ProgrammingError):
        ep.cursor.execute("SELECT 1")
    first.close()
    second.close()


def test_a_cursor_left_reading_does_not_stop_the_restore(shop):
    """A caller's cursor still stepping through a read when its episode closes: the connection is
    kept, restored to the seed state, and the next episode's calls answer as on a fresh one."""
    ep = shop.episode()
    conn = ep.conn
    ep.call("set_note", {"customer_id": "C-0001", "notes": "changed"})
    cursor = conn.execute("SELECT * FROM customers")
    cursor.fetchone()  # the statement stays active while the cursor lives
    ep.close()
    other = shop.episode()
    assert other.conn is conn and state(conn, shop) == seed_state(shop)
    with shop.episode() as fresh:  # (the pool is empty: a new connection)
        assert other.call("get_customer", {"customer_id": "C-0001"}) == fresh.call(
            "get_customer", {"customer_id": "C-0001"}
        )
    del cursor
    other.close()


def test_a_connection_in_a_transaction_is_not_reused(shop):
    ep = shop.episode()
    conn = ep.conn
    conn.execute("BEGIN")
    ep.close()
    other = shop.episode()
    assert other.conn is not conn
    other.close()


def test_a_write_outside_the_calls_closes_the_connection(shop):
    ep = shop.episode()
    conn = ep.conn
    ep.call("set_note", {"customer_id": "C-0001", "notes": "logged"})
    conn.execute("UPDATE customers SET name = 'not logged' WHERE customer_id = 'C-0002'")
    ep.close()
    other = shop.episode()
    assert other.conn is not conn
    assert other.row("customers", "C-0002")["name"] == "Customer 2"
    other.close()


def test_a_changed_schema_closes_the_connection_and_hooks_do_not_carry_over(shop):
    ep = shop.episode()
    conn = ep.conn
    conn.execute("CREATE INDEX ix_test_name ON customers (name)")
    ep.close()
    other = shop.episode()
    assert other.conn is not conn
    seen: list[str] = []
    other.conn.set_trace_callback(seen.append)
    reused = other.conn
    other.close()
    again = shop.episode()
    assert again.conn is reused
    again.call("get_customer", {"customer_id": "C-0001"})
    assert seen == []  # the trace callback was cleared when the connection went back
    again.close()
