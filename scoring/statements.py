"""Statements that scoring runs on an episode's connection, kept to a few shapes.

Each statement text an episode's connection runs stays prepared in its cache (`simulator.runtime._pool`:
256, least recently used out), and pooled connections keep it for later episodes: one
`IN (?, ?, ...)` statement per number of values would fill the cache with statements used once
and push out the tools' own. So values go in chunks of a few fixed sizes, the last chunk padded
with its last value (`IN` does not mind).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

#: The sizes of `IN (...)` lists scoring uses
SIZES = (1, 8, 64, 512)


def chunks(values: Sequence[Any], sizes: Sequence[int] = SIZES) -> Iterator[list[Any]]:
    """`values` in chunks of the smallest of `sizes` that holds what is left (else the largest),
    the last padded with its last value."""
    start = 0
    while start < len(values):
        left = len(values) - start
        size = next((s for s in sizes if s >= left), sizes[-1])
        chunk = list(values[start : start + size])
        yield chunk + chunk[-1:] * (size - len(chunk))
        start += size
