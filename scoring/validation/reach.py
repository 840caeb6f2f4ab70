"""Reachable facts: every identifier a gold call uses must be knowable by the agent.

An identifier a gold call uses must be findable from the instruction, earlier results or what
the domain's read tools reveal; otherwise `unreachable-fact`. An answer fact must appear where an
agent can find it, or be a value an agent computes; otherwise `unreachable-answer`.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import calendar
import itertools
import json
import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from simulator import Domain, Episode, ToolgymError

from ..calls import CallRef
from ..facts import contains, fact_text, find_facts, tokens
from ..tasks import Task
from .gold import GoldOutcome


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


def strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def _mentions(text: str, value: str) -> bool:
    """`value` occurs in `text` as a whole token (not inside a longer identifier)."""
    pattern = r"(?<![\w-])" + re.escape(value) + r"(?![\w-])"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


@dataclass
class _Seen:
    """What reachability worked out on one domain's seed state (which never changes)."""

    ambient: str | None = None
    closure: tuple[str, frozenset[str]] | None = None
    columns: dict[str, dict[str, Any]] | None = None
    reveals: dict[str, str] = field(default_factory=dict)
    searched: dict[tuple[str, int], str] = field(default_factory=dict)
    #: one seed-state episode for every lookup (read tools never write), and the lookup tools
    reader: tuple[Episode, list[tuple[str, str]]] | None = None


#: the domains worked out most recently, by fingerprint (a generation run meets thousands in one
#: process: the oldest is dropped and its reader episode closed)
MAX_DOMAINS = 8
_SEEN: OrderedDict[str, _Seen] = OrderedDict()


def _seen(domain: Domain) -> _Seen:
    key = domain.fingerprint()
    seen = _SEEN.get(key)
    if seen is not None:
        _SEEN.move_to_end(key)
        return seen
    seen = _SEEN[key] = _Seen()
    while len(_SEEN) > MAX_DOMAINS:
        _, old = _SEEN.popitem(last=False)
        if old.reader is not None:
            old.reader[0].close()
    return seen


def _reader(domain: Domain) -> tuple[Episode, list[tuple[str, str]]]:
    seen = _seen(domain)
    if seen.reader is None:
        seen.reader = (domain.episode(), _lookup_tools(domain))
    return seen.reader


def ambient(domain: Domain) -> str:
    """What the read tools that need no arguments return on the seed state (as JSON text)."""
    seen = _seen(domain)
    if seen.ambient is None:
        parts = []
        with domain.episode() as ep:
            for name, tool in sorted(domain.tools.items()):
                if tool.writes or tool.spec.input_schema.get("required"):
                    continue
                try:
                    parts.append(json.dumps(ep.call(name, {}), ensure_ascii=False, default=str))
                except ToolgymError:
                    continue
        seen.ambient = "\n".join(parts)
    return seen.ambient


def _lookup_tools(domain: Domain) -> list[tuple[str, str]]:
    """(tool, argument) of every read tool that takes exactly one required string argument."""
    out = []
    for name, tool in sorted(domain.tools.items()):
        schema = tool.spec.input_schema
        required = schema.get("required") or []
        if tool.writes or len(required) != 1:
            continue
        prop = (schema.get("properties") or {}).get(required[0], {})
        if prop.get("type") == "string":
            out.append((name, required[0]))
    return out


_TOKEN = re.compile(r"[^\s\"',:;()\[\]{}]+")


def _tokens(text: str) -> set[str]:
    """Whitespace/punctuation-separated words, also without a sentence's trailing punctuation."""
    words = _TOKEN.findall(text)
    return set(words) | {w.rstrip(".!?") for w in words}


def _reveal(domain: Domain, value: str) -> str:
    """What the one-argument read tools say about `value` on the seed state (cached per domain)."""
    reveals = _seen(domain).reveals
    if value not in reveals:
        ep, tools = _reader(domain)
        parts = []
        for tool, arg in tools:
            try:
                parts.append(json.dumps(ep.call(tool, {arg: value}), ensure_ascii=False, default=str))
            except ToolgymError:
                continue
        reveals[value] = "\n".join(parts)
    return reveals[value]


def _expand(domain: Domain, start: set[str], ids: set[str], hops: int) -> tuple[str, set[str]]:
    """Look up the `start` identifiers, then what those lookups reveal, `hops` deep: (text, tokens)."""
    text = ""
    tokens: set[str] = set()
    seen: set[str] = set()
    frontier = set(start)
    for _ in range(hops):
        found = "\n".join(_reveal(domain, v) for v in sorted(frontier - seen))
        seen |= frontier
        text += "\n" + found
        new = _tokens(found)
        tokens |= new
        frontier = (new & ids) - seen
        if not frontier:
            break
    return text, tokens


def _ambient_closure(domain: Domain, ids: set[str], hops: int) -> tuple[str, frozenset[str]]:
    """What argument-less read tools say, and what looking up their identifiers reveals (cached)."""
    seen = _seen(domain)
    if seen.closure is None:
        base = ambient(domain)
        text, tokens = _expand(domain, _tokens(base) & ids, ids, hops)
        seen.closure = (base + text, frozenset(tokens | _tokens(base)))
    return seen.closure


#: Search calls (read tools with arguments filled from known facts) tried per known text.
MAX_SEARCHES = 64


def _column_values(domain: Domain) -> dict[str, dict[str, Any]]:
    """Column name -> {casefolded text of a seed value: the value} (cached per domain)."""
    seen = _seen(domain)
    if seen.columns is None:
        out: dict[str, dict[str, Any]] = {}
        for rows in domain.seed_rows.values():
            for row in rows:
                for column, value in row.items():
                    if isinstance(value, str | int | float) and not isinstance(value, bool):
                        out.setdefault(column, {}).setdefault(str(value).casefold(), value)
        seen.columns = out
    return seen.columns


def _search_tools(domain: Domain) -> list[tuple[str, list[str]]]:
    """(tool, required arguments) of every read tool with required arguments that the one-argument
    identifier lookups do not already cover."""
    lookups = {name for name, _ in _lookup_tools(domain)}
    out = []
    for name, tool in sorted(domain.tools.items()):
        required = list(tool.spec.input_schema.get("required") or [])
        if not tool.writes and required and name not in lookups:
            out.append((name, required))
    return out


def _fillers(domain: Domain, tool: str, argument: str, known: set[str]) -> list[Any]:
    """Known facts that fit an argument: enum values, or values of a column of the argument's name
    (or its singular) — as the seed spells them — that the known text states."""
    prop = (domain.tools[tool].spec.input_schema.get("properties") or {}).get(argument) or {}
    folded = {k.casefold() for k in known}
    if isinstance(prop.get("enum"), list):
        return [v for v in prop["enum"] if str(v).casefold() in folded]
    columns = _column_values(domain)
    values = columns.get(argument) or columns.get(argument.removesuffix("s")) or {}
    return sorted((values[k] for k in folded if k in values), key=str)


def searches(domain: Domain, known_text: str, limit: int = MAX_SEARCHES) -> str:
    """What read tools return when every required argument is filled with facts the known text
    states (see `_fillers`): each combination, in a fixed order, at most `limit` calls (as JSON)."""
    searched = _seen(domain).searched
    key = (known_text, limit)
    if key in searched:
        return searched[key]
    known = _tokens(known_text)
    ep, _ = _reader(domain)
    parts: list[str] = []
    calls = 0
    for tool, required in _search_tools(domain):
        options = [_fillers(domain, tool, arg, known) for arg in required]
        for combo in itertools.product(*options):
            if calls >= limit:
                break
            calls += 1
            try:
                result = ep.call(tool, dict(zip(required, combo, strict=True)))
            except ToolgymError:
                continue
            parts.append(json.dumps(result, ensure_ascii=False, default=str))
    if len(searched) > 1024:
        searched.clear()
    searched[key] = "\n".join(parts)
    return searched[key]


def discoverable(domain: Domain, known_text: str, ids: set[str], value: str, hops: int = 2) -> bool:
    """Whether `value` turns up when the agent looks up, with one-argument read tools, the identifiers
    it already knows (those in `known_text`, in what argument-less tools say and in what read tools
    return for arguments filled with known facts, `searches`), `hops` deep."""
    _, ambient_tokens = _ambient_closure(domain, ids, hops)
    if value in ambient_tokens:
        return True
    found = _tokens(searches(domain, known_text))
    if value in found:
        return True
    _, tokens = _expand(domain, (_tokens(known_text) | found) & ids, ids, hops)
    return value in tokens


def unreachable(domain: Domain, task: Task, outcomes: list[GoldOutcome], ids: set[str]) -> list[str]:
    """Identifiers used by gold calls that the agent has no way to learn (see the module docstring)."""
    problems: list[str] = []
    seen_results = ""
    created: set[str] = set()
    base = ambient(domain)
    for i, (call, outcome) in enumerate(zip(task.calls, outcomes, strict=True)):
        for value in strings(call.arguments):  # `$calls.N` references are reachable by construction
            if CallRef.parse(value) is not None or (value not in ids and value not in created):
                continue
            known = task.instruction + "\n" + seen_results
            if (
                _mentions(known, value)
                or _mentions(base, value)
                or discoverable(domain, known, ids | created, value)
            ):
                continue
            problems.append(
                f"gold call {i} ({call.name}) uses {value!r}, which neither the instruction, nor an earlier result, "
                "nor a lookup of what they mention reveals"
            )
        if outcome.ok:
            seen_results += "\n" + json.dumps(outcome.result, ensure_ascii=False, default=str)
            created.update(strings(outcome.result))
    return problems


# -- answer facts that can never appear ---------------------------------------------------------


def _stored(episode: Episode, fact: Any) -> bool:
    """Whether some column value of the episode's state contains the fact (as a token run): a
    substring probe in SQL on the fact's longest token, then the token check on what it finds."""
    want = tokens(fact_text(fact))
    if not want:
        return False
    kind, longest = max(want, key=lambda t: len(str(t[1])))
    needle = str(abs(longest)).split(".")[0] if kind == "n" else str(longest)
    needle = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    for name, info in sorted(episode.domain.tables.items()):
        for column in info.columns:
            query = f'SELECT "{column}" FROM "{name}" WHERE CAST("{column}" AS TEXT) LIKE ? ESCAPE \'\\\' LIMIT 200'
            for (raw,) in episode.conn.execute(query, (f"%{needle}%",)):
                text = raw if isinstance(raw, str) else fact_text(raw)
                if contains(tokens(text), want):
                    return True
    return False


_CALENDAR = {n.casefold() for n in [*calendar.day_name, *calendar.month_name] if n}


def computable(fact: Any) -> bool:
    """A number, a date or date-time, or a weekday or month name: what an agent may compute (a total,
    a difference, a deadline, the weekday of a date) rather than find written anywhere."""
    text = fact_text(fact).strip()
    if not isinstance(fact, str) or text.casefold() in _CALENDAR:
        return True
    try:
        Decimal(text.replace(",", "").lstrip("$"))
        return True
    except InvalidOperation:
        pass
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
        return True
    except ValueError:
        return False


def unreachable_answers(
    domain: Domain, task: Task, outcomes: list[GoldOutcome], expected: Episode
) -> list[str]:
    """Answer facts that appear nowhere: not in the instruction, not in any gold call's result, not
    in the seed or the expected final state, nor a value an agent may compute (`computable`). No
    agent could state them but by chance."""
    if not task.answer_facts:
        return []
    seen = [
        task.instruction,
        domain.spec.policy or "",
        *(t.spec.description or "" for t in domain.tools.values()),
    ]
    seen += [
        json.dumps(o.result, ensure_ascii=False, default=str) if o.ok else o.error or "" for o in outcomes
    ]
    problems = []
    for fact, found in zip(task.answer_facts, find_facts("\n".join(seen), task.answer_facts), strict=True):
        if found or computable(fact) or _stored(expected, fact):
            continue
        with domain.episode(seed=task.seed) as seed_state:
            if _stored(seed_state, fact):
                continue
        problems.append(
            f"answer fact {fact_text(fact)!r} appears nowhere: not in the instruction, nor in any gold call's "
            "result, nor in the seed or the final database"
        )
    return problems
