"""Statements that scoring runs on an episode's connection, kept to a few shapes.

Each statement text an episode's connection runs stays prepared in its cache, and the domain's
pool resets every prepared statement's counters when it takes the connection back
(`simulator.pool`): one `IN (?, ?, ...)` statement per number of values would fill the cache with
statements used once and make every episode's close slower.
"""

from __future__ import annotations

from typing import Any


def padded(values: list[Any], most: int = 512) -> list[Any]:
    """`values` (at most `most`) with the last repeated up to a power of two: a statement of
    `IN (...)` per bucket, not per count, so scoring prepares a few statements on an episode's
    connection, not one per number of keys (the pool resets each kept statement's counters)."""
    size = 1
    while size < len(values):
        size *= 2
    return values + values[-1:] * (min(size, most) - len(values))
