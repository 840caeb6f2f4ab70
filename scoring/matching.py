"""Matching the rows an agent created to the rows the gold solution creates, by content.

Generated keys differ between rollouts, so created rows are matched table by table, parents
before children: by equal content first, then by the closest row left. The matched keys translate
the agent's references to created rows into the expected keys.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import math
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from simulator.plan.ids import IdMaker

Row = dict[str, Any]
Key = Any


class Unmatched:
    """A reference to a created row that matched nothing: equal to no value."""

    __slots__ = ("key",)

    def __init__(self, key: Key):
        self.key = key

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return hash(("unmatched", repr(self.key)))

    def __repr__(self) -> str:
        return f"Unmatched({self.key!r})"


_NUMBERS = (int, float)


def same(a: Any, b: Any) -> bool:
    """Equal values; numbers within a relative 1e-9 (so float noise from another call order passes)."""
    if a == b:
        return (type(a) is bool) == (type(b) is bool)  # True == 1, but not as column values
    if type(a) in _NUMBERS and type(b) in _NUMBERS:
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return False


def hashable(value: Any) -> Any:
    """A hashable stand-in for a value (floats rounded, containers frozen)."""
    if isinstance(value, float):
        return round(value, 9) + 0.0
    if isinstance(value, dict):
        return ("{", tuple(sorted((k, hashable(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("[", tuple(hashable(v) for v in value))
    return value


@dataclass
class TableShape:
    """What matching needs to know of a table."""

    name: str
    pk: str  # the generated key column (a composite key's last column)
    columns: tuple[str, ...]  # content columns: not the generated key column, not ignored
    refs: dict[str, str]  # column -> table whose key it holds
    integer_key: bool
    ids: IdMaker  # how the table's string keys are generated
    composite: bool = False  # keys are tuples; their other columns are content columns

    def part(self, key: Key) -> Key:
        """The generated part of a key: the key, or a composite key's last value."""
        return key[-1] if self.composite else key


@dataclass
class Side:
    """The rows one episode created (table -> key -> row) and which of their keys it generated."""

    created: dict[str, dict[Key, Row]]
    generated: dict[str, set[Key]]
    children: dict[tuple[str, Key], list[tuple[str, str, Key]]] | None = field(default=None, repr=False)


_GENERATED: dict[tuple[int, IdMaker], list[str]] = {}
_GENERATED_LOCK = threading.Lock()


def generated_keys(seed: int, shape: TableShape, keys: set[Key], count: int) -> set[Key]:
    """The keys among `keys` that an episode with `seed` generated, when it created `count` rows.

    Integer keys are max+1: all generated. String keys are the table's id scheme's candidates
    n = 1, 2, ... (`simulator.plan.ids`: by default the prefix and 8 hex digits of sha256("seed:table:n");
    `Episode.next_id` skips past a key that exists, hence the slack). For a composite key, its
    last value is the generated one.
    """
    if shape.integer_key:
        return set(keys)
    if not keys:
        return set()
    with _GENERATED_LOCK:
        if len(_GENERATED) > 4096:
            _GENERATED.clear()
        made = _GENERATED.setdefault((seed, shape.ids), [])
        if len(made) < count + 16:
            made.extend(shape.ids.candidates(seed, count + 16)[len(made) :])
        wanted = set(made[: count + 16])
        return {k for k in keys if shape.part(k) in wanted}


class CreatedRows:
    """Matches the agent's created rows to the expected ones; then says how two rows compare.

    After `match(order)`: `key_map` (table -> agent key -> expected key), `pairs` (table, expected
    key, agent key), and the created rows left over on either side (`missing`, `unexpected`).
    """

    def __init__(self, shapes: dict[str, TableShape], expected: Side, actual: Side):
        self.shapes, self.expected, self.actual = shapes, expected, actual
        self.key_map: dict[str, dict[Key, Key]] = defaultdict(dict)
        self.pairs: list[tuple[str, Key, Key]] = []
        self.missing: list[tuple[str, Key]] = []
        self.unexpected: list[tuple[str, Key]] = []

    def match(self, order: list[str]) -> CreatedRows:
        for table in order:
            if self.expected.created.get(table) or self.actual.created.get(table):
                self._table(self.shapes[table])
        return self

    def translate(self, shape: TableShape, column: str, value: Any) -> Any:
        """An agent's value in the expected key space: references to created rows are mapped."""
        target = shape.refs.get(column)
        if target is None or value is None or value not in self.actual.created.get(target, ()):
            return value
        mapped = self.key_map[target].get(value)
        return Unmatched(value) if mapped is None else mapped

    def compare(self, table: str, ekey: Key, akey: Key) -> list[tuple[str, Any, Any, bool]]:
        """(column, expected, agent's value, equal) for a created row of each side.

        The key is a column too unless both sides generated it.
        """
        shape = self.shapes[table]
        erow, arow = self.expected.created[table][ekey], self.actual.created[table][akey]
        out = [(c, erow[c], arow[c], same(erow[c], self.translate(shape, c, arow[c]))) for c in shape.columns]
        egen, agen = ekey in self.expected.generated[table], akey in self.actual.generated[table]
        if not (egen and agen):
            epart, apart = shape.part(ekey), shape.part(akey)
            out.append((shape.pk, epart, apart, not egen and not agen and epart == apart))
        return out

    def _sig(self, shape: TableShape, side: Side, key: Key) -> tuple[Any, ...]:
        row = side.created[shape.name][key]
        if side is self.expected:
            values = tuple(hashable(row[c]) for c in shape.columns)
        else:
            values = tuple(hashable(self.translate(shape, c, row[c])) for c in shape.columns)
        return values if key in side.generated[shape.name] else (*values, ("key", shape.part(key)))

    def _table(self, shape: TableShape) -> None:
        name = shape.name
        exp_left = dict.fromkeys(sorted(self.expected.created.get(name, {}), key=repr))
        act_left = dict.fromkeys(sorted(self.actual.created.get(name, {}), key=repr))
        progress = True
        while progress and exp_left and act_left:  # repeated for references within the table
            progress = False
            by_sig: dict[tuple[Any, ...], list[Key]] = defaultdict(list)
            for key in exp_left:
                by_sig[self._sig(shape, self.expected, key)].append(key)
            for akey in list(act_left):
                candidates = by_sig.get(self._sig(shape, self.actual, akey))
                if candidates:
                    ekey = self._choose(shape, akey, candidates)
                    candidates.remove(ekey)
                    self._pair(name, ekey, akey, exp_left, act_left)
                    progress = True
        self._closest(shape, exp_left, act_left)
        self.missing.extend((name, k) for k in exp_left)
        self.unexpected.extend((name, k) for k in act_left)

    def _pair(
        self, table: str, ekey: Key, akey: Key, exp_left: dict[Key, None], act_left: dict[Key, None]
    ) -> None:
        self.key_map[table][akey] = ekey
        self.pairs.append((table, ekey, akey))
        del exp_left[ekey], act_left[akey]

    def _choose(self, shape: TableShape, akey: Key, candidates: list[Key]) -> Key:
        if len(candidates) == 1:
            return candidates[0]
        want = self._colour(self.actual, shape.name, akey, 3)
        return min(
            candidates,
            key=lambda k: (self._colour(self.expected, shape.name, k, 3) != want, k != akey, repr(k)),
        )

    def _colour(self, side: Side, table: str, key: Key, depth: int) -> Any:
        """The content of a row and of the rows that refer to it (recursively), keys left out."""
        shape = self.shapes[table]
        row = side.created[table][key]
        own = tuple(
            "*" if c in shape.refs and row[c] in side.created.get(shape.refs[c], ()) else hashable(row[c])
            for c in shape.columns
        )
        if depth == 0:
            return own
        kids = self._children(side).get((table, key), [])
        return own, tuple(sorted(repr((t, c, self._colour(side, t, k, depth - 1))) for t, c, k in kids))

    def _children(self, side: Side) -> dict[tuple[str, Key], list[tuple[str, str, Key]]]:
        if side.children is None:
            index: dict[tuple[str, Key], list[tuple[str, str, Key]]] = defaultdict(list)
            for table, rows in side.created.items():
                for column, target in self.shapes[table].refs.items():
                    targets = side.created.get(target, {})
                    for key, row in rows.items():
                        if row[column] in targets:
                            index[(target, row[column])].append((table, column, key))
            side.children = index
        return side.children

    def _closest(self, shape: TableShape, exp_left: dict[Key, None], act_left: dict[Key, None]) -> None:
        if not exp_left or not act_left or len(exp_left) * len(act_left) > 40_000:
            return
        scored = []
        for ekey in exp_left:
            for akey in act_left:
                cells = self.compare(shape.name, ekey, akey)
                equal = sum(1 for cell in cells if cell[3])
                if 2 * equal >= len(cells):
                    scored.append((-equal, repr(ekey), repr(akey), ekey, akey))
        for _, _, _, ekey, akey in sorted(scored):
            if ekey in exp_left and akey in act_left:
                self._pair(shape.name, ekey, akey, exp_left, act_left)
