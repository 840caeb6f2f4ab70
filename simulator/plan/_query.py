"""Reading rows: compiled selects over one table, and the runtime interface steps run against.

A `Query` holds a step's filters; it compiles one SQL statement per combination of filters that are
present (a filter whose value is null is skipped), on first use, and caches it. A lookup by primary
key goes through the running call's row cache, so a row read and then updated in the same call is
read once.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import sqlalchemy as sa

from ..codegen.decoding import row_decoder
from ..errors import ToolError
from ..lang.expressions import Compiled, Env
from ..runtime.observe import ReadObserver
from .tables import BIND_ERRORS, TableInfo, bind_error, bind_problem, sql

if TYPE_CHECKING:
    from ..codegen.emit import StepSource


class Runtime(Protocol):
    """What a running step needs from its episode."""

    conn: sqlite3.Connection
    cursor: sqlite3.Cursor  # a cursor of `conn` (what generated step bodies execute on)
    cache: dict[tuple[str, Any], Any]  # rows as stored, read or written during the current call
    # when given, told what the call reads: (table, key), or (table, "*") for a scan
    reads: ReadObserver | None

    def now(self) -> str: ...
    def next_id(self, table: TableInfo, row: dict[str, Any] | None = None, probe: bool = True) -> Any: ...
    def changed(self, table: str, pk: Any) -> None: ...
    def touched(self, table: str, pk: Any) -> None: ...  # `changed`, for a row whose key stayed


MISSING = object()

#: statements kept per query, one per combination of present filters: a search with n optional
#: filters has 2^n and the agent picks one per call, so beyond this many they are compiled per call
STATEMENTS_KEPT = 256


def ordering(info: TableInfo, order_by: list[str]) -> list[Any]:
    """`order_by` (`col`, `-col` descending), then the key: every order is total."""
    t = info.sa_table
    order = [t.c[k.lstrip("-")].desc() if k.startswith("-") else t.c[k].asc() for k in order_by]
    return [*order, *(t.c[k].asc() for k in info.key)]


@dataclass(frozen=True)
class Hop:
    """One step along a foreign key: `column` (of the table before) refers to `key` of `table`."""

    column: str
    table: Any  # an aliased sa.Table, so a table may be followed from itself
    key: str


@dataclass(frozen=True)
class Join:
    """`join: {name: fk}`: the row the foreign keys along `hops` lead to, added to each row as `name`."""

    name: str
    info: TableInfo
    hops: tuple[Hop, ...]


@dataclass(frozen=True)
class Children:
    """`join: {name: {rows, by}}`: the rows of `info` whose column `by` refers to the row, as a list."""

    name: str
    info: TableInfo
    by: str
    parent_index: int  # where the parent row holds the value `by` refers to
    statement: str  # every child of a list of parents (`:keys`, a JSON list), in order

    @classmethod
    def of(
        cls, name: str, parent: TableInfo, info: TableInfo, by: str, to: str, order_by: list[str]
    ) -> Children:
        t = info.sa_table
        members = _members(sa.bindparam("keys"))
        stmt = sa.select(*t.c).where(t.c[by].in_(members)).order_by(*ordering(info, order_by))
        return cls(name, info, by, parent.columns.index(to), sql(stmt))

    def attach(self, conn: sqlite3.Connection, raw: list[Any], rows: list[dict[str, Any]]) -> None:
        keys = list(dict.fromkeys(r[self.parent_index] for r in raw if r[self.parent_index] is not None))
        found: dict[Any, list[dict[str, Any]]] = {}
        if keys:
            at = self.info.columns.index(self.by)
            for child in conn.execute(self.statement, {"keys": json.dumps(keys)}).fetchall():
                found.setdefault(child[at], []).append(self.info.decode(child))
        for r, row in zip(raw, rows, strict=True):
            row[self.name] = found.get(r[self.parent_index], [])


@dataclass
class CompiledFilter:
    """`column OP value`, the value an expression of the call's environment. With `via`, the column
    is one of the row the foreign keys along `via` lead to."""

    column: str
    op: str
    value: Compiled
    skip_if_null: bool
    encode: Callable[[Any], Any]
    label: str = "a filter value"  # the value in the agent's words (an argument's name), for errors
    is_null: bool = False  # the value is a literal null: `eq`/`ieq` test IS NULL, `ne` IS NOT NULL
    via: tuple[Hop, ...] = ()


_ZERO: sa.ColumnClause[Any] = sa.literal_column("0")
_ONE: sa.ColumnClause[Any] = sa.literal_column("1")


def _members(p: Any) -> sa.Select[Any]:
    return sa.select(sa.column("value")).select_from(sa.func.json_each(p))


def _ends_with(col: Any, p: Any) -> Any:
    # substr(x, -n) is the last n characters; substr(x, -0) would be all of x, so "" is tested apart
    return sa.or_(sa.func.length(p) == _ZERO, sa.func.substr(col, -sa.func.length(p)) == p)


#: The filter predicates, in SQL: each name is also the expression operator that tests the same thing
#: (`in: [a, list]`, `starts_with: [s, prefix]`, ...), so a filter and an expression agree.
PREDICATES: dict[str, Callable[[Any, Any], Any]] = {
    "eq": lambda col, p: col == p,
    "ieq": lambda col, p: sa.func.lower(col) == sa.func.lower(p),
    "ne": lambda col, p: col.is_distinct_from(p),
    "lt": lambda col, p: col < p,
    "le": lambda col, p: col <= p,
    "gt": lambda col, p: col > p,
    "ge": lambda col, p: col >= p,
    "in": lambda col, p: col.in_(_members(p)),
    "not_in": lambda col, p: sa.or_(col.not_in(_members(p)), col.is_(None)),
    "contains": lambda col, p: sa.func.instr(col, p) > _ZERO,
    "icontains": lambda col, p: sa.func.instr(sa.func.lower(col), sa.func.lower(p)) > _ZERO,
    "starts_with": lambda col, p: sa.func.substr(col, _ONE, sa.func.length(p)) == p,
    "ends_with": _ends_with,
}


def _clause(table: sa.Table, f: CompiledFilter, name: str) -> Any:
    col = (f.via[-1].table if f.via else table).c[f.column]
    if f.is_null:
        clause = col.is_not(None) if f.op == "ne" else col.is_(None)
    else:
        clause = PREDICATES[f.op](col, sa.bindparam(name))
    for i in reversed(range(len(f.via))):  # innermost first: rows of the table before whose key leads there
        hop = f.via[i]
        before = table if i == 0 else f.via[i - 1].table
        clause = before.c[hop.column].in_(sa.select(hop.table.c[hop.key]).where(clause))
    return clause


class Query:
    """A select over one table with optional filters; one compiled statement per filter combination."""

    def __init__(
        self,
        info: TableInfo,
        filters: list[CompiledFilter],
        order_by: list[str],
        paged: bool,
        count: bool = False,
        total: str | None = None,
        joins: list[Join] | None = None,
        children: list[Children] | None = None,
    ):
        self.info = info
        self.joins = joins or []
        self.children = children or []
        self.filters = filters
        self.order_by = order_by
        self.paged = paged
        self.count = count or total is not None
        self.total = total
        self._cache: dict[tuple[int, ...], str] = {}
        self._whole: dict[tuple[int, ...], str] = {}  # a paged query's statements without LIMIT/OFFSET
        #: each filter's parameter name
        self._names = tuple(f"f{i}" for i in range(len(filters)))
        #: the filters that are present in every call (none can be skipped), else None
        self._always = (
            tuple(range(len(filters))) if all(f.is_null or not f.skip_if_null for f in filters) else None
        )
        only = filters[0] if len(filters) == 1 else None
        pk_lookup = (
            only is not None
            and not info.composite
            and only.column == info.pk
            and only.op == "eq"
            and not only.skip_if_null
            and not only.via
        )
        self.by_pk = only if pk_lookup and not order_by and not self.count and not self.joins else None
        #: what reading through foreign keys (joins, filters on related rows) reads: a scan of each table
        self.related_reads = tuple(
            sorted(
                {(j.info.name, "*") for j in self.joins}
                | {(c.info.name, "*") for c in self.children}
                | {(h.table.element.name, "*") for f in filters for h in f.via}
            )
        )
        #: each joined row: its name, where its key columns are, its decoder (at its place in the row)
        self._joined: list[tuple[str, tuple[int, ...], Callable[[tuple[Any, ...]], dict[str, Any]]]] = []
        at = len(info.columns)
        for join in self.joins:
            key_at = tuple(at + i for i in join.info.key_index)
            decode = row_decoder(join.info.columns, join.info.kinds, at, join.info.generated)
            self._joined.append((join.name, key_at, decode))
            at += len(join.info.columns)
        #: a fetched row as the step returns it (joined rows under their names)
        self.decode: Callable[[tuple[Any, ...]], dict[str, Any]] = (
            self._decode_joined if self.joins else info.decode
        )

    def output(self, conn: sqlite3.Connection, raw: list[Any]) -> list[dict[str, Any]]:
        """Fetched rows as the step returns them: decoded, with their related rows."""
        decode = self.decode
        rows = [decode(r) for r in raw]
        for children in self.children:
            children.attach(conn, raw, rows)
        return rows

    def _decode_joined(self, row: tuple[Any, ...]) -> dict[str, Any]:
        out = self.info.decode(row)  # (the row's own columns come first)
        for name, key_at, decode in self._joined:
            out[name] = decode(row) if any(row[i] is not None for i in key_at) else None
        return out

    def _statement(self, active: tuple[int, ...], paged: bool | None = None) -> str:
        """The statement of these present filters; `paged=False` leaves out a paged query's
        LIMIT/OFFSET (for a call that takes every row from the first: the same rows, faster)."""
        if paged is None:
            paged = self.paged
        cache = self._cache if paged == self.paged else self._whole
        text = cache.get(active)
        if text is None:
            t = self.info.sa_table
            if self.total is not None:
                stmt = sa.select(sa.func.coalesce(sa.func.sum(t.c[self.total]), sa.literal_column("0")))
            elif self.count:
                stmt = sa.select(sa.func.count()).select_from(t)
            else:
                stmt = self._select(t)
            for i in active:
                stmt = stmt.where(_clause(t, self.filters[i], f"f{i}"))
            if not self.count:
                stmt = stmt.order_by(*ordering(self.info, self.order_by))
                if paged:
                    stmt = stmt.limit(sa.bindparam("limit")).offset(sa.bindparam("offset"))
            text = sql(stmt)
            if len(cache) < STATEMENTS_KEPT:
                cache[active] = text
        return text

    def _select(self, t: sa.Table) -> sa.Select[Any]:
        """The table's columns, then each joined row's (LEFT OUTER JOIN along its foreign keys)."""
        if not self.joins:
            return sa.select(*t.c)
        source: Any = t
        columns = list(t.c)
        for join in self.joins:
            before = t
            for hop in join.hops:
                source = source.outerjoin(hop.table, before.c[hop.column] == hop.table.c[hop.key])
                before = hop.table
            columns.extend(before.c)
        return sa.select(*columns).select_from(source)

    def params(self, env: Env) -> tuple[tuple[int, ...], dict[str, Any]]:
        """The filters present in this call (by position) and their parameters."""
        always = self._always
        active: list[int] = []
        params: dict[str, Any] = {}
        for i, f in enumerate(self.filters):
            if f.is_null:
                active.append(i)
                continue
            value = f.value(env)
            if value is None and f.skip_if_null:
                continue
            active.append(i)
            if f.op in ("in", "not_in"):
                values = value if isinstance(value, list) else [value]
                try:
                    params[self._names[i]] = json.dumps([f.encode(v) for v in values], allow_nan=False)
                except ValueError:
                    raise ToolError(
                        f"{f.label} holds a number that is not finite (NaN or Infinity)"
                    ) from None
            else:
                params[self._names[i]] = value if f.encode is as_stored else f.encode(value)
        return always if always is not None else tuple(active), params

    def fetch(self, rt: Runtime, env: Env, limit: int | None = None, offset: int = 0) -> list[Any]:
        """Rows as stored. A lookup by primary key goes through the call's row cache."""
        if self.by_pk is not None and offset == 0 and (limit is None or limit > 0):
            row = self.row_by_key(rt, env)
            return [] if row is None else [row]
        return self.run(rt.conn, env, limit, offset)

    def row_by_key(self, rt: Runtime, env: Env) -> Any:
        """The row as stored of the key `by_pk` gives (None: no such row), through the call's row
        cache (a lookup by primary key, as `fetch` does it)."""
        by_pk = self.by_pk
        assert by_pk is not None
        key = by_pk.value(env)
        if by_pk.encode is not as_stored:
            key = by_pk.encode(key)
        return self.row_of(rt, key)

    def row_of(self, rt: Runtime, key: Any) -> Any:
        """`row_by_key` from the key's value, encoded (a generated step body evaluates it itself)."""
        if key is None:
            return None
        by_pk = self.by_pk
        assert by_pk is not None
        if type(key) is not str and bind_problem(key) is not None:  # (also: unhashable)
            raise bind_error({"pk": key}, {"pk": by_pk.label}, ValueError())
        at = (self.info.name, key)
        cached = rt.cache.get(at, MISSING)
        if cached is MISSING:
            try:
                cached = rt.cache[at] = rt.conn.execute(self.info.select_by_key, (key,)).fetchone()
            except BIND_ERRORS as exc:
                raise bind_error({"pk": key}, {"pk": by_pk.label}, exc) from None
        return cached

    def emit_row(self, src: StepSource, key: str, raw: str) -> None:
        """Lines of `emit.StepSource` `src` setting local `raw` to `row_of(rt, key)` (`key`: a local
        holding the encoded key): a text key's row is looked up in the cache, then fetched, written
        out; any other key (and a fetch that fails to bind: it fails again the same way) goes
        through `row_of`."""
        src.runtime = True
        me, table = src.bind(self, "q"), src.bind(self.info.name, "n")
        statement = src.bind(self.info.select_by_key, "sql")
        with src.block(f"if type({key}) is str:"):
            src.add(f"{raw} = cache.get(({table}, {key}), MISSING)")
            with src.block(f"if {raw} is MISSING:"):
                with src.block("try:"):
                    src.add(
                        f"{raw} = cache[({table}, {key})] = cur.execute({statement}, ({key},)).fetchone()"
                    )
                with src.block("except BIND_ERRORS:"):
                    src.add(f"{raw} = {me}.row_of(rt, {key})")
        with src.block("else:"):
            src.add(f"{raw} = {me}.row_of(rt, {key})")

    def emit_key(self, src: StepSource) -> str:
        """Lines setting a local to the encoded key `by_pk` gives; its name."""
        by_pk = self.by_pk
        assert by_pk is not None
        key = src.temp("key")
        src.add(f"{key} = {src.value(by_pk.value)}")
        if by_pk.encode is not as_stored:
            src.add(f"{key} = {src.bind(by_pk.encode, 'enc')}({key})")
        return key

    def run(self, conn: sqlite3.Connection, env: Env, limit: int | None = None, offset: int = 0) -> list[Any]:
        active, params = self.params(env)
        paged = self.paged
        if paged and type(limit) is int and limit < 0 and offset == 0:  # every row: LIMIT -1 OFFSET 0
            paged = False
        elif paged:
            params["limit"] = limit
            params["offset"] = offset
        try:
            return conn.execute(self._statement(active, paged), params).fetchall()
        except BIND_ERRORS as exc:
            raise self.bind_failure(params, exc) from None

    def bind_failure(self, params: dict[str, Any], exc: Exception) -> Exception:
        """The error of a statement SQLite could not bind these parameters to (`tables.bind_error`)."""
        return bind_error(params, {f"f{i}": f.label for i, f in enumerate(self.filters)}, exc)

    def emits_rows(self) -> bool:
        """Whether `emit_rows` can write `run` out: every filter present in every call, none of a list."""
        return (
            self._always is not None
            and not self.count
            and all(f.op not in ("in", "not_in") for f in self.filters)
        )

    def emit_rows(self, src: StepSource, limit: int) -> str:
        """Lines of `emit.StepSource` `src` setting a local to `run(conn, env, limit, 0)` (`emits_rows`
        must hold; `limit` < 0: every row); its name. The filters' values are evaluated in order
        into the parameters, as `params` does."""
        always = self._always
        assert always is not None
        paged = self.paged and limit >= 0
        params = []
        for i, f in enumerate(self.filters):
            if f.is_null:
                continue
            value = src.value(f.value)
            if f.encode is not as_stored:
                value = f"{src.bind(f.encode, 'enc')}({value})"
            params.append(f"{src.bind(self._names[i], 'h')}: {value}")
        if paged:
            params += [f"'limit': {src.integer(int(limit))}", "'offset': 0"]
        given, rows = src.temp("params"), src.temp("rows")
        src.runtime = True
        src.add(f"{given} = {{{', '.join(params)}}}")
        with src.block("try:"):
            src.add(
                f"{rows} = cur.execute({src.bind(self._statement(always, paged), 'sql')}, {given}).fetchall()"
            )
        with src.block("except BIND_ERRORS as exc:"):
            src.add(f"raise {src.bind(self, 'q')}.bind_failure({given}, exc) from None")
        return rows


def as_stored(value: Any) -> Any:
    """A filter value as SQLite takes it, for every column type but boolean and json (the filters
    skip calling it)."""
    return value


def key_encoder(info: TableInfo, column: str) -> Callable[[Any], Any]:
    kind = info.spec.columns[column].type
    if kind == "boolean":
        return lambda v: int(v) if isinstance(v, bool) else v
    if kind == "json":
        return lambda v: json.dumps(v, separators=(",", ":"))
    return as_stored
