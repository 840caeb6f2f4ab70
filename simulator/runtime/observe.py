"""Observers an episode can be given: they are told what its calls do, and change nothing.

The runtime only calls them; what they are for (validation traces each gold call's reads to find
calls that may run in another order) lives on the grading side (`scoring.validation.orders`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

#: a row a call read: (table, key), or (table, "*") for a scan
Read = tuple[str, Any]


class ReadObserver(Protocol):
    """Told every row a call reads (a `set` is one)."""

    def add(self, row: Read) -> None: ...

    def update(self, rows: Iterable[Read]) -> None: ...
