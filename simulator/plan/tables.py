"""Tables: the domain's columns as SQLAlchemy Core tables, value codecs and checks.

Every domain table becomes a `sqlalchemy.Table`; DDL and statements are compiled with the
SQLite dialect once. Values cross into SQLite through `encode` (checked against the column's
type, nullability and enum) and come back through `decode` (booleans and JSON restored).
Tables whose names start with `_toolgym_` hold the runtime's own bookkeeping (clock, id
counters, change log); they are invisible to tools, exports, digests and diffs.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from operator import itemgetter
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.schema import CreateIndex, CreateTable

from ..codegen.decoding import row_decoder
from ..errors import ToolError
from ..format.spec import Table
from ..lang.numbers import INT64_MAX, INT64_MIN, finite, in_range
from ..lang.values import json_type
from .ids import IdMaker, generated_key

__all__ = ["IdMaker", "TableInfo", "build_tables", "ddl", "generated_key", "value_problem"]

DIALECT = sqlite_dialect.dialect(paramstyle="named")

META_TABLES = """
CREATE TABLE _toolgym_meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE _toolgym_changes (tbl TEXT NOT NULL, pk NOT NULL, PRIMARY KEY (tbl, pk)) WITHOUT ROWID;
"""


class JsonNumber(sa.types.UserDefinedType[Any]):
    """A `number` column: declared without a type, so SQLite keeps each value's storage class
    (no affinity) and an integer stays an integer, a float a float, as JSON wrote them."""

    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return ""


_SA_TYPES: dict[str, Callable[[], Any]] = {
    "string": sa.Text,
    "integer": sa.Integer,
    "number": JsonNumber,
    "boolean": lambda: sa.Boolean(create_constraint=True),
    "datetime": sa.Text,
    "json": sa.Text,
}


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def install_functions(conn: Any) -> None:
    """SQL functions that must agree with the expression language: Unicode `lower` (SQLite's folds ASCII only)."""
    conn.create_function("lower", 1, _lower, deterministic=True)


def sql(statement: Any) -> str:
    """Compile a SQLAlchemy Core statement to SQLite SQL text with named parameters."""
    return str(statement.compile(dialect=DIALECT))


_POSITIONAL = sqlite_dialect.dialect(paramstyle="qmark")


def positional(statement: Any) -> tuple[str, list[str]]:
    """A statement's SQL text with `?` parameters, and the parameters' names in their order (a
    parameter tuple costs SQLite less than a dict)."""
    compiled = statement.compile(dialect=_POSITIONAL)
    return str(compiled), list(compiled.positiontup or ())


OUT_OF_RANGE = "is out of range: integers must be between -2^63 and 2^63-1"

#: what sqlite3 raises when a bound parameter's value cannot be stored (the value's fault)
BIND_ERRORS = (OverflowError, UnicodeEncodeError, sqlite3.ProgrammingError)


class ValueProblem(ValueError):
    """A value does not fit a column."""


def _brief(value: Any, limit: int = 80) -> str:
    """A value as JSON text for a message, cut to `limit` characters."""
    try:
        text = json.dumps(value, default=str)
    except ValueError:  # an integer too long to print
        text = f"<{json_type(value)}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bind_problem(value: Any) -> str | None:
    """Why SQLite cannot take `value` as a bound parameter, worded for the agent; None when it can."""
    if value is None or isinstance(value, bool | float | bytes):
        return None
    if isinstance(value, int):
        return None if INT64_MIN <= value <= INT64_MAX else OUT_OF_RANGE
    if isinstance(value, str):
        if value.isascii():
            return None
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "holds characters that are not valid Unicode text (unpaired surrogates)"
        return None
    return f"must be a single value (a string, number, boolean or null), not {json_type(value)}"


def bind_error(params: dict[str, Any], labels: dict[str, str], exc: Exception) -> Exception:
    """The agent's ToolError for the parameter that made a statement fail to bind (`labels` names
    each parameter in the agent's words); `exc` itself when no value is at fault."""
    for name, value in params.items():
        problem = bind_problem(value)
        if problem is not None:
            return ToolError(f"{labels.get(name, name)} {problem}")
    return exc


def _check_type(kind: str, value: Any) -> Any:
    if kind == "string":
        if not isinstance(value, str):
            raise ValueProblem(f"expected a string, got {_brief(value)}")
        return value
    if kind == "integer":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueProblem(f"expected an integer, got {_brief(value)}")
        if not INT64_MIN <= value <= INT64_MAX:
            raise ValueProblem(f"the value {OUT_OF_RANGE}")
        return value
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueProblem(f"expected a number, got {_brief(value)}")
        if isinstance(value, float) and not finite(value):
            raise ValueProblem(f"expected a finite number, got {value}")
        if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
            raise ValueProblem(f"the value {OUT_OF_RANGE}")
        return value  # the JSON type is kept: an integer stays an integer
    if kind == "boolean":
        if not isinstance(value, bool):
            raise ValueProblem(f"expected true or false, got {_brief(value)}")
        return int(value)
    if kind == "datetime":
        if not isinstance(value, str):
            raise ValueProblem(f"expected an ISO-8601 date-time string, got {_brief(value)}")
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValueProblem(f"{_brief(value)} is not an ISO-8601 date-time") from exc
        return value
    # json
    try:
        return json.dumps(value, separators=(",", ":"), allow_nan=False)  # key order kept as given
    except (TypeError, ValueError) as exc:
        raise ValueProblem(f"value is not JSON-serialisable: {exc}") from exc


def value_problem(kind: str, value: Any) -> str | None:
    """Why a column of type `kind` cannot store `value` (None: it can; null always can)."""
    if value is None:
        return None
    try:
        _check_type(kind, value)
    except ValueProblem as exc:
        return str(exc)
    return None


def stored_key(key: Any) -> Any:
    """A row's key as the change log stores it: a composite key (a tuple) as a JSON array."""
    return json.dumps(list(key), separators=(",", ":")) if type(key) is tuple else key


@dataclass
class TableInfo:
    """A compiled table: its SQLAlchemy table, column order, codecs and basic statements.

    A row's key is its key column's value, or for a composite key (`primary_key: [a, b]`) the tuple
    of its key columns' values; `pk` is the column `create` generates (the only key column, or the
    last one of a composite key). Statements by key take the parameters `key_params(key)`.
    """

    name: str
    spec: Table
    sa_table: sa.Table
    columns: tuple[str, ...]
    pk: str
    pk_index: int
    key: tuple[str, ...] = ()
    key_index: tuple[int, ...] = ()
    ids: IdMaker = field(default_factory=lambda: IdMaker(""))
    select_by_pk: str = ""
    insert: str = ""
    delete_by_pk: str = ""
    select_all: str = ""
    next_int_key: str = ""
    select_changed: str = ""
    #: codecs as generated functions where they can be (False: plain code, the reference path)
    generated: bool = True
    composite: bool = field(init=False, default=False)
    counter: str = field(init=False, default="")  # the name of its id counter in `_toolgym_meta`
    _params: tuple[str, ...] = field(init=False, default=())
    #: the key of a row as stored (a tuple for a composite key): an itemgetter, as this runs per row
    key_of: Callable[[tuple[Any, ...]], Any] = field(init=False, repr=False, compare=False)
    #: the key of a row given as {column: value}
    key_in: Callable[[dict[str, Any]], Any] = field(init=False, repr=False, compare=False)
    #: a row as stored (a tuple) -> {column: value}, booleans and JSON restored (`decoding.row_decoder`)
    decode: Callable[[tuple[Any, ...]], dict[str, Any]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        t = self.sa_table
        if not self.key:
            self.key = (self.pk,)
        self.key_index = tuple(self.columns.index(c) for c in self.key)
        self.composite = len(self.key) > 1
        self.counter = f"id:{self.name}"
        self.key_of = itemgetter(*self.key_index)
        self.key_in = itemgetter(*self.key)
        self._params = (
            ("pk",) if not self.composite else tuple(f"_toolgym_k{i}" for i in range(len(self.key)))
        )
        where = self.key_clause()
        self.select_by_pk = sql(sa.select(*t.c).where(where))
        #: `select_by_pk` with `?` parameters, in key order
        self.select_by_key = positional(sa.select(*t.c).where(where))[0]
        self.insert = sql(sa.insert(t).values({c: sa.bindparam(c) for c in self.columns}))
        self.delete_by_pk = sql(sa.delete(t).where(where))
        self.select_all = sql(sa.select(*t.c).order_by(*(t.c[c] for c in self.key)))
        self.next_int_key = ""
        pk_col = t.c[self.pk]
        if self.spec.columns[self.pk].type == "integer":
            zero: sa.ColumnClause[Any] = sa.literal_column("0")
            one: sa.ColumnClause[Any] = sa.literal_column("1")
            after: Any = sa.func.coalesce(sa.func.max(pk_col), zero) + one
            start = getattr(self.spec.ids, "start", None)
            if start is not None:
                after = sa.func.max(after, sa.literal_column(str(int(start))))
            query = sa.select(after)
            for column, param in zip(self.key[:-1], self._params, strict=False):
                query = query.where(t.c[column] == sa.bindparam(param))
            self.next_int_key = sql(query)
        changes = sa.table("_toolgym_changes", sa.column("tbl"), sa.column("pk"))
        if self.composite:
            on = sa.and_(
                *(
                    t.c[c] == sa.func.json_extract(changes.c.pk, sa.literal_column(f"'$[{i}]'"))
                    for i, c in enumerate(self.key)
                )
            )
        else:
            on = pk_col == changes.c.pk
        self.select_changed = sql(
            sa.select(changes.c.pk, *t.c)
            .select_from(changes.outerjoin(t, on))
            .where(changes.c.tbl == sa.literal_column(f"'{self.name}'"))
        )
        self.decode = row_decoder(self.columns, self.kinds, generated=self.generated)

    @property
    def kinds(self) -> tuple[str, ...]:
        """Each column's type, in column order."""
        return tuple(self.spec.columns[c].type for c in self.columns)

    def key_clause(self) -> Any:
        """`key columns = :params` (the parameters `key_params` gives)."""
        t = self.sa_table
        return sa.and_(*(t.c[c] == sa.bindparam(p) for c, p in zip(self.key, self._params, strict=True)))

    def key_params(self, key: Any) -> dict[str, Any]:
        """The parameters of a statement by key (`select_by_pk`, `delete_by_pk`, `key_clause`)."""
        if not self.composite:
            return {"pk": key}
        return dict(zip(self._params, key, strict=True))

    def unstored_key(self, stored: Any) -> Any:
        """A key as the change log stores it, back as `key_of` gives it."""
        return tuple(json.loads(stored)) if self.composite else stored

    def key_label(self, key: Any) -> str:
        """`col=value` (or `(a, b)=(x, y)`) for messages."""
        if not self.composite:
            return f"{self.pk}={key!r}"
        return f"({', '.join(self.key)})=({', '.join(repr(v) for v in key)})"

    def encode(self, name: str, value: Any) -> Any:
        """Check a value against the column and turn it into what SQLite stores."""
        col = self.spec.columns[name]
        if value is not None and col.enum is None:  # the common case, checked inline
            kind = col.type
            if kind == "string" and type(value) is str:
                return value
            if kind == "integer" and type(value) is int and INT64_MIN <= value <= INT64_MAX:
                return value
            if kind == "number" and in_range(value, INT64_MIN, INT64_MAX):
                return value
        if value is None:
            if not col.nullable:
                raise ValueProblem(f"{self.name}.{name} may not be null")
            return None
        if col.enum is not None and value not in col.enum:
            allowed = ", ".join(json.dumps(v) for v in col.enum)
            raise ValueProblem(f"{self.name}.{name} must be one of {allowed}; got {_brief(value)}")
        try:
            return _check_type(col.type, value)
        except ValueProblem as exc:
            raise ValueProblem(f"{self.name}.{name}: {exc}") from None

    def default(self, name: str, now: str) -> Any:
        value = self.spec.columns[name].default
        if value == "$now":
            return now
        if isinstance(value, dict | list):
            return json.loads(json.dumps(value))
        return value

    def encode_key(self, value: Any) -> Any:
        """A key value as SQLite stores it (booleans as integers); no checks."""
        return int(value) if isinstance(value, bool) else value


def build_tables(
    tables: dict[str, Table], generated: bool = True
) -> tuple[sa.MetaData, dict[str, TableInfo]]:
    """SQLAlchemy tables for the spec (assumes references were checked); foreign keys are indexed.
    `generated`: the tables' codecs as generated functions (False: plain code, `TableInfo.generated`)."""
    metadata = sa.MetaData()
    infos: dict[str, TableInfo] = {}
    for tname, tspec in tables.items():
        key = tspec.key_columns
        cols: list[Any] = []
        for cname, cspec in tspec.columns.items():
            args: list[Any] = []
            if cspec.references:
                rt, rc = cspec.references.split(".", 1)
                args.append(sa.ForeignKey(f"{rt}.{rc}"))
            cols.append(
                sa.Column(
                    cname,
                    _SA_TYPES[cspec.type](),
                    *args,
                    primary_key=cname in key,
                    nullable=cspec.nullable and cname not in key,
                    unique=cspec.unique and (cname not in key or len(key) > 1),
                    autoincrement=False,
                )
            )
            if cspec.enum is not None and cspec.type in ("string", "integer", "number"):
                cols.append(
                    sa.CheckConstraint(sa.column(cname).in_(cspec.enum), name=f"ck_{tname}_{cname}_enum")
                )
        sa_table = sa.Table(tname, metadata, *cols)
        for cname, cspec in tspec.columns.items():
            if cspec.references and cname != key[0] and not cspec.unique:  # (a key's first column is indexed)
                sa.Index(index_name(metadata, tables, tname, cname), sa_table.c[cname])
        columns = tuple(tspec.columns)
        infos[tname] = TableInfo(
            name=tname,
            spec=tspec,
            sa_table=sa_table,
            columns=columns,
            pk=key[-1],
            pk_index=columns.index(key[-1]),
            key=key,
            ids=IdMaker.of(tname, tspec.ids, tspec.id_prefix),
            generated=generated,
        )
    return metadata, infos


def ddl(metadata: sa.MetaData) -> list[str]:
    """CREATE TABLE and CREATE INDEX statements, parents before children."""
    out: list[str] = []
    for table in metadata.sorted_tables:
        out.append(str(CreateTable(table).compile(dialect=DIALECT)))
        for index in sorted(table.indexes, key=lambda i: i.name or ""):
            out.append(str(CreateIndex(index).compile(dialect=DIALECT)))
    return out


def add_indexes(infos: dict[str, TableInfo], wanted: set[tuple[str, str]]) -> None:
    """Index the columns tools filter on by equality (unless a key, unique or already indexed)."""
    for tname, cname in sorted(wanted):
        info = infos[tname]
        spec = info.spec.columns[cname]
        if cname == info.key[0] or spec.unique or spec.references:
            continue
        sa.Index(index_name(info.sa_table.metadata, infos, tname, cname), info.sa_table.c[cname])


def index_name(metadata: sa.MetaData, tables: Iterable[str], table: str, column: str) -> str:
    """`ix_{table}_{column}`, or with `_2`, `_3`, ... when SQLite already has that name: tables and
    indexes share one namespace, ignoring case, and `ix_t_a_b` is both t_a.b's and t.a_b's name."""
    taken = {t.lower() for t in tables}
    taken.update(
        i.name.lower() for t in metadata.tables.values() for i in t.indexes if isinstance(i.name, str)
    )
    base = name = f"ix_{table}_{column}"
    n = 1
    while name.lower() in taken:
        n += 1
        name = f"{base}_{n}"
    return name
