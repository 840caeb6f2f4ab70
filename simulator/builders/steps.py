"""Steps and filters, built with typed Python calls: one function per step kind.

Each function returns a `Step` holding the step's YAML mapping; expressions in it go through
`expr` (Python values are literals), template fields (`error`, `fail`) through `template`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .expr import ExprLike, Template, expr, text_of

__all__ = [
    "STEP_BUILDERS",
    "F",
    "Filter",
    "Step",
    "count",
    "create",
    "delete",
    "fail",
    "for_each",
    "get",
    "let",
    "list_",
    "require",
    "return_",
    "steps_raw",
    "sum_",
    "update",
    "use",
]


@dataclass(frozen=True, slots=True)
class Step:
    """One step in its YAML shape."""

    raw: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Filter:
    """`{column, op, value, skip_if_null}`."""

    raw: dict[str, Any]


class F:
    """A filter on a column: `F("status").ne("cancelled")`, `F("name").icontains(arg("q"))`;
    the column may follow foreign keys (`F("team_id.city")`).

    `F(col).eq(None)` is the literal-null test (`IS NULL`); a value that is null only at run time
    skips the filter unless `skip_if_null=False`.
    """

    def __init__(self, column: str) -> None:
        self.column = column

    def op(self, op: str, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        """Any filter operator by name. `skip_if_null`: None leaves the step's rule (skipped when
        null, never in an `internal` step); True or False is written and says so for this filter."""
        raw: dict[str, Any] = {"column": self.column, "op": op, "value": expr(value)}
        if skip_if_null is not None:
            raw["skip_if_null"] = skip_if_null
        return Filter(raw)

    def eq(self, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        return self.op("eq", value, skip_if_null=skip_if_null)

    def ieq(self, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        return self.op("ieq", value, skip_if_null=skip_if_null)

    def ne(self, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        return self.op("ne", value, skip_if_null=skip_if_null)

    def lt(self, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        return self.op("lt", value, skip_if_null=skip_if_null)

    def le(self, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        return self.op("le", value, skip_if_null=skip_if_null)

    def gt(self, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        return self.op("gt", value, skip_if_null=skip_if_null)

    def ge(self, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        return self.op("ge", value, skip_if_null=skip_if_null)

    def in_(self, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        return self.op("in", value, skip_if_null=skip_if_null)

    def not_in(self, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        return self.op("not_in", value, skip_if_null=skip_if_null)

    def contains(self, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        return self.op("contains", value, skip_if_null=skip_if_null)

    def icontains(self, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        return self.op("icontains", value, skip_if_null=skip_if_null)

    def starts_with(self, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        return self.op("starts_with", value, skip_if_null=skip_if_null)

    def ends_with(self, value: ExprLike, *, skip_if_null: bool | None = None) -> Filter:
        return self.op("ends_with", value, skip_if_null=skip_if_null)

    prefix = starts_with  # the old spelling's meaning, written in the shared name

    def is_null(self) -> Filter:
        """`COL IS NULL` (a literal null; never skipped)."""
        return Filter({"column": self.column, "op": "eq", "value": None})

    def is_not_null(self) -> Filter:
        """`COL IS NOT NULL`."""
        return Filter({"column": self.column, "op": "ne", "value": None})


def _common(raw: dict[str, Any], as_: str | None, when: ExprLike, internal: bool = False) -> Step:
    if internal:
        raw["internal"] = True
    if as_ is not None:
        raw["as"] = as_
    if when is not None:
        raw["when"] = expr(when)
    return Step(raw)


def _given(options: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if v is not None}


def _mapping(values: Mapping[str, ExprLike]) -> dict[str, Any]:
    return {str(k): expr(v) for k, v in values.items()}


def _filters(where: Sequence[Filter]) -> list[dict[str, Any]]:
    return [f.raw for f in where]


def _read(raw: dict[str, Any], where: Sequence[Filter]) -> dict[str, Any]:
    """A list/count/sum step's mapping: `raw` (`{KIND: TABLE}` and what it needs), then `where`
    (when any filter is given)."""
    if where:
        raw["where"] = _filters(where)
    return raw


def _targeted(
    raw: dict[str, Any],
    key: Mapping[str, ExprLike] | None,
    where: Sequence[Filter] | None,
    error: str | Template | None,
    **rest: Any,
) -> dict[str, Any]:
    """A get/update/delete step: `key` or `where`, then `rest` (e.g. `set`), then `error`."""
    if key is not None:
        raw["key"] = _mapping(key)
    if where is not None:
        raw["where"] = _filters(where)
    raw.update(rest)
    if error is not None:
        raw["error"] = text_of(error)
    return raw


def get(
    table: str,
    *,
    key: Mapping[str, ExprLike] | None = None,
    where: Sequence[Filter] | None = None,
    order_by: Sequence[str] = (),
    error: str | Template | None = None,
    optional: bool = False,
    join: Mapping[str, str] | None = None,
    internal: bool = False,
    as_: str | None = None,
    when: ExprLike = None,
) -> Step:
    """`get: TABLE`: one row by `key` or `where`; missing -> `error` (or null when `optional`);
    `join: {NAME: fk_column}` adds the row each foreign key refers to."""
    raw = _targeted({"get": table}, key, where, None)
    if order_by:
        raw["order_by"] = list(order_by)
    if error is not None:
        raw["error"] = text_of(error)
    if optional:
        raw["optional"] = True
    if join:
        raw["join"] = dict(join)
    return _common(raw, as_, when, internal)


#: `max_limit` left at the format's default (100)
DEFAULT_CAP = 100


def list_(
    table: str,
    *,
    where: Sequence[Filter] = (),
    order_by: Sequence[str] = (),
    limit: ExprLike = None,
    offset: ExprLike = None,
    max_limit: int | None = DEFAULT_CAP,
    join: Mapping[str, str] | None = None,
    internal: bool = False,
    as_: str | None = None,
    when: ExprLike = None,
) -> Step:
    """`list: TABLE`: matching rows, ordered, capped at `max_limit` (None: no cap); `join` as in `get`."""
    raw = _read({"list": table}, where)
    if order_by:
        raw["order_by"] = list(order_by)
    if limit is not None:
        raw["limit"] = expr(limit)
    if offset is not None:
        raw["offset"] = expr(offset)
    if max_limit != DEFAULT_CAP:
        raw["max_limit"] = max_limit
    if join:
        raw["join"] = dict(join)
    return _common(raw, as_, when, internal)


def count(
    table: str,
    *,
    where: Sequence[Filter] = (),
    internal: bool = False,
    as_: str | None = None,
    when: ExprLike = None,
) -> Step:
    """`count: TABLE`: the number of matching rows."""
    return _common(_read({"count": table}, where), as_, when, internal)


def sum_(
    table: str,
    column: str,
    *,
    where: Sequence[Filter] = (),
    internal: bool = False,
    as_: str | None = None,
    when: ExprLike = None,
) -> Step:
    """`sum: TABLE`: the sum of `column` over matching rows (0 when none)."""
    return _common(_read({"sum": table, "column": column}, where), as_, when, internal)


def create(
    table: str, values: Mapping[str, ExprLike], *, as_: str | None = None, when: ExprLike = None
) -> Step:
    """`create: TABLE`: insert one row (key generated when absent, defaults filled)."""
    return _common({"create": table, "values": _mapping(values)}, as_, when)


def update(
    table: str,
    set: Mapping[str, ExprLike] | None = None,  # noqa: A002 - the format's own word
    *,
    patch: Mapping[str, ExprLike] | None = None,
    key: Mapping[str, ExprLike] | None = None,
    where: Sequence[Filter] | None = None,
    error: str | Template | None = None,
    internal: bool = False,
    as_: str | None = None,
    when: ExprLike = None,
) -> Step:
    """`update: TABLE`: the row with `key` (or every row matching `where`). `set` columns are always
    written; a `patch` column only when the call gave every argument its value reads (an explicit
    null writes null, an absent argument leaves the column)."""
    if not set and not patch:
        raise ValueError(f"update {table}: give `set` or `patch` (or both)")
    changes = _given({"set": _mapping(set) if set else None, "patch": _mapping(patch) if patch else None})
    return _common(_targeted({"update": table}, key, where, error, **changes), as_, when, internal)


def delete(
    table: str,
    *,
    key: Mapping[str, ExprLike] | None = None,
    where: Sequence[Filter] | None = None,
    error: str | Template | None = None,
    internal: bool = False,
    as_: str | None = None,
    when: ExprLike = None,
) -> Step:
    """`delete: TABLE`: delete the row with `key` (or every row matching `where`)."""
    return _common(_targeted({"delete": table}, key, where, error), as_, when, internal)


def require(condition: ExprLike, error: str | Template, *, when: ExprLike = None) -> Step:
    """`require: COND`: the call fails with `error` when COND is false."""
    return _common({"require": expr(condition), "error": text_of(error)}, None, when)


def fail(message: str | Template, *, when: ExprLike = None) -> Step:
    """`fail: MESSAGE`: fail the call (usually under `when`)."""
    return _common({"fail": text_of(message)}, None, when)


def let(name: str, value: ExprLike, *, when: ExprLike = None) -> Step:
    """`let: NAME`: bind (or rebind) a name."""
    return _common({"let": name, "value": expr(value)}, None, when)


def for_each(
    over: ExprLike,
    as_: str,
    steps: Sequence[Step],
    *,
    index: str | None = None,
    collect: str | None = None,
    when: ExprLike = None,
) -> Step:
    """`for_each: LIST`: run `steps` per element; `collect` binds each pass's last value."""
    raw: dict[str, Any] = {"for_each": expr(over), "as": as_}
    if index is not None:
        raw["index"] = index
    raw["steps"] = steps_raw(steps)
    if collect is not None:
        raw["collect"] = collect
    return _common(raw, None, when)


def return_(value: ExprLike, *, when: ExprLike = None) -> Step:
    """`return: EXPR`: the call's result."""
    return _common({"return": expr(value)}, None, when)


def use(
    fragment: str,
    with_: Mapping[str, ExprLike] | None = None,
    *,
    as_: str | None = None,
    when: ExprLike = None,
) -> Step:
    """`use: FRAGMENT`: run a fragment with parameters; binds its `return` value to `as_`."""
    raw: dict[str, Any] = {"use": fragment}
    if with_:
        raw["with"] = _mapping(with_)
    return _common(raw, as_, when)


def steps_raw(steps: Step | Sequence[Step]) -> list[dict[str, Any]]:
    """The YAML list of steps."""
    if isinstance(steps, Step):
        return [steps.raw]
    return [s.raw for s in steps]


#: step kind (as the step registry names it) -> its builder
STEP_BUILDERS = {
    "get": get,
    "list": list_,
    "count": count,
    "sum": sum_,
    "create": create,
    "update": update,
    "delete": delete,
    "require": require,
    "fail": fail,
    "let": let,
    "for_each": for_each,
    "return": return_,
    "use": use,
}
