"""Values into SQLite for the write steps, with the per-column decisions taken once.

`create` and `update` check values against their columns and encode them for SQLite
(`TableInfo.encode`); the plans here do that work with the per-column decisions taken when a step
first runs: `column_encoder` (one column's encoder), `InsertPlan` (a create's INSERT and its row
builder) and `UpdatePlan` (an update by key). Results and error messages are `TableInfo.encode`'s.
Design notes: docs/design/engine.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from ..lang.expressions import Compiled
from ..lang.generated import Source
from ..lang.numbers import INT64_MAX, INT64_MIN, in_range_source, int_source
from ..plan.tables import TableInfo, ValueProblem, positional
from .decoding import column_decoder

Encoder = Callable[[Any], Any]


def encode_source(info: TableInfo, name: str, value: str, slow: str, src: Source) -> str | None:
    """`column_encoder(info, name)` of the local `value` as a Python expression of `src`, its
    own-type check written out and every other value handed to `slow` (a name of the column's
    encoder: it gives what `info.encode` gives); None for a column that has no such check (an enum,
    a date, JSON...)."""
    col = info.spec.columns[name]
    if col.enum is not None:
        return None
    v = value
    if col.type == "string":
        return f"{v} if type({v}) is str else {slow}({v})"
    if col.type == "integer":
        return f"{v} if {int_source(src, v, INT64_MIN, INT64_MAX)} else {slow}({v})"
    if col.type == "number":  # (a float in range: NaN and the infinities are not)
        return f"{v} if {in_range_source(src, v, INT64_MIN, INT64_MAX)} else {slow}({v})"
    if col.type == "boolean":
        return f"1 if {v} is True else 0 if {v} is False else {slow}({v})"
    return None


def column_encoder(info: TableInfo, name: str) -> Encoder:
    """`info.encode(name, value)` as a function of the value (see the module docstring)."""

    def slow(value: Any) -> Any:
        return info.encode(name, value)

    if not info.generated:
        return slow
    src = Source()
    fast = encode_source(info, name, "value", src.bind(slow, "slow"), src)
    if fast is None:
        return slow
    with src.block("def encode(value):"):
        src.add(f"return {fast}")
    encode: Encoder = src.define("encode", "<encoder>")
    return encode


def _decoder(info: TableInfo, name: str) -> Callable[[Any], Any] | None:
    """How a read turns a column's stored (non-null) value back (None: as stored)."""
    return column_decoder(info.spec.columns[name].type, info.generated)


# what a create's column gets, per kind of source
GIVEN, KEY, NOW, DEFAULT = range(4)


@dataclass(frozen=True)
class InsertPlan:
    """A `create` of one table with the columns `given` by the step (see the module docstring).

    `run`-time order is the general code's: the given values are evaluated in column order, a
    missing key is generated, then the columns are encoded in column order (the first value that
    does not fit is the error). A constant default that fits is encoded here, once."""

    statement: str
    order: tuple[int, ...] | None  # parameter i is stored column order[i] (None: column order)
    names: tuple[str, ...]  # the given columns, in column order
    values: tuple[Compiled, ...]  # their values
    #: (given values, key, now) -> the row as stored, encoded in column order (raises ValueProblem)
    row: Callable[[list[Any], Any, Callable[[], str]], tuple[Any, ...]]
    key_value: int | None  # which of `values` is the generated column's (None: not given)
    key_default: Any  # the generated column's default when not given (None: generate one)
    key_now: bool  # ... which is `$now`

    @classmethod
    def of(cls, info: TableInfo, given: dict[str, Compiled]) -> InsertPlan:
        columns = info.columns
        marks = [f"p{i}" for i in range(len(columns))]
        text, params = positional(
            sa.insert(info.sa_table).values({c: sa.bindparam(p) for c, p in zip(columns, marks, strict=True)})
        )
        order = tuple(marks.index(p) for p in params)
        template: list[Any] = [None] * len(columns)
        names: list[str] = []
        values: list[Compiled] = []
        slots: list[tuple[int, int, Any, Encoder]] = []
        key_value, key_default, key_now = None, None, False
        for i, name in enumerate(columns):
            encode = column_encoder(info, name)
            fn = given.get(name)
            default = info.spec.columns[name].default
            if fn is not None:
                if name == info.pk:
                    key_value = len(values)
                slots.append((i, KEY if name == info.pk else GIVEN, len(values), encode))
                names.append(name)
                values.append(fn)
            elif name == info.pk:
                key_now = default == "$now"
                key_default = None if key_now else info.default(name, "")
                slots.append((i, KEY, None, encode))
            elif default == "$now":
                slots.append((i, NOW, None, encode))
            else:
                try:
                    template[i] = info.encode(name, info.default(name, ""))
                except ValueProblem:  # (encoded, and refused, on every call: the error in its place)
                    slots.append((i, DEFAULT, info.default(name, ""), encode))
        return cls(
            statement=text,
            order=None if order == tuple(range(len(columns))) else order,
            names=tuple(names),
            values=tuple(values),
            row=row_builder(info, template, slots, len(values)),
            key_value=key_value,
            key_default=key_default,
            key_now=key_now,
        )


def row_builder(
    info: TableInfo, template: list[Any], slots: list[tuple[int, int, Any, Encoder]], given: int
) -> Callable[[list[Any], Any, Callable[[], str]], tuple[Any, ...]]:
    """A function (given values, key, now) -> the stored row: `template`'s constants, and each slot
    (column, source, payload, encoder) encoded, in column order (one tuple display; a given
    value's own-type check written out, `encode_source`). `given`: how many values are given.
    A table whose codecs are not `generated`: `plain_row_builder`."""
    if not info.generated:
        return plain_row_builder(template, slots)
    src = Source()
    parts = []
    by_column = {slot[0]: slot for slot in slots}
    for i, constant in enumerate(template):
        slot = by_column.get(i)
        if slot is None:
            parts.append(src.bind(constant, "c"))
            continue
        _, source, payload, encode = slot
        enc = src.bind(encode, "e")
        if source in (GIVEN, KEY):
            value = f"g_{src.integer(payload)}" if source == GIVEN else "key"
            fast = encode_source(info, info.columns[i], value, enc, src)
            parts.append(f"{enc}({value})" if fast is None else f"({fast})")
        elif source == NOW:
            parts.append(f"{enc}(now())")
        else:
            parts.append(f"{enc}({src.bind(payload, 'd')})")
    with src.block("def row(given, key, now):"):
        if given:
            src.add(f"{''.join(f'g_{src.integer(k)}, ' for k in range(given))}= given")
        src.add(f"return ({', '.join(parts)},)")
    row: Callable[[list[Any], Any, Callable[[], str]], tuple[Any, ...]] = src.define("row", "<row builder>")
    return row


def plain_row_builder(
    template: list[Any], slots: list[tuple[int, int, Any, Encoder]]
) -> Callable[[list[Any], Any, Callable[[], str]], tuple[Any, ...]]:
    """`row_builder` as plain code: `template` with each slot's value encoded, in column order."""
    ordered = sorted(slots, key=lambda slot: slot[0])

    def row(given: list[Any], key: Any, now: Callable[[], str]) -> tuple[Any, ...]:
        out = list(template)
        for at, source, payload, encode in ordered:
            if source == GIVEN:
                out[at] = encode(given[payload])
            elif source == KEY:
                out[at] = encode(key)
            elif source == NOW:
                out[at] = encode(now())
            else:
                out[at] = encode(payload)
        return tuple(out)

    return row


@dataclass(frozen=True)
class UpdatePlan:
    """An `update` of `columns` of one table's row by its key (see the module docstring)."""

    columns: tuple[str, ...]
    statement: str  # parameters: the new values (in `order`), then the key's values
    order: tuple[int, ...] | None  # parameter i is columns[order[i]] (None: in `columns` order)
    encoders: tuple[Encoder, ...]
    positions: tuple[int, ...]  # each column's place in the stored row
    decoders: tuple[Callable[[Any], Any] | None, ...]
    moves_key: bool  # a key column is among `columns`
    width: int  # how many columns

    @classmethod
    def of(cls, info: TableInfo, columns: tuple[str, ...]) -> UpdatePlan:
        names = [f"p{i}" for i in range(len(columns))]
        statement = (
            sa.update(info.sa_table)
            .where(info.key_clause())
            .values({c: sa.bindparam(p) for c, p in zip(columns, names, strict=True)})
        )
        text, params = positional(statement)
        values, keys = params[: len(columns)], params[len(columns) :]
        if sorted(values) != sorted(names) or keys != list(info._params):
            raise AssertionError(f"unexpected parameters {params} in {text}")
        order = tuple(names.index(p) for p in values)
        return cls(
            columns=columns,
            statement=text,
            order=None if order == tuple(range(len(columns))) else order,
            encoders=tuple(column_encoder(info, c) for c in columns),
            positions=tuple(info.columns.index(c) for c in columns),
            decoders=tuple(_decoder(info, c) for c in columns),
            moves_key=any(c in info.key for c in columns),
            width=len(columns),
        )
