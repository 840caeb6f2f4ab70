"""One-argument mutations of a gold call: a different valid value of the same type.

Used by validation's verifier-strength check: if the scorer gives full marks to a solution whose
write used a corrupted argument, the task's verifier is weak. A mutation must still pass the tool's
input schema (so the call reaches the operation); a key is replaced by another existing key of the
same table, an enum value by another allowed value, a number by a nearby valid number.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from simulator import Domain

from ..calls import CallRef


@dataclass(frozen=True)
class Mutation:
    """One changed argument: where (a path), from what, to what."""

    path: tuple[str | int, ...]
    before: Any
    after: Any
    arguments: dict[str, Any]

    def describe(self) -> str:
        where = ".".join(str(p) for p in self.path)
        return f"{where}: {self.before!r} -> {self.after!r}"


def key_values(domain: Domain) -> dict[Any, list[Any]]:
    """value -> the sorted keys of the table whose key it is (for swapping one id for another)."""
    index: dict[Any, list[Any]] = {}
    for name, info in domain.tables.items():
        keys = sorted(
            (row[info.pk] for row in domain.seed_rows.get(name, [])), key=lambda k: (str(type(k)), k)
        )
        for key in keys:
            index.setdefault(key, keys)
    return index


def _schema_at(schema: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
    node: Any = schema
    for part in path:
        if not isinstance(node, dict):
            return {}
        node = node.get("items", {}) if isinstance(part, int) else node.get("properties", {}).get(part, {})
    return node if isinstance(node, dict) else {}


def _candidates(value: Any, schema: dict[str, Any], keys: dict[Any, list[Any]]) -> Iterator[Any]:
    if isinstance(schema.get("enum"), list):
        yield from (v for v in schema["enum"] if v != value)
        return
    if isinstance(value, bool):
        yield not value
    elif isinstance(value, int | float):
        yield from (value + 1, value - 1, value * 2, value / 2, 0)
    elif isinstance(value, str):
        if value in keys:
            ring = keys[value]
            i = ring.index(value)
            yield from (ring[(i + step) % len(ring)] for step in (1, 2, 3) if len(ring) > step)
        yield from (
            value + "x",
            value[:-1] if len(value) > 1 else value + "y",
            value.upper() if value != value.upper() else value.lower(),
        )


def _leaves(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        if value:
            yield from _leaves(value[0], (*path, 0))
    else:
        yield path, value


def _set(arguments: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(arguments)
    node: Any = out
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return out


def mutations(
    domain: Domain, tool: str, arguments: dict[str, Any], free: list[str], keys: dict[Any, list[Any]]
) -> list[Mutation]:
    """For each argument leaf (first element of lists), the first different value the tool accepts."""
    schema = domain.tools[tool].spec.input_schema
    validator = domain.validators[tool]
    out: list[Mutation] = []
    for path, value in _leaves(arguments):
        if not path or path[0] in free or value is None:
            continue
        if CallRef.parse(value) is not None:
            continue
        for candidate in _candidates(value, _schema_at(schema, path), keys):
            if (
                candidate == value
                or type(candidate) is not type(value)
                and not (isinstance(value, float) and isinstance(candidate, int))
            ):
                continue
            changed = _set(arguments, path, candidate)
            if validator.is_valid(changed):
                out.append(Mutation(path, value, candidate, changed))
                break
    return out
