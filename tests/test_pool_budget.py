"""A call's SQLite step budget on a reused (pooled) connection: counted to within one interval
per statement it runs, so its verdict differs from a fresh connection's only at the edge.

SQLite calls the progress handler when a statement's step count crosses a multiple of
`PROGRESS_EVERY`, and that count is the statement's whole life, not one execution: it survives
`sqlite3_reset`, so a cached statement carries it from one episode on a connection to the next
(the first test shows it on plain sqlite3). No public API resets it (simulator.runtime._pool keeps the
statements; simulator.runtime.budget states the bound these tests hold).
"""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest

from scoring import load_domain
from scoring.calls import resolve_arguments
from simulator import Domain
from simulator.errors import ToolError, WorkLimitError
from simulator.runtime.budget import PROGRESS_EVERY, Budget

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


def _replay(domain: Domain, task: Any) -> tuple[sqlite3.Connection, list[tuple[int, int]]]:
    """The connection a task's gold calls ran on, and (steps counted, statements run) per call."""
    counts: list[tuple[int, int]] = []
    with domain.episode(seed=task.seed) as ep:
        conn = ep.conn
        results: list[Any] = []
        for i, call in enumerate(task.calls):
            ran: list[str] = []
            conn.set_trace_callback(ran.append)
            try:
                results.append(ep.call(call.name, resolve_arguments(call.arguments, results, task.id, i)))
            except ToolError:
                results.append(None)
            conn.set_trace_callback(None)
            counts.append((ep.meter.sqlite_steps, len(ran)))
    return conn, counts


def test_gold_calls_count_within_one_interval_per_statement_on_a_reused_connection(retail):
    """The same gold calls, replayed on the connection they ran on, count what a fresh one does
    to within `PROGRESS_EVERY` per statement each call runs."""
    for task in retail.tasks[:TASKS]:
        retail.pool().close()  # no idle connection: the next episode opens a new one
        conn, fresh = _replay(retail, task)
        for _ in range(3):  # each replay runs the same statements again on the same connection
            again, counts = _replay(retail, task)
            assert again is conn, task.id
            for (steps, ran), (before, _) in zip(counts, fresh, strict=True):
                assert abs(steps - before) <= PROGRESS_EVERY * ran, task.id


def _first_calls(domain: Domain) -> list[tuple[int, str, Any]]:
    """(seed, tool, arguments) of each tool's first gold call that needs no earlier result."""
    found: dict[str, tuple[int, str, Any]] = {}
    for task in domain.tasks:
        if task.calls and task.calls[0].name not in found:
            call = task.calls[0]
            found[call.name] = (task.seed, call.name, resolve_arguments(call.arguments, [], task.id, 0))
    return list(found.values())


def _run(domain: Domain, seed: int, tool: str, args: Any, steps: int) -> tuple[bool, int, int]:
    """Whether the call passed under a budget of `steps`; the steps it counted; statements run."""
    with domain.episode(seed=seed, budget=Budget(sqlite_steps=steps)) as ep:
        ran: list[str] = []
        ep.conn.set_trace_callback(ran.append)
        try:
            ep.call(tool, args)
        except WorkLimitError:
            return False, ep.meter.sqlite_steps, len(ran)
        except ToolError:
            pass
        finally:
            ep.conn.set_trace_callback(None)
        return True, ep.meter.sqlite_steps, len(ran)


def test_a_budget_verdict_differs_only_within_its_margin_on_a_reused_connection(retail):
    """A call's first run on a fresh connection counts its steps from zero (n). Reused again and
    again, it passes under n plus one interval per statement it runs and fails under n - 1; so a
    verdict can change only for a call that close to the limit."""
    checked = 0
    for seed, tool, args in _first_calls(retail):
        retail.pool().close()
        passed, steps, ran = _run(retail, seed, tool, args, Budget().sqlite_steps)
        if steps < PROGRESS_EVERY:
            continue  # counted nothing: no edge to find
        checked += 1
        for _ in range(4):
            assert _run(retail, seed, tool, args, steps + PROGRESS_EVERY * ran)[0], tool
            assert not _run(retail, seed, tool, args, steps - 1)[0], tool
    assert checked
