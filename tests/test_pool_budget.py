"""A call's SQLite step budget counts the same on a reused (pooled) connection as on a fresh one.

SQLite calls the progress handler when a statement's step count crosses a multiple of
`PROGRESS_EVERY`, and that count is the statement's whole life, not one execution: it survives
`sqlite3_reset`, so a cached statement carries it from one episode on a connection to the next
(the first test shows it on plain sqlite3). The pool (simulator.pool) must give each episode
statements that count from zero, or a call's count, and its verdict at the budget's edge, would
depend on the episodes that ran before it on the same connection.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from simulator import Domain, load_domain
from simulator.budget import PROGRESS_EVERY, Budget
from simulator.calls import resolve_arguments
from simulator.errors import ToolError, WorkLimitError

#: gold solutions replayed (each on a fresh connection, then three times on the reused one)
TASKS = 12


@pytest.fixture(scope="module")
def retail() -> Domain:
    return load_domain("tau2-retail")


def test_sqlite_counts_a_cached_statements_steps_over_its_whole_life():
    """The premise: the same cached statement, run again, is called back at its lifetime's
    multiples of the interval, so equal executions see different numbers of callbacks."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(300)])
    seen = [0]

    def progress() -> int:
        seen[0] += 1
        return 0

    def callbacks(sql: str) -> int:
        seen[0] = 0
        conn.execute(sql, (0,)).fetchall()
        return seen[0]

    conn.set_progress_handler(progress, PROGRESS_EVERY)
    sql = "SELECT sum(x) FROM t WHERE x >= ?"  # ~1.5 intervals of steps per execution
    reused = [callbacks(sql) for _ in range(6)]
    fresh = [callbacks(f"{sql} -- {i}") for i in range(6)]  # a new statement each time
    conn.close()
    assert len(set(fresh)) == 1 and len(set(reused)) == 2


def _replay(domain: Domain, task: Any) -> tuple[sqlite3.Connection, list[int]]:
    """The connection a task's gold calls ran on, and the steps counted after each call."""
    counts: list[int] = []
    with domain.episode(seed=task.seed) as ep:
        conn = ep.conn
        results: list[Any] = []
        for i, call in enumerate(task.calls):
            try:
                results.append(ep.call(call.name, resolve_arguments(call.arguments, results, task.id, i)))
            except ToolError:
                results.append(None)
            counts.append(ep.meter.sqlite_steps)
    return conn, counts


def test_gold_calls_count_the_same_steps_on_a_reused_connection_as_on_a_fresh_one(retail):
    for task in retail.tasks[:TASKS]:
        retail.pool().close()  # no idle connection: the next episode opens a new one
        conn, fresh = _replay(retail, task)
        for _ in range(3):  # each replay runs the same statements again on the same connection
            again, counts = _replay(retail, task)
            assert again is conn, task.id
            assert counts == fresh, task.id


def _first_calls(domain: Domain) -> list[tuple[int, str, Any]]:
    """(seed, tool, arguments) of each tool's first gold call that needs no earlier result."""
    found: dict[str, tuple[int, str, Any]] = {}
    for task in domain.tasks:
        if task.calls and task.calls[0].name not in found:
            call = task.calls[0]
            found[call.name] = (task.seed, call.name, resolve_arguments(call.arguments, [], task.id, 0))
    return list(found.values())


def _verdict(domain: Domain, seed: int, tool: str, args: Any, steps: int) -> tuple[bool, int]:
    """Whether the call passed under a budget of `steps`, and the steps it counted."""
    with domain.episode(seed=seed, budget=Budget(sqlite_steps=steps)) as ep:
        try:
            ep.call(tool, args)
        except WorkLimitError:
            return False, ep.meter.sqlite_steps
        except ToolError:
            pass
        return True, ep.meter.sqlite_steps


def test_a_budget_verdict_at_its_edge_is_the_same_on_a_reused_connection(retail):
    """Under a budget of exactly the steps a call counts on a fresh connection it passes, and one
    step less fails it, on the fresh connection and on the same connection reused again and again."""
    checked = 0
    for seed, tool, args in _first_calls(retail):
        retail.pool().close()
        with retail.episode(seed=seed) as ep:
            try:
                ep.call(tool, args)
            except ToolError:
                pass
            steps = ep.meter.sqlite_steps
        if steps < PROGRESS_EVERY:
            continue  # counted nothing: no edge to find
        checked += 1
        for _ in range(4):
            assert _verdict(retail, seed, tool, args, steps) == (True, steps), tool
            passed, _ = _verdict(retail, seed, tool, args, steps - 1)
            assert not passed, tool
    assert checked
