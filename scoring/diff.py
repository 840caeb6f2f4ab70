"""The state diff: the final state vs the expected state, over the rows either side changed.

Reads only the rows in either episode's change log, matches created rows by content
(`scoring.matching`), gives credit per expected row change and counts collateral changes.
Columns named in `ignore` (`table.column`) are left out.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import threading
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from simulator import Domain, Episode

from .expected import ExpectedState
from .matching import CreatedRows, Key, Row, Side, TableShape, generated_keys, same
from .report import ColumnDiff, KeyMatch, RowDiff, StateDiff
from .statements import chunks


@dataclass
class _Schema:
    order: list[str]  # tables, parents before children
    shapes: dict[str, TableShape]
    ignoring: dict[tuple[str, ...], dict[str, TableShape]] = field(default_factory=dict)

    def without(self, ignore: tuple[str, ...]) -> dict[str, TableShape]:
        """The shapes with the ignored `table.column`s left out."""
        if ignore not in self.ignoring:
            skip = set(ignore)
            self.ignoring[ignore] = {
                name: TableShape(
                    name=name,
                    pk=s.pk,
                    columns=tuple(c for c in s.columns if f"{name}.{c}" not in skip),
                    refs={c: t for c, t in s.refs.items() if f"{name}.{c}" not in skip},
                    integer_key=s.integer_key,
                    ids=s.ids,
                    composite=s.composite,
                )
                for name, s in self.shapes.items()
            }
        return self.ignoring[ignore]


_SCHEMAS: dict[int, _Schema] = {}
_LOCK = threading.Lock()


def _schema(domain: Domain) -> _Schema:
    """The domain's table order and shapes (built once per domain object)."""
    with _LOCK:
        cached = _SCHEMAS.get(id(domain))
        if cached is None:
            tables = domain.tables
            shapes = {}
            for name, info in tables.items():
                refs = {}
                for column, spec in info.spec.columns.items():
                    target, _, target_column = (spec.references or "").partition(".")
                    if target and target_column == tables[target].pk and not tables[target].composite:
                        refs[column] = target
                shapes[name] = TableShape(
                    name=name,
                    pk=info.pk,
                    columns=tuple(c for c in info.columns if c != info.pk),
                    refs=refs,
                    integer_key=info.spec.columns[info.pk].type == "integer",
                    ids=info.ids,
                    composite=info.composite,
                )
            metadata = next(iter(tables.values())).sa_table.metadata
            cached = _Schema([t.name for t in metadata.sorted_tables], shapes)
            _SCHEMAS[id(domain)] = cached
            weakref.finalize(domain, _SCHEMAS.pop, id(domain), None)
        return cached


@lru_cache(maxsize=1024)
def _select(table: str, columns: tuple[str, ...], key: tuple[str, ...], count: int) -> str:
    names = ", ".join(f'"{c}"' for c in columns)
    if len(key) == 1:
        return f'SELECT {names} FROM "{table}" WHERE "{key[0]}" IN ({", ".join("?" * count)})'  # noqa: S608 - spec names
    row = "(" + ", ".join("?" * len(key)) + ")"
    keys = ", ".join(f'"{c}"' for c in key)
    return f'SELECT {names} FROM "{table}" WHERE ({keys}) IN (VALUES {", ".join([row] * count)})'  # noqa: S608


def read_rows(episode: Episode, table: str, keys: Iterable[Key]) -> dict[Key, Row]:
    """The rows of `table` with these keys that exist in the episode (one query per 512 keys)."""
    info = episode.domain.tables[table]
    wanted = list(keys)
    out: dict[Key, Row] = {}
    with episode.lock:
        for chunk in chunks(wanted):
            query = _select(table, info.columns, info.key, len(chunk))
            params = [v for k in chunk for v in k] if info.composite else [info.encode_key(k) for k in chunk]
            for raw in episode.conn.execute(query, params):
                out[info.key_of(raw)] = info.decode(raw)
    return out


def _seed_rows(domain: Domain, table: str, keys: Iterable[Key]) -> dict[Key, Row]:
    """The seed versions of these rows (from the domain's seed index; absent keys left out)."""
    decode = domain.tables[table].decode
    return {k: decode(row) for k, row in domain.seed_lookup(table, keys).items()}


def _by_table(keys: Iterable[tuple[str, Key]]) -> dict[str, set[Key]]:
    grouped: dict[str, set[Key]] = defaultdict(set)
    for table, key in keys:
        grouped[table].add(key)
    return grouped


def _reader(state: Episode | ExpectedState) -> Callable[[str, Iterable[Key]], dict[Key, Row]]:
    if isinstance(state, ExpectedState):
        return state.read
    return lambda table, keys: read_rows(state, table, keys)


def _side(
    state: Episode | ExpectedState,
    keys: dict[str, set[Key]],
    before: dict[str, dict[Key, Row]],
    shapes: dict[str, TableShape],
) -> tuple[Side, dict[tuple[str, Key], Row | None]]:
    """The rows a state created, and its version (None: deleted) of every seed row it changed."""
    created: dict[str, dict[Key, Row]] = {}
    generated: dict[str, set[Key]] = defaultdict(set)
    changed: dict[tuple[str, Key], Row | None] = {}
    read = _reader(state)
    for table, table_keys in keys.items():
        now = read(table, table_keys)
        seeded = before[table]
        new = [k for k in table_keys if k not in seeded]
        created[table] = {k: now[k] for k in new if k in now}
        generated[table] = generated_keys(state.seed, shapes[table], set(created[table]), len(new))
        changed.update(((table, k), now.get(k)) for k in table_keys if k in seeded)
    return Side(created, generated), changed


def diff_states(
    expected: Episode | ExpectedState,
    actual: Episode,
    ignore: Iterable[str] = (),
    initial: Episode | None = None,
) -> StateDiff:
    """Diff the agent's final state (`actual`) against the expected one (an episode, or the cached
    `scoring.expected.ExpectedState`); see the module docstring.

    `initial` is the state both started from: by default the domain's seed state.
    """
    schema = _schema(expected.domain)
    ignored = tuple(sorted(set(ignore)))
    shapes = schema.without(ignored)
    exp_keys, act_keys = _by_table(expected.changes()), _by_table(actual.changes())
    before = {}
    for table in set(exp_keys) | set(act_keys):
        keys = exp_keys.get(table, set()) | act_keys.get(table, set())
        before[table] = (
            read_rows(initial, table, keys) if initial else _seed_rows(expected.domain, table, keys)
        )
    exp_side, exp_rows = _side(expected, exp_keys, before, shapes)
    act_side, act_rows = _side(actual, act_keys, before, shapes)
    created = CreatedRows(shapes, exp_side, act_side).match(schema.order)
    builder = _Builder(shapes, created)
    for table, key in sorted(set(exp_rows) | set(act_rows), key=repr):
        row = before[table][key]
        builder.existing(table, key, row, exp_rows.get((table, key), row), act_rows.get((table, key), row))
    for table, ekey, akey in created.pairs:
        builder.created_pair(table, ekey, akey)
    for table, key in created.missing:
        builder.only_one_side(table, key, exp_side.created[table][key], None)
    for table, key in created.unexpected:
        builder.only_one_side(table, key, None, act_side.created[table][key])
    return StateDiff(
        tables=builder.wrong,
        missing=builder.missing,
        unexpected=builder.unexpected,
        expected_changes=builder.expected_changes,
        matched=builder.matched,
        credit=builder.credit,
        created=[KeyMatch(table=t, actual=a, expected=e) for t, e, a in created.pairs if a != e],
        ignored_columns=list(ignored),
    )


class _Builder:
    """Collects the differing rows and the credit for the expected changes."""

    def __init__(self, shapes: dict[str, TableShape], created: CreatedRows):
        self.shapes, self.created = shapes, created
        self.wrong: dict[str, list[RowDiff]] = {}
        self.missing: list[RowDiff] = []
        self.unexpected: list[RowDiff] = []
        self.expected_changes = self.matched = 0
        self.credit = 0.0

    def _expected(self, credit: float) -> None:
        self.expected_changes += 1
        self.credit += credit
        self.matched += credit == 1.0

    def _add(self, row: RowDiff) -> None:
        if row.status == "wrong":
            self.wrong.setdefault(row.table, []).append(row)
        else:
            (self.missing if row.status == "missing" else self.unexpected).append(row)

    def only_one_side(self, table: str, key: Key, exp: Row | None, act: Row | None) -> None:
        """A created row the other side has no match for: every content column."""
        columns = [
            ColumnDiff(
                column=c, expected=None if exp is None else exp[c], actual=None if act is None else act[c]
            )
            for c in self.shapes[table].columns
        ]
        if exp is not None:
            self._expected(0.0)
            self._add(RowDiff(table=table, key=key, change="create", status="missing", columns=columns))
        else:
            self._add(
                RowDiff(
                    table=table,
                    key=key,
                    change="create",
                    actual_change="create",
                    status="unexpected",
                    columns=columns,
                )
            )

    def created_pair(self, table: str, ekey: Key, akey: Key) -> None:
        cells = self.created.compare(table, ekey, akey)
        wrong = [ColumnDiff(column=c, expected=e, actual=a) for c, e, a, ok in cells if not ok]
        credit = 1.0 - len(wrong) / len(cells) if cells else 1.0
        self._expected(credit)
        if wrong:
            row = RowDiff(
                table=table,
                key=ekey,
                actual_key=akey,
                change="create",
                actual_change="create",
                status="wrong",
                columns=wrong,
                credit=credit,
            )
            self._add(row)

    def existing(self, table: str, key: Key, before: Row, exp: Row | None, act: Row | None) -> None:
        """A row of the seed state that either side changed (None: deleted)."""
        shape = self.shapes[table]
        columns = shape.columns
        mapped = act
        if act is not None and shape.refs:
            mapped = {c: self.created.translate(shape, c, act[c]) for c in columns}
        exp_moved = [] if exp is None else [c for c in columns if not same(exp[c], before[c])]
        act_moved = [] if mapped is None else [c for c in columns if not same(mapped[c], before[c])]
        exp_changed, act_changed = exp is None or bool(exp_moved), mapped is None or bool(act_moved)
        if not exp_changed and not act_changed:
            return
        diffs: list[ColumnDiff] = []
        if exp is not None and act is not None and mapped is not None:
            touched = set(exp_moved) | set(act_moved)
            wrong = [c for c in columns if c in touched and not same(exp[c], mapped[c])]
            credit = 1.0 - len(wrong) / len(touched)
            diffs = [ColumnDiff(column=c, expected=exp[c], actual=act[c], initial=before[c]) for c in wrong]
        else:  # one side deleted the row (or both did): the other side's changed cells
            credit = 1.0 if exp is None and act is None else 0.0
            diffs = [
                ColumnDiff(
                    column=c,
                    expected=None if exp is None else exp[c],
                    actual=None if act is None else act[c],
                    initial=before[c],
                )
                for c in (exp_moved or act_moved)
            ]
        if exp_changed:
            self._expected(credit)
        if credit == 1.0 and exp_changed:
            return
        status: Any = "wrong" if exp_changed and act_changed else "missing" if exp_changed else "unexpected"
        self._add(
            RowDiff(
                table=table,
                key=key,
                change="delete" if exp is None or (act is None and not exp_changed) else "update",
                actual_change="delete" if act is None else "update" if act_changed else None,
                status=status,
                columns=diffs,
                credit=credit if exp_changed else 0.0,
            )
        )
