"""Alternative orders of gold calls: which calls are independent, and the orders to try.

Two calls are independent when neither writes a row the other reads or writes (a scan of a table
counts as reading every row of it) and neither uses the other's result. Swapping independent
calls must not change the reward; a task that fails under such a swap is `order-sensitive`.
What a call reads is traced by a `ReadTrace`, the read observer the episode is given.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

Row = tuple[str, Any]


class ReadTrace:
    """A read observer (`simulator.runtime.observe.ReadObserver`) that keeps the rows read since they were
    last taken: one call's reads. `stop()` ends the tracing (later calls cost nothing more)."""

    def __init__(self) -> None:
        self.rows: set[Row] = set()
        self.on = True

    def add(self, row: Row) -> None:
        if self.on:
            self.rows.add(row)

    def update(self, rows: Iterable[Row]) -> None:
        if self.on:
            self.rows.update(rows)

    def take(self) -> set[Row]:
        """The rows read since the last take, and a fresh start."""
        rows, self.rows = self.rows, set()
        return rows

    def stop(self) -> None:
        self.on = False
        self.rows = set()


@dataclass
class Footprint:
    """What one call read and wrote."""

    reads: set[Row] = field(default_factory=set)
    writes: set[Row] = field(default_factory=set)
    refs: set[int] = field(default_factory=set)


def _overlap(a: set[Row], b: set[Row]) -> bool:
    if a & b:
        return True
    scans_a = {t for t, k in a if k == "*"}
    scans_b = {t for t, k in b if k == "*"}
    return any(t in scans_a for t, _ in b) or any(t in scans_b for t, _ in a)


def independent(i: int, j: int, prints: list[Footprint]) -> bool:
    a, b = prints[i], prints[j]
    if i in b.refs or j in a.refs:
        return False
    return not (_overlap(a.writes, b.reads | b.writes) or _overlap(b.writes, a.reads))


def alternative_orders(prints: list[Footprint], limit: int = 4) -> list[list[int]]:
    """Orders of the calls that swap independent writes (each differing from the gold order)."""
    writes = [i for i, p in enumerate(prints) if p.writes]
    n = len(prints)
    orders: list[list[int]] = []
    for a, b in zip(writes, writes[1:], strict=False):
        between = range(a + 1, b)
        if independent(a, b, prints) and all(
            independent(a, k, prints) and a not in prints[k].refs for k in between
        ):
            order = [k for k in range(n) if k != a]
            order.insert(order.index(b) + 1, a)  # move a just after b
            orders.append(order)
        if len(orders) >= limit:
            break
    return orders
