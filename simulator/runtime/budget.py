"""Per-call budgets: no single tool call may do unbounded work or hold the server for long.

A call runs under a `Budget` of three limits: SQLite steps (counted by a progress handler),
evaluation steps (counted by `charge`, which the runtime calls as it works) and wall-clock seconds.
Exceeding a step limit is a `WorkLimitError` (the agent's error); the wall clock, a `CallTimeout`
(an infrastructure failure). Either way the call fails and is rolled back. Evaluation steps count
the same in any process. SQLite calls the handler at multiples of `PROGRESS_EVERY` steps of a
statement's whole life, and connections keep their statements across calls and episodes
(simulator.runtime._pool), so a call's SQLite steps are counted to within `PROGRESS_EVERY` per statement
it runs: only a call that close to the limit can pass once and fail another time (engine.md).
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ..errors import CallTimeout, ToolgymError, WorkLimitError

#: SQLite calls the progress handler every this many VM instructions of one statement.
PROGRESS_EVERY = 1000
#: lists shorter than this are scanned rather than indexed (an index costs more than it saves).
INDEX_FROM = 32
_CLOCK_EVERY = 4096  # evaluation steps between wall-clock checks


@dataclass(frozen=True)
class Budget:
    """The most one call may do, and how far an episode's database may grow (`growth_bytes` beyond
    its seed state; a write past it is the agent's tool error). The defaults leave every bundled
    domain's gold calls far inside."""

    sqlite_steps: int = 50_000_000
    eval_steps: int = 2_000_000
    wall_seconds: float = 10.0
    growth_bytes: int = 16 * 2**20

    def __post_init__(self) -> None:
        if self.sqlite_steps < 1 or self.eval_steps < 1 or not self.wall_seconds > 0 or self.growth_bytes < 1:
            raise ToolgymError(f"a budget's limits must be positive, got {self}")


class Meter:
    """Counts one episode's current call against its budget (one call at a time)."""

    def __init__(self, budget: Budget):
        self.budget = budget
        self.sqlite_steps = 0
        self.eval_steps = 0
        self.tripped: WorkLimitError | CallTimeout | None = None
        self._deadline = 0.0
        self._next_clock = _CLOCK_EVERY
        self._indexes: dict[int, tuple[list[Any], int, Counter[Any] | None]] = {}
        self._conn: Any = None  # the metered call's connection (`run`)
        self._hooked: Any = None  # the connection whose progress handler this meter is (`release`)
        self._active = False  # a call is running: the progress handler counts
        self._token: Any = None

    def run(self, conn: sqlite3.Connection) -> Meter:
        """Meter one call on `conn`: `with meter.run(conn):` the call; over budget, it raises
        WorkLimitError or CallTimeout. (A plain context manager: a call pays no generator.)"""
        self._conn = conn
        return self

    def __enter__(self) -> Meter:
        self.sqlite_steps = self.eval_steps = 0
        self.tripped = None
        self._next_clock = _CLOCK_EVERY
        self._deadline = time.monotonic() + self.budget.wall_seconds
        conn = self._conn
        if self._hooked is not conn:  # (set once: between calls it counts nothing)
            conn.set_progress_handler(self._progress, PROGRESS_EVERY)
            self._hooked = conn
        self._active = True
        self._token = _CURRENT.set(self)
        return self

    def release(self) -> None:
        """Take the progress handler off its connection (the connection goes on to other uses)."""
        if self._hooked is not None:
            self._hooked.set_progress_handler(None, 0)
            self._hooked = None

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        _CURRENT.reset(self._token)
        self._active = False
        if self._indexes:
            self._indexes.clear()
        # an interrupted statement surfaces as sqlite3.OperationalError (or as whatever a
        # backstop turned it into): the budget's verdict is the call's error
        if exc is not None and self.tripped is not None and exc is not self.tripped:
            raise self.tripped from None

    def _trip(self, error: WorkLimitError | CallTimeout) -> WorkLimitError | CallTimeout:
        if self.tripped is None:
            self.tripped = error
        return self.tripped

    def _over(self) -> WorkLimitError | CallTimeout | None:
        if self.sqlite_steps > self.budget.sqlite_steps:
            return WorkLimitError(f"{self.budget.sqlite_steps:,} database steps", self.budget.sqlite_steps)
        if self.eval_steps > self.budget.eval_steps:
            return WorkLimitError(f"{self.budget.eval_steps:,} evaluation steps", self.budget.eval_steps)
        if time.monotonic() > self._deadline:
            return CallTimeout(self.budget.wall_seconds)
        return None

    def _progress(self) -> int:
        if not self._active or self.tripped is not None:
            return 0  # between calls, or already failing: let the rollback run
        self.sqlite_steps += PROGRESS_EVERY
        error = self._over()
        if error is None:
            return 0
        self._trip(error)
        return 1  # interrupts the statement (sqlite3.OperationalError), converted in `run`

    def charge(self, steps: int) -> None:
        """Count `steps` of evaluation work; raises when the call is over its budget."""
        self.eval_steps += steps
        if self.eval_steps > self.budget.eval_steps:
            raise self._trip(
                WorkLimitError(f"{self.budget.eval_steps:,} evaluation steps", self.budget.eval_steps)
            )
        if self.eval_steps >= self._next_clock:
            self._next_clock = self.eval_steps + _CLOCK_EVERY
            if time.monotonic() > self._deadline:
                raise self._trip(CallTimeout(self.budget.wall_seconds))

    def counts(self, values: list[Any]) -> Counter[Any] | None:
        """A multiset of `values` built once per call (None when they are not all hashable)."""
        entry = self._indexes.get(id(values))
        if entry is not None and entry[0] is values and entry[1] == len(values):
            self.charge(1)
            return entry[2]
        self.charge(len(values))
        try:
            counter: Counter[Any] | None = Counter(values)
        except TypeError:
            counter = None
        self._indexes[id(values)] = (values, len(values), counter)  # holding it keeps its id unique
        return counter


_CURRENT: ContextVar[Meter | None] = ContextVar("toolgym_meter", default=None)


def charge(steps: int) -> None:
    """Count evaluation work against the running call's budget (nothing outside a call)."""
    meter = _CURRENT.get()
    if meter is not None:
        meter.charge(steps)


def count_of(values: list[Any], value: Any) -> int:
    """`values.count(value)`, linear over a whole call however often it is asked of one list."""
    meter = _CURRENT.get()
    if meter is None:
        return values.count(value)
    if len(values) >= INDEX_FROM:
        counter = meter.counts(values)
        if counter is not None:
            try:
                return counter[value]
            except TypeError:  # an unhashable value: scan
                pass
    meter.charge(len(values) + 1)
    return values.count(value)


def member(values: list[Any], value: Any) -> bool:
    """`value in values`, with the same per-call index as `count_of`."""
    return count_of(values, value) > 0
