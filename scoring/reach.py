"""Reachable facts: every identifier a gold call uses must be knowable by the agent.

An identifier is an argument value that is a key (or a unique value) of some table, in the seed or
created by an earlier gold call. It is reachable when it appears in the task's instruction, in the
result of an earlier gold call (or the call refers to that result with `$calls.N`), or in what the
domain tells anyone without being asked for anything (the results of read tools that need no
arguments, e.g. a product catalogue). Otherwise an agent could only guess it: `unreachable-fact`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from simulator import Domain, ToolgymError
from simulator.gold import GoldOutcome
from simulator.spec import Task


def identifiers(domain: Domain) -> set[str]:
    """Every string key or unique value in the seed."""
    out: set[str] = set()
    for name, info in domain.tables.items():
        columns = [info.pk] + [c for c, spec in info.spec.columns.items() if spec.unique]
        for row in domain.seed_rows.get(name, []):
            for column in columns:
                value = row.get(column)
                if isinstance(value, str) and value:
                    out.add(value)
    return out


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _mentions(text: str, value: str) -> bool:
    """`value` occurs in `text` as a whole token (not inside a longer identifier)."""
    pattern = r"(?<![\w-])" + re.escape(value) + r"(?![\w-])"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


_AMBIENT: dict[str, str] = {}


def ambient(domain: Domain) -> str:
    """What the read tools that need no arguments return on the seed state (as JSON text)."""
    key = domain.fingerprint()
    if key not in _AMBIENT:
        parts = []
        with domain.episode() as ep:
            for name, tool in sorted(domain.tools.items()):
                if tool.writes or tool.spec.input_schema.get("required"):
                    continue
                try:
                    parts.append(json.dumps(ep.call(name, {}), ensure_ascii=False, default=str))
                except ToolgymError:
                    continue
        _AMBIENT[key] = "\n".join(parts)
    return _AMBIENT[key]


def unreachable(domain: Domain, task: Task, outcomes: list[GoldOutcome], ids: set[str]) -> list[str]:
    """Identifiers used by gold calls that neither the instruction nor an earlier result reveals."""
    problems: list[str] = []
    seen_results = ambient(domain)
    created: set[str] = set()
    for i, (call, outcome) in enumerate(zip(task.calls, outcomes, strict=True)):
        for value in _strings(
            call.arguments
        ):  # literal arguments: `$calls.N` references are reachable by construction
            if value.startswith("$calls.") or (value not in ids and value not in created):
                continue
            if not (_mentions(task.instruction, value) or _mentions(seen_results, value)):
                problems.append(
                    f"gold call {i} ({call.name}) uses {value!r}, which neither the instruction nor an earlier result mentions"
                )
        if outcome.ok:
            seen_results += "\n" + json.dumps(outcome.result, ensure_ascii=False, default=str)
            created.update(_strings(outcome.result))
    return problems
