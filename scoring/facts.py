"""Answer facts: values the agent's final message must contain, matched as tokens, not substrings.

Splits text into number and word tokens and matches a fact as a contiguous run of tokens. Also
finds the values a task rules out (`ruled_out`), so that a "shotgun" answer listing every
candidate value fails the answer check.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cached_property
from json.encoder import encode_basestring_ascii
from typing import TYPE_CHECKING, Any

from .statements import chunks

if TYPE_CHECKING:
    from simulator import Domain, Episode

    from .tasks import Task

_TOKEN = re.compile(r"(?P<num>\d+(?:,\d{3})*(?:\.\d+)?)(?![^\W_])|(?P<word>[^\W_]+)")
#: A '-' right before a number is its sign when it starts the text or follows one of these.
_SIGN_AFTER = " \t\n([{:=$"

Token = tuple[str, Any]
Shape = tuple[Token, ...]


def tokens(text: str) -> list[Token]:
    """The normalised tokens of a text: ("n", Decimal) for numbers, ("w", casefolded str) for words."""
    out: list[Token] = []
    for m in _TOKEN.finditer(text):
        number = m.group("num")
        if number is not None:
            digits = number.replace(",", "")
            if len(digits) > 1 and digits[0] == "0" and "." not in digits:
                out.append(("w", digits))  # an identifier such as 0042
                continue
            start = m.start()
            if start and text[start - 1] == "-" and (start == 1 or text[start - 2] in _SIGN_AFTER):
                digits = "-" + digits
            try:
                out.append(("n", Decimal(digits)))
            except InvalidOperation:  # digits of other scripts that Decimal does not read
                out.append(("w", number.casefold()))
        else:
            out.append(("w", m.group("word").casefold()))
    return out


def fact_text(fact: Any) -> str:
    """A fact as text: strings as is, booleans as true/false, numbers in plain notation, else JSON."""
    if isinstance(fact, str):
        return fact
    if isinstance(fact, bool):
        return "true" if fact else "false"
    if isinstance(fact, int | float):
        return format(Decimal(str(fact)), "f")
    return json.dumps(fact, ensure_ascii=False)


def contains(message: list[Token], fact: list[Token]) -> bool:
    """Whether `fact` occurs as a contiguous run of `message`."""
    n = len(fact)
    if n == 0:
        return False
    first = fact[0]
    return any(message[i] == first and message[i : i + n] == fact for i in range(len(message) - n + 1))


def find_facts(message: str | None, facts: list[Any]) -> list[bool]:
    """For each fact, whether the message contains it (all False when there is no message)."""
    if message is None:
        return [False] * len(facts)
    have = tokens(message)
    found = []
    for fact in facts:
        want = tokens(fact_text(fact))
        if not want:  # a fact of punctuation only: fall back to a case-insensitive substring
            text = fact_text(fact).strip()
            found.append(bool(text) and text.casefold() in message.casefold())
        else:
            found.append(contains(have, want))
    return found


# -- values a task rules out (against shotgun answers) ------------------------------------------

#: Column types whose values an answer can state (json columns are left out).
_SCALAR = {
    "string": (str,),
    "datetime": (str,),
    "integer": (int, float),
    "number": (int, float),
    "boolean": (bool,),
}
#: How many stated ruled-out values a report names.
NAMED = 5


@dataclass(frozen=True)
class RuledOut:
    """The columns holding a task's answer facts, and their other values (the ruled-out ones)."""

    columns: tuple[str, ...]
    values: tuple[Any, ...]
    shapes: tuple[tuple[Token, ...], ...]

    @cached_property
    def lengths(self) -> frozenset[int]:
        """The lengths (in tokens) of the values' shapes."""
        return frozenset(map(len, self.shapes))

    @cached_property
    def position(self) -> dict[tuple[Token, ...], int]:
        """{shape: its value's index} (shapes are distinct)."""
        return {shape: i for i, shape in enumerate(self.shapes)}


_RULED: dict[tuple[str, str, str, str], RuledOut] = {}


def _sql_value(fact: Any, kind: str) -> Any | None:
    """The fact as the column stores it, for a first exact lookup (None: this column cannot hold it)."""
    if kind == "boolean":
        return int(fact) if isinstance(fact, bool) else None
    if kind in ("integer", "number"):
        if isinstance(fact, bool):
            return None
        if isinstance(fact, int | float):
            return fact
        try:
            return float(Decimal(str(fact).replace(",", "").lstrip("$")))
        except (InvalidOperation, ValueError):
            return None
    return fact_text(fact) if not isinstance(fact, dict | list) else None


#: (type, value) -> (its tokens, its JSON sort key): the values of a domain's columns recur in
#: every task's ruled-out set, so each is tokenized once per process (bounded; cleared when full)
_SHAPES: dict[tuple[type, Any], tuple[tuple[Token, ...], str]] = {}
_SHAPES_MAX = 500_000


def _json(value: Any) -> str:
    """`json.dumps(value, default=str)`, without building an encoder for the common types."""
    kind = type(value)
    if kind is str:
        return encode_basestring_ascii(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float and math.isfinite(value):
        return float.__repr__(value)
    return json.dumps(value, default=str)


def _shape(value: Any) -> tuple[tuple[Token, ...], str]:
    key = (float, repr(value)) if type(value) is float else (type(value), value)  # -0.0 is not 0.0
    found = _SHAPES.get(key)
    if found is None:
        if len(_SHAPES) >= _SHAPES_MAX:
            _SHAPES.clear()
        found = _SHAPES[key] = (_tokens_of(value), _json(value))
    return found


def _tokens_of(value: Any) -> Shape:
    """`tuple(tokens(fact_text(value)))`, without the regex for an int or one ASCII word."""
    kind = type(value)
    if kind is int:
        return (("n", Decimal(value)),)
    if kind is str and value.isascii() and value.isalpha():
        return (("w", value.lower()),)
    return tuple(tokens(fact_text(value)))


def _shaped(stored: Iterable[tuple[Any, ...]], kind: str) -> dict[Shape, tuple[Any, str]]:
    """The first value of each shape among a column's distinct values (as stored, in the order
    they came), with its JSON sort key; None and shapeless values left out. In sort key order
    (keys are distinct), so that merging columns' sorted runs is cheap."""
    shapes: dict[Shape, tuple[Any, str]] = {}
    for (raw,) in stored:
        if raw is None:
            continue
        value = bool(raw) if kind == "boolean" else raw
        shape, order = _shape(value)
        if shape and shape not in shapes:
            shapes[shape] = (value, order)
    return dict(sorted(shapes.items(), key=_order))


def _order(item: tuple[Shape, tuple[Any, str]]) -> str:
    """The sort key of a (shape, (value, its sort key)) item."""
    return item[1][1]


#: SQLite's NOCASE collation folds ASCII letters only
_NOCASE = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_TEXT_KINDS = ("string", "datetime")


def _nocase(text: str) -> str:
    """`text` as SQLite's NOCASE collation compares it."""
    return text.lower() if text.isascii() else text.translate(_NOCASE)


def _folded(values: Iterable[Any]) -> list[str] | None:
    """The text values among `values` as NOCASE compares them, folded in one pass over them all
    joined (folding is per character); None when a value holds a NUL, which NOCASE compares as
    the end of the text."""
    texts = [v for v in values if type(v) is str]
    joined = "\x00".join(texts)
    if joined.count("\x00") != max(len(texts) - 1, 0):
        return None
    return _nocase(joined).split("\x00") if texts else []


def _numbers(values: Iterable[Any]) -> Counter[Any]:
    """How many of `values` hold each number (int and float alike: what a number probe equals)."""
    found = Counter(values)
    for value in [v for v in found if type(v) is not int and type(v) is not float]:
        del found[value]
    return found


#: how many values one probe takes (`chunks` pads the last few)
_PROBE_SIZE = 4


def _probe(table: str, column: str, kind: str) -> str:
    """Whether a row of the table holds one of _PROBE_SIZE values in the column (text under NOCASE)."""
    nocase = " COLLATE NOCASE" if kind in _TEXT_KINDS else ""
    marks = ", ".join("?" * _PROBE_SIZE)
    return f'SELECT 1 FROM "{table}" WHERE "{column}"{nocase} IN ({marks}) LIMIT 1'  # noqa: S608


def _distinct(table: str, column: str) -> str:
    return f'SELECT DISTINCT "{column}" FROM "{table}"'  # noqa: S608 - names from the spec


@dataclass(frozen=True)
class _Delta:
    """The rows of a table that an episode's calls changed: their seed versions (those the seed
    has) and their versions now (those that exist), as stored."""

    index: dict[str, int]  # column -> its place in a row
    before: list[tuple[Any, ...]]
    after: list[tuple[Any, ...]]

    def column(self, column: str) -> tuple[list[Any], list[Any]]:
        i = self.index[column]
        return [row[i] for row in self.before], [row[i] for row in self.after]


class _SeedTable:
    """A table of the seed state: how many rows hold each value of its scalar columns, as an
    equality probe compares them (the SQL probe's semantics: text under NOCASE, numbers by value
    across int and float), read in one scan; and each column's distinct values shaped on first
    use (most columns probed never hold a fact). With an episode's changed rows (`_Delta`) it
    answers a probe on the episode's state too."""

    def __init__(self, name: str, kinds: dict[str, str], rows: list[tuple[Any, ...]]):
        self.name, self.kinds, self.size = name, kinds, len(rows) * len(kinds)
        self.texts: dict[str, Counter[str] | None] = {}
        self.numbers: dict[str, Counter[Any]] = {}
        for column, values in zip(kinds, zip(*rows, strict=True) if rows else [()] * len(kinds), strict=True):
            if kinds[column] in _TEXT_KINDS:
                folded = _folded(values)
                self.texts[column] = None if folded is None else Counter(folded)
            else:
                self.numbers[column] = _numbers(values)
        self.shapes: dict[str, dict[Shape, tuple[Any, str]]] = {}
        self.distinct: dict[str, list[tuple[Any, ...]]] = {}

    @classmethod
    def read(cls, domain: Domain, table: str) -> _SeedTable:
        spec = domain.tables[table].spec
        kinds: dict[str, str] = {c: s.type for c, s in spec.columns.items() if s.type in _SCALAR}
        names = ", ".join(f'"{c}"' for c in kinds) or "1"
        return cls(table, kinds, domain.query_seed(f'SELECT {names} FROM "{table}"'))  # noqa: S608

    def holds(self, column: str, probes: list[Any], delta: _Delta | None) -> bool | None:
        """Whether a row holds a value of `column` equal to a probe (as `_sql_value` makes them
        for its kind): in the seed state, or with `delta`'s rows changed. None: text holding a
        NUL (NOCASE stops comparing there; leave it to SQLite)."""
        if column in self.texts:
            texts = self.texts[column]
            if texts is None or any("\x00" in p for p in probes):
                return None
            wanted = [_nocase(p) for p in probes]
            if delta is None:
                return any(p in texts for p in wanted)
            removed, added = delta.column(column)
            gone, new = _folded(removed), _folded(added)
            if gone is None or new is None:
                return None
            return any(texts[p] > gone.count(p) or p in new for p in wanted)
        numbers = self.numbers[column]
        if delta is None:
            return any(p in numbers for p in probes)
        removed, added = delta.column(column)
        gone_n, new_n = _numbers(removed), _numbers(added)
        return any(numbers[p] > gone_n[p] or new_n[p] > 0 for p in probes)

    def shaped(
        self, column: str, domain: Domain, now: list[tuple[Any, ...]] | None = None
    ) -> dict[Shape, Any]:
        """The column's distinct values shaped: the seed's, or those `now` lists (an episode's
        `_distinct`), reusing the seed's when they are the same values, in the same order and of
        the same types (`repr` tells 1 from 1.0 and 0.0 from -0.0)."""
        seeded = self.distinct.get(column)
        if seeded is None:
            seeded = self.distinct[column] = domain.query_seed(_distinct(self.name, column))
        if now is not None and (now != seeded or repr(now) != repr(seeded)):
            return _shaped(now, self.kinds[column])
        found = self.shapes.get(column)
        if found is None:
            found = self.shapes[column] = _shaped(seeded, self.kinds[column])
        return found


#: (domain fingerprint, table) -> that table in the seed state: the tables a task's gold calls
#: leave as seeded are read (and their columns holding facts shaped) once per process, not per task
_SEED: dict[tuple[str, str], _SeedTable] = {}
#: the most values kept in `_SEED` in all (cleared when over)
_SEED_MAX = 2_000_000


_SEED_LOCK = threading.Lock()


def _seed_table(fingerprint: str, domain: Domain, table: str) -> _SeedTable | None:
    """The table's `_SeedTable` (None for a table too large to keep: SQLite probes it)."""
    found = _SEED.get((fingerprint, table))
    if found is None:
        columns = domain.tables[table].spec.columns.values()
        if len(domain.seed_rows.get(table, ())) * sum(c.type in _SCALAR for c in columns) > _SEED_MAX:
            return None
        found = _SeedTable.read(domain, table)
        with _SEED_LOCK:
            if sum(t.size for t in _SEED.values()) + found.size > _SEED_MAX:
                _SEED.clear()
            _SEED[fingerprint, table] = found
    return found


def _deltas(expected: Episode) -> dict[str, _Delta] | None:
    """The rows each table's calls changed in `expected` (tables left out hold the seed state);
    None when something wrote to its database outside a call (the change log may not say what)."""
    changed: dict[str, list[Any]] = {}
    for table, key in expected.changes():
        changed.setdefault(table, []).append(key)
    domain = expected.domain
    deltas = {}
    with expected.lock:
        if expected.written_outside_calls:
            return None
        for table, keys in changed.items():
            info = domain.tables[table]
            now = (expected.conn.execute(info.select_by_pk, info.key_params(k)).fetchone() for k in keys)
            index = {c: i for i, c in enumerate(info.columns)}
            before = list(domain.seed_lookup(table, keys).values())
            deltas[table] = _Delta(index, before, [row for row in now if row is not None])
    return deltas


def ruled_out(expected: Episode, task: Task) -> RuledOut:
    """What `task` rules out, on the expected final state (cached per domain, task content and
    state: its id, instruction and facts, never its id alone)."""
    facts_key = json.dumps([task.instruction, task.answer_facts], default=str, sort_keys=True)
    key = (expected.domain.fingerprint(), task.id, facts_key, expected.digest())
    if key in _RULED:
        return _RULED[key]
    found = _RULED[key] = find_ruled_out(expected, task)
    if len(_RULED) > 4096:
        _RULED.pop(next(iter(_RULED)))
    return found


def find_ruled_out(expected: Episode, task: Task) -> RuledOut:
    """`ruled_out` without its cache (for callers that keep the result themselves)."""
    facts = [tuple(tokens(fact_text(f))) for f in task.answer_facts]
    said = _Runs([tokens(task.instruction)])
    fingerprint = expected.domain.fingerprint()
    deltas = _deltas(expected)
    columns: list[str] = []
    values: dict[Shape, tuple[Any, str]] = {}
    by_kind = {
        kind: [
            p
            for f, shape in zip(task.answer_facts, facts, strict=True)
            if shape and (p := _sql_value(f, kind)) is not None
        ]
        for kind in _SCALAR
    }
    for name, info in sorted(expected.domain.tables.items()):
        for column, spec in info.spec.columns.items():
            kind = spec.type
            probes = by_kind.get(kind)
            if not probes:
                continue
            delta, seed = None, None  # (no seed table: SQLite answers)
            if deltas is not None:
                delta, seed = deltas.get(name), _seed_table(fingerprint, expected.domain, name)
            holds = seed.holds(column, probes, delta) if seed is not None else None
            if holds is None:  # ask SQLite
                probe = _probe(name, column, kind)
                holds = any(
                    expected.conn.execute(probe, some).fetchone() for some in chunks(probes, (_PROBE_SIZE,))
                )
            if not holds:
                continue
            if seed is None:
                shaped = _shaped(expected.conn.execute(_distinct(name, column)), kind)
            else:
                now = None if delta is None else expected.conn.execute(_distinct(name, column)).fetchall()
                shaped = seed.shaped(column, expected.domain, now)
            columns.append(f"{name}.{column}")
            if not values:
                values = dict(shaped)
                continue
            for shape, entry in shaped.items():
                if shape not in values:
                    values[shape] = entry
    excluded = {*facts, *said.runs({len(shape) for shape in values})}
    kept = [item for item in values.items() if item[0] not in excluded]
    if len(columns) > 1:  # one column's values come sorted (`_shaped`)
        kept.sort(key=_order)
    return RuledOut(tuple(columns), tuple(v for _, (v, _) in kept), tuple(s for s, _ in kept))


class _Runs:
    """The contiguous token runs of some texts, for `shape in runs` lookups (built lazily per length)."""

    def __init__(self, texts: list[list[Token]]):
        self.texts = texts
        self.by_length: dict[int, set[tuple[Token, ...]]] = {}

    def _of_length(self, n: int) -> set[tuple[Token, ...]]:
        if n not in self.by_length:
            self.by_length[n] = {tuple(t[i : i + n]) for t in self.texts for i in range(len(t) - n + 1)}
        return self.by_length[n]

    def __contains__(self, shape: object) -> bool:
        assert isinstance(shape, tuple)
        return shape in self._of_length(len(shape))

    def runs(self, lengths: Iterable[int]) -> set[tuple[Token, ...]]:
        """Every run of these lengths."""
        return set().union(*(self._of_length(n) for n in lengths))


def stated(texts: Iterable[str | None], ruled: RuledOut) -> list[Any]:
    """The ruled-out values the texts state (as contiguous token runs), in `ruled` order."""
    said = _Runs([tokens(t) for t in texts if t])
    if not said.texts or not ruled.values:
        return []
    position = ruled.position
    found = sorted(i for run in said.runs(ruled.lengths) if (i := position.get(run)) is not None)
    return [ruled.values[i] for i in found]


def shotgun(expected: Episode | RuledOut, task: Task, texts: Iterable[str | None]) -> list[Any]:
    """The ruled-out values an answer states when they outnumber the task's answer facts (the answer
    check fails), else []. `expected` is the expected final state, or what it rules out."""
    if not task.answer_facts:
        return []
    texts = list(texts)
    if not any(texts):
        return []
    found = stated(texts, expected if isinstance(expected, RuledOut) else ruled_out(expected, task))
    return found if len(found) > len(task.answer_facts) else []


def shotgun_sentence(values: list[Any], facts: int) -> str:
    """The explanation of a failed shotgun check, naming at most `NAMED` of the values."""
    named = ", ".join(fact_text(v) for v in values[:NAMED])
    more = f" and {len(values) - NAMED} more" if len(values) > NAMED else ""
    return (
        f"The answer check fails: the answer also states {len(values)} value(s) the task rules out "
        f"({named}{more}), more than its {facts} answer fact(s); listing candidates is not answering."
    )
