"""Seed rows for a domain's tables: deterministic from a seed, realistic, and loadable as they are.

    rows = seed_rows(spec, hints, seed=7, rows={"orders": 300})   # {table: [row, ...]}

Every value depends only on the seed, table, column and row number, and comes from
`values.plan_field`. Tables are filled parents first, so every foreign key points at a real row;
unique columns and keys are unique. `rows` sizes every table (an int) or those it names (a
mapping); the rest get a default size that grows with their levels of parents.
Design notes: docs/design/toolgen.md.
Over 500 lines: one class, `_Seeder`, whose tables are filled from one shared state.
"""

from __future__ import annotations

import hashlib
import random
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from faker import Faker

from simulator.format.spec import Clock, Column, DomainSpec, Table
from simulator.plan.ids import parse_pattern
from simulator.plan.tables import value_problem

from ..naming import words
from .lexicon import NAME_WORDS, labels_written, row_kind
from .schema import NAME_KEY
from .values import (
    Draw,
    Maker,
    Person,
    clock_start,
    column_field,
    flatten_schema,
    handle_columns,
    has_person,
    make_faker,
    person_role,
    plan_field,
)

__all__ = ["DEFAULT_ROWS", "MAX_DEFAULT_ROWS", "SeedError", "seed_rows", "table_order"]

#: rows of a table without required foreign keys, when `rows` does not say
DEFAULT_ROWS = 25
#: default sizes double per level of parents, up to this
MAX_DEFAULT_ROWS = 200
#: share of nulls in a nullable column (and in one whose name says the event may not have happened)
NULL_SHARE = 0.1
EVENT_NULL_SHARE = 0.6
#: share of rows holding a non-null column's default (enums: see values.plan_field)
DEFAULT_SHARE = 0.3
#: draws tried for a unique value (or key) before disambiguating (or giving up on the row)
TRIES = 12
#: what a name a row is keyed by ends in (`billing-staging`)
_STAGES = ("prod", "staging", "dev", "test", "qa", "sandbox", "shared", "internal")

EVENT_WORDS = frozenset(
    "cancelled canceled closed deleted resolved completed delivered ended archived revoked "
    "replaces reply parent reason refunded returned approved rejected".split()
)
#: the first and the second datetime of a pair, by family: a span (`starts_at` / `ends_at`: the end
#: follows the start by an hour to ten days) and a life (`created_at` / `updated_at`: put in order)
PAIR_WORDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "span": (
        frozenset("start starts begin begins from checkin departure".split()),
        frozenset("end ends finish until to checkout arrival".split()),
    ),
    "life": (
        frozenset("created create opened".split()),
        frozenset("updated update modified closed".split()),
    ),
}

Hints = Mapping[str, Mapping[str, Mapping[str, Any]]]
Rows = dict[str, list[dict[str, Any]]]

_local = threading.local()


class SeedError(ValueError):
    """The tables, hints or sizes given cannot be seeded: says which table or column, and why."""


def _faker() -> Faker:
    fake = getattr(_local, "faker", None)
    if fake is None:
        fake = _local.faker = make_faker()
    return fake


def _stream(seed: int, *parts: str) -> int:
    return int.from_bytes(hashlib.sha256(":".join([str(seed), *parts]).encode()).digest()[:8], "big")


@dataclass
class _Reference:
    column: str
    table: str
    target: str
    nullable: bool
    unique: bool
    later: bool = False  # filled after every table (a self-reference, or a cycle's back edge)


def _tables(spec: DomainSpec | Mapping[str, Any]) -> dict[str, Table]:
    raw = spec.tables if isinstance(spec, DomainSpec) else spec
    out: dict[str, Table] = {}
    for name, table in raw.items():
        try:
            out[name] = table if isinstance(table, Table) else Table.model_validate(table)
        except ValueError as exc:
            raise SeedError(f"table {name!r} is not a valid table: {exc}") from None
    for name, table in out.items():
        for column in table.key_columns:
            if column not in table.columns:
                raise SeedError(f"table {name!r}: key column {column!r} is not among its columns")
        for cname, col in table.columns.items():
            if col.references:
                rt, _, rc = col.references.partition(".")
                if rt not in out or rc not in out[rt].columns:
                    raise SeedError(
                        f"{name}.{cname} refers to {col.references!r}, which is no table's column"
                    )
    return out


def _references(tables: dict[str, Table]) -> dict[str, list[_Reference]]:
    refs: dict[str, list[_Reference]] = {}
    for name, table in tables.items():
        refs[name] = []
        for cname, col in table.columns.items():
            if col.references:
                rt, _, rc = col.references.partition(".")
                key = cname in table.key_columns
                refs[name].append(_Reference(cname, rt, rc, col.nullable and not key, col.unique, rt == name))
    return refs


def table_order(spec: DomainSpec | Mapping[str, Any]) -> list[str]:
    """The tables parents first: a table comes after every table its foreign keys name, except
    across a cycle, which is broken at a nullable reference (else at any), in a fixed order."""
    tables = _tables(spec)
    return _order(tables, _references(tables))


def _order(tables: dict[str, Table], refs: dict[str, list[_Reference]]) -> list[str]:
    done: list[str] = []
    placed: set[str] = set()
    pending = list(tables)
    while pending:
        for name in pending:
            if all(r.later or r.table in placed for r in refs[name]):
                break
        else:  # a cycle: break it at the first nullable reference among the pending tables
            name = pending[0]
            cut = [r for t in pending for r in refs[t] if not r.later and r.table not in placed]
            chosen = next((r for r in cut if r.nullable), cut[0])
            chosen.later = True
            continue
        done.append(name)
        placed.add(name)
        pending.remove(name)
    return done


def _sizes(
    tables: dict[str, Table], order: list[str], refs: dict[str, list[_Reference]], rows: Any
) -> tuple[dict[str, int], set[str]]:
    """Wanted rows per table, and which tables the caller sized."""
    if isinstance(rows, bool) or rows is not None and not isinstance(rows, int | Mapping):
        raise SeedError(f"rows is a number or a mapping of table to number, got {rows!r}")
    given: dict[str, int] = {}
    if isinstance(rows, int):
        given = dict.fromkeys(tables, rows)
    elif isinstance(rows, Mapping):
        unknown = sorted(set(rows) - set(tables))
        if unknown:
            raise SeedError(f"rows names tables the domain does not have: {', '.join(unknown)}")
        given = dict(rows)
    for name, count in given.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise SeedError(f"rows for table {name!r} must be a whole number >= 0, got {count!r}")
    level: dict[str, int] = {}
    for name in order:
        parents = [level.get(r.table, 0) for r in refs[name] if not r.nullable and not r.later]
        level[name] = 1 + max(parents) if parents else 0
    sizes = {name: given.get(name, min(MAX_DEFAULT_ROWS, DEFAULT_ROWS * 2 ** level[name])) for name in order}
    return sizes, set(given)


class _Seeder:
    def __init__(self, tables: dict[str, Table], hints: Hints, seed: int, salt: str, start: datetime) -> None:
        self.tables = tables
        self.hints = hints
        self.seed = seed
        self.salt = salt
        self.start = start
        self.fake = _faker()
        self.out: Rows = {}

    # -- streams -------------------------------------------------------------------------------

    def draw(self, table: str, column: str, person: Person | None = None) -> Draw:
        """The column's own stream: the shared Faker reseeded for (seed, table, column)."""
        draw = Draw.of(self.fake, _stream(self.seed, self.salt, table, column), self.start)
        draw.person = person
        return draw

    def maker(self, table: str, column: str, role: str | None) -> Maker:
        col = self.tables[table].columns[column]
        hint = (self.hints.get(table) or {}).get(column) or {}
        kind = row_kind(table, self.tables[table].columns)
        return plan_field(column_field(table, column, col, hint, role, kind))

    # -- one table ------------------------------------------------------------------------------

    def table(self, name: str, wanted: int, sized: bool, refs: list[_Reference]) -> None:
        table = self.tables[name]
        count = wanted
        for ref in refs:
            if ref.later or ref.nullable:
                continue
            parents = len(self.out[ref.table])
            if parents == 0 and count > 0:
                if sized:
                    raise SeedError(
                        f"cannot seed {count} rows of {name}: {name}.{ref.column} must refer to a row "
                        f"of {ref.table}, which has none"
                    )
                count = 0
            if ref.unique or (ref.column in table.key_columns and len(table.key_columns) == 1):
                count = min(count, parents)
        for column, col in table.columns.items():
            space = _finite(col)
            single_key = table.key_columns == (column,)
            if space is not None and (single_key or col.unique and not col.nullable):
                count = min(count, len(space))
        columns = list(table.columns)
        people = self.people(name, columns, count)
        keys = self.keys(name, count, refs, people)
        rows = [dict(zip(table.key_columns, key, strict=True)) for key in keys]
        by_column = {r.column: r for r in refs}
        roles = {c: person_role(c, name, columns) for c in columns} if people else {}
        # a self-reference to a non-key column is filled after that column
        later = [c for c in columns if c in by_column and by_column[c].later]
        derived = self.derivable(name, refs)
        handles = [c for c in handle_columns(table) if not labels_written(c, name)]
        for column in [c for c in columns if c not in table.key_columns and c not in later]:
            if column in derived:
                continue
            rank = handles.index(column) if column in handles else None
            self.column(name, column, rows, people, roles.get(column), by_column.get(column), rank)
        for column, (via, ref, through) in derived.items():
            self.derive(name, column, rows, via, ref, through)
        self.out[name] = [{c: row[c] for c in columns if c in row} for row in rows]
        _order_pairs(table, self.out[name], self.draw(name, "\x00pairs").rng)

    def derivable(self, name: str, refs: list[_Reference]) -> dict[str, tuple[_Reference, _Reference, str]]:
        """Foreign keys that follow from another one of the row: `cards.customer_id` is the customer
        of the card's account when `accounts.customer_id` is the only reference of `accounts` to
        `customers` ({column: (the reference it follows, its own, the parent's column)})."""
        table = self.tables[name]
        out: dict[str, tuple[_Reference, _Reference, str]] = {}
        plain = [r for r in refs if not r.later and not r.unique and r.column not in table.key_columns]
        for ref in plain:
            for via in plain:
                if via is ref or via.column in out or via.table == name:
                    continue
                through = [
                    c
                    for c, col in self.tables[via.table].columns.items()
                    if col.references == f"{ref.table}.{ref.target}"
                ]
                if len(through) == 1:
                    out[ref.column] = (via, ref, through[0])
                    break
        return {c: how for c, how in out.items() if how[0].column not in out}  # one step: no chains

    def derive(
        self,
        name: str,
        column: str,
        rows: list[dict[str, Any]],
        via: _Reference,
        ref: _Reference,
        through: str,
    ) -> None:
        """Fill `column` from the row `via` refers to (its `through`), else as a plain foreign key."""
        parent = {r.get(via.target): r for r in self.out[via.table]}
        rest = [row for row in rows if parent.get(row.get(via.column), {}).get(through) is None]
        for row in rows:
            found = parent.get(row.get(via.column))
            if found is not None and found.get(through) is not None:  # (a cycle's column comes last)
                row[column] = found[through]
        if rest:  # no row to follow (a null reference, or a null in the parent): drawn as usual
            self.foreign(name, column, rest, ref, self.draw(name, column), NULL_SHARE)

    def people(self, table: str, columns: list[str], count: int) -> list[Person] | None:
        if not has_person(table, columns):
            return None
        d = self.draw(table, "\x00person")
        return [
            Person(d.fake.first_name(), d.fake.last_name(), d.fake.free_email_domain()) for _ in range(count)
        ]

    def keys(
        self, name: str, count: int, refs: list[_Reference], people: list[Person] | None
    ) -> list[tuple[Any, ...]]:
        table = self.tables[name]
        key = table.key_columns
        by_column = {r.column: r for r in refs}
        d = self.draw(name, "\x00key")
        makers: list[Any] = []
        for i, column in enumerate(key):
            ref = by_column.get(column)
            if ref is not None and not ref.later:
                parents = [r[ref.target] for r in self.out[ref.table] if r[ref.target] is not None]
                if len(key) == 1:
                    d.rng.shuffle(parents)
                    makers.append(("list", parents))
                else:
                    makers.append(("choice", parents))
            elif i == len(key) - 1:
                makers.append(("id", self.id_maker(name, column)))
            else:
                makers.append(("value", self.maker(name, column, None)))
        out: list[tuple[Any, ...]] = []
        seen: set[tuple[Any, ...]] = set()
        numbers: dict[tuple[Any, ...], int] = {}
        for n in range(count):
            for _ in range(TRIES):
                parts: list[Any] = []
                for kind, source in makers:
                    if kind == "list":
                        parts.append(source[n] if n < len(source) else None)
                    elif kind == "choice":
                        parts.append(d.rng.choice(source) if source else None)
                    elif kind == "value":
                        d.person = people[n] if people else None
                        parts.append(source(d))
                    else:
                        parts.append(source(d, tuple(parts), numbers))
                candidate = tuple(parts)
                if None not in candidate and candidate not in seen:
                    break
            else:
                break  # the key space is spent: the table keeps the rows it has
            seen.add(candidate)
            out.append(candidate)
        return out

    def id_maker(self, name: str, column: str) -> Any:
        """Makes the generated key column's value (the last key column), per the table's id scheme."""
        table = self.tables[name]
        col = table.columns[column]
        ids = table.ids
        hint = flatten_schema((self.hints.get(name) or {}).get(column) or {})
        if hint.get(NAME_KEY) and col.type == "string":  # (a namespace by its name: `billing-staging`)
            return lambda d, rest, numbers: f"{d.rng.choice(NAME_WORDS).lower()}-{d.rng.choice(_STAGES)}"
        if col.type == "integer":
            start = getattr(ids, "start", 1) if ids is not None else 1

            def integer(d: Draw, rest: tuple[Any, ...], numbers: dict[tuple[Any, ...], int]) -> int:
                numbers[rest] = numbers.get(rest, start - 1) + 1
                return numbers[rest]

            return integer
        if ids is not None and ids.scheme == "counter":
            counter = [ids.start - 1]
            prefix, width = ids.prefix, ids.width

            def counted(d: Draw, rest: tuple[Any, ...], numbers: dict[tuple[Any, ...], int]) -> str:
                counter[0] += 1
                return f"{prefix}{counter[0]:0{width}d}"

            return counted
        if ids is not None and ids.scheme == "pattern":
            slots = parse_pattern(ids.pattern)
            prefix = ids.prefix
            return lambda d, rest, numbers: (
                prefix + "".join(d.rng.choice(s) if len(s) > 1 else s for s in slots)
            )
        if ids is not None and ids.scheme == "uuid":
            return lambda d, rest, numbers: str(uuid.UUID(int=d.rng.getrandbits(128), version=4))
        prefix = getattr(ids, "prefix", "") if ids is not None else table.id_prefix
        if (
            ids is None
            and not prefix
            and (col.enum or hint.get("format") or hint.get("pattern") or hint.get("enum"))
        ):
            value = self.maker(name, column, None)
            return lambda d, rest, numbers: value(d)
        return lambda d, rest, numbers: f"{prefix}{d.rng.getrandbits(32):08x}"

    def column(
        self,
        table: str,
        column: str,
        rows: list[dict[str, Any]],
        people: list[Person] | None,
        role: str | None,
        ref: _Reference | None,
        handle: int | None = None,
    ) -> None:
        """Fill one non-key column of `rows`. `handle`: the column's rank among the table's handles
        (`handle_columns`): a handle is never null, and the best one is distinct, so that an
        instruction can name a row by it."""
        col = self.tables[table].columns[column]
        d = self.draw(table, column)
        null_share = EVENT_NULL_SHARE if set(words(column)) & EVENT_WORDS else NULL_SHARE
        if handle is not None:
            null_share = 0.0
        if ref is not None:
            self.foreign(table, column, rows, ref, d, null_share)
            return
        make = self.maker(table, column, role)
        default = col.default if col.default is not None and col.default != "$now" and not col.enum else None
        if value_problem(col.type, default) is not None:
            default = None  # a spec's default the column cannot hold (`<function datetime.now …>`)
        seen: set[Any] = set()
        distinct = col.unique or handle == 0
        space = _finite(col) if col.unique else None
        if space is not None:  # a unique enum (or boolean): each value once, then null
            d.rng.shuffle(space)
            for n, row in enumerate(rows):
                row[column] = space[n] if n < len(space) else None
            return
        for n, row in enumerate(rows):
            d.person = people[n] if people else None
            if col.nullable and d.rng.random() < null_share:
                row[column] = None
                continue
            if default is not None and not distinct and d.rng.random() < DEFAULT_SHARE:
                row[column] = default
                continue
            value = make(d)
            if distinct:
                value = _unique(value, seen, make, d)
                seen.add(value)
            row[column] = value

    def foreign(
        self, table: str, column: str, rows: list[dict[str, Any]], ref: _Reference, d: Draw, null_share: float
    ) -> None:
        parents = [r[ref.target] for r in self.out.get(ref.table, rows) if r.get(ref.target) is not None]
        if ref.unique:
            d.rng.shuffle(parents)
        for n, row in enumerate(rows):
            own = row.get(ref.target) if ref.table == table else None
            choices = [p for p in parents if p != own] if ref.table == table and not ref.unique else parents
            if ref.nullable and (d.rng.random() < (0.3 if ref.table == table else null_share) or not choices):
                row[column] = None
            elif ref.unique:
                if n < len(parents):
                    row[column] = parents[n]
                elif ref.nullable:
                    row[column] = None
                else:  # (sizes were capped to the parents)
                    raise SeedError(f"{table}.{column}: more rows than {ref.table} has to refer to uniquely")
            elif choices:
                row[column] = d.rng.choice(choices)
            elif parents:
                row[column] = parents[0]  # a row that can only refer to itself
            else:
                raise SeedError(f"{table}.{column} must refer to a row of {ref.table}, which has none")

    def later(self, table: str, ref: _Reference) -> None:
        rows = self.out[table]
        if ref.column in self.tables[table].key_columns:
            raise SeedError(f"{table}.{ref.column} is a key column in a cycle of references: seed it by hand")
        d = self.draw(table, ref.column)
        null_share = EVENT_NULL_SHARE if set(words(ref.column)) & EVENT_WORDS else NULL_SHARE
        self.foreign(table, ref.column, rows, ref, d, null_share)
        columns = list(self.tables[table].columns)
        for row in rows:  # back in the table's column order
            ordered = {c: row[c] for c in columns if c in row}
            row.clear()
            row.update(ordered)


def _finite(col: Column) -> list[Any] | None:
    """Every value a column can hold, when they are few (an enum, a boolean), else None."""
    if col.enum is not None:
        return list(col.enum)
    return [False, True] if col.type == "boolean" else None


def _unique(value: Any, seen: set[Any], make: Maker, d: Draw) -> Any:
    for _ in range(TRIES):
        if value not in seen:
            return value
        value = make(d)
    base = value
    for k in range(2, 10**6):
        if isinstance(base, str):
            local, at, domain = base.partition("@")
            value = f"{local}{k}@{domain}" if at else f"{base}-{k}"
        elif isinstance(base, int) and not isinstance(base, bool):
            value = base + k
        elif isinstance(base, float):
            value = round(base + k / 100, 2)
        if value not in seen:
            return value
    raise SeedError(f"cannot find a unique value near {base!r}")  # pragma: no cover - a million taken


def _order_pairs(table: Table, rows: list[dict[str, Any]], rng: random.Random) -> None:
    """Datetime pairs of one stem and family (`PAIR_WORDS`) made to agree in every row where both
    are set: a span's end follows its start by 1 hour to 10 days, a life's events are in order."""
    pairs: dict[tuple[str, tuple[str, ...]], dict[int, str]] = {}
    for name, col in table.columns.items():
        if col.type != "datetime":
            continue
        ws = words(name)
        for i, w in enumerate(ws):
            for family, sides in PAIR_WORDS.items():
                for side, vocabulary in enumerate(sides):
                    if w in vocabulary:
                        stem = tuple(s for s in ws[:i] + ws[i + 1 :] if s not in ("at", "date", "time", "on"))
                        pairs.setdefault((family, stem), {}).setdefault(side, name)
    for (family, _), pair in sorted(pairs.items()):
        if len(pair) != 2:
            continue
        first, second = pair[0], pair[1]
        for row in rows:
            a, b = row.get(first), row.get(second)
            if not (isinstance(a, str) and isinstance(b, str)):
                continue
            if family == "span" and a.endswith("Z") and len(a) == 20:
                end = datetime.fromisoformat(a.replace("Z", "+00:00")) + timedelta(
                    minutes=15 * rng.randint(4, 960)
                )
                row[second] = end.strftime("%Y-%m-%dT%H:%M:%SZ")
            elif b < a:
                row[first], row[second] = b, a


def seed_rows(
    spec: DomainSpec | Mapping[str, Any],
    hints: Hints | None = None,
    seed: int = 0,
    rows: int | Mapping[str, int] | None = None,
    *,
    clock: str | None = None,
    salt: str | None = None,
) -> Rows:
    """Seed rows for every table of `spec` (a DomainSpec, or its `tables` mapping of Table models
    or their raw dicts), in the spec's table order: see the module doc.

    `hints` is {table: {column: JSON-Schema fragment}} from the source spec; `clock` the clock start
    datetimes are drawn before (default: the spec's, else the format's default); `salt` mixed into
    every stream so that same-named tables of two domains differ (default: the spec's name, else
    none). Raises SeedError
    naming the table or column when the input cannot be seeded."""
    tables = _tables(spec)
    hints = hints or {}
    for tname, columns in hints.items():
        if tname not in tables:
            raise SeedError(f"hints name a table the domain does not have: {tname!r}")
        unknown = sorted(set(columns) - set(tables[tname].columns))
        if unknown:
            raise SeedError(f"hints name columns table {tname!r} does not have: {', '.join(unknown)}")
    if clock is None:
        clock = spec.clock.start if isinstance(spec, DomainSpec) else Clock().start
    refs = _references(tables)
    order = _order(tables, refs)
    sizes, sized = _sizes(tables, order, refs, rows)
    if salt is None:
        salt = spec.name if isinstance(spec, DomainSpec) else ""
    seeder = _Seeder(tables, hints, seed, salt, clock_start(clock))
    for name in order:
        seeder.table(name, sizes[name], name in sized, refs[name])
    for name in order:
        for ref in refs[name]:
            if ref.later:
                seeder.later(name, ref)
    return {name: seeder.out[name] for name in tables}
