"""The tool compiler: an operation (a list of steps) -> a runnable plan of compiled statements.

Compilation happens once, when the domain loads. Every SQL statement is built with SQLAlchemy
Core and compiled to SQLite text with named parameters; argument values only ever travel as
bound parameters. Filters whose value may be null (optional arguments) compile to one statement
per combination of present filters, built on first use and cached.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import sqlalchemy as sa

from .errors import ToolError
from .expr import Compiled, Env, EvalError, ExprError, Scope, compile_expr, compile_template
from .spec import (
    CountStep,
    CreateStep,
    DeleteStep,
    FailStep,
    Filter,
    ForEachStep,
    Fragment,
    GetStep,
    LetStep,
    ListStep,
    RequireStep,
    ReturnStep,
    SumStep,
    Tool,
    UpdateStep,
    UseStep,
)
from .tables import TableInfo, ValueProblem, sql


class Runtime(Protocol):
    """What a running step needs from its episode."""

    conn: sqlite3.Connection
    cache: dict[tuple[str, Any], Any]  # rows as stored, read or written during the current call
    reads: (
        set[tuple[str, Any]] | None
    )  # when a set, reads are recorded: (table, key), or (table, "*") for a scan

    def now(self) -> str: ...
    def next_id(self, table: TableInfo) -> Any: ...
    def changed(self, table: str, pk: Any) -> None: ...


class CompileError(Exception):
    """A problem in one tool's operation; `where` is the path inside the tool."""

    def __init__(self, where: str, message: str):
        super().__init__(message)
        self.where = where
        self.message = message


_MISSING = object()


@dataclass
class _Filter:
    column: str
    op: str
    value: Compiled
    skip_if_null: bool
    encode: Callable[[Any], Any]


def _clause(table: sa.Table, f: _Filter, name: str) -> Any:
    col = table.c[f.column]
    p: sa.BindParameter[Any] = sa.bindparam(name)
    op = f.op
    if op == "eq":
        return col == p
    if op == "ieq":
        return sa.func.lower(col) == sa.func.lower(p)
    if op == "ne":
        return col.is_distinct_from(p)
    if op in ("lt", "le", "gt", "ge"):
        return {"lt": col < p, "le": col <= p, "gt": col > p, "ge": col >= p}[op]
    if op in ("in", "not_in"):
        members: sa.Select[Any] = sa.select(sa.column("value")).select_from(sa.func.json_each(p))
        return col.in_(members) if op == "in" else sa.or_(col.not_in(members), col.is_(None))
    zero: sa.ColumnClause[Any] = sa.literal_column("0")
    one: sa.ColumnClause[Any] = sa.literal_column("1")
    if op == "contains":
        return sa.func.instr(col, p) > zero
    if op == "icontains":
        return sa.func.instr(sa.func.lower(col), sa.func.lower(p)) > zero
    if op == "prefix":
        return sa.func.substr(col, one, sa.func.length(p)) == p
    raise AssertionError(op)


class _Query:
    """A select over one table with optional filters; one compiled statement per filter combination."""

    def __init__(
        self,
        info: TableInfo,
        filters: list[_Filter],
        order_by: list[str],
        paged: bool,
        count: bool = False,
        total: str | None = None,
    ):
        self.info = info
        self.filters = filters
        self.order_by = order_by
        self.paged = paged
        self.count = count or total is not None
        self.total = total
        self._cache: dict[tuple[int, ...], str] = {}
        only = filters[0] if len(filters) == 1 else None
        pk_lookup = only is not None and only.column == info.pk and only.op == "eq" and not only.skip_if_null
        self.by_pk = only if pk_lookup and not order_by and not self.count else None

    def _statement(self, active: tuple[int, ...]) -> str:
        text = self._cache.get(active)
        if text is None:
            t = self.info.sa_table
            if self.total is not None:
                stmt = sa.select(sa.func.coalesce(sa.func.sum(t.c[self.total]), sa.literal_column("0")))
            elif self.count:
                stmt = sa.select(sa.func.count()).select_from(t)
            else:
                stmt = sa.select(*t.c)
            for i in active:
                stmt = stmt.where(_clause(t, self.filters[i], f"f{i}"))
            if not self.count:
                for key in self.order_by:
                    desc = key.startswith("-")
                    col = t.c[key.lstrip("-")]
                    stmt = stmt.order_by(col.desc() if desc else col.asc())
                stmt = stmt.order_by(t.c[self.info.pk].asc())
                if self.paged:
                    stmt = stmt.limit(sa.bindparam("limit")).offset(sa.bindparam("offset"))
            text = self._cache[active] = sql(stmt)
        return text

    def params(self, env: Env) -> tuple[tuple[int, ...], dict[str, Any]]:
        active: list[int] = []
        params: dict[str, Any] = {}
        for i, f in enumerate(self.filters):
            value = f.value(env)
            if value is None and f.skip_if_null:
                continue
            active.append(i)
            if f.op in ("in", "not_in"):
                values = value if isinstance(value, list) else [value]
                params[f"f{i}"] = json.dumps([f.encode(v) for v in values])
            else:
                params[f"f{i}"] = f.encode(value)
        return tuple(active), params

    def fetch(self, rt: Runtime, env: Env, limit: int | None = None, offset: int = 0) -> list[Any]:
        """Rows as stored. A lookup by primary key goes through the call's row cache."""
        if self.by_pk is not None and offset == 0 and (limit is None or limit > 0):
            key = self.by_pk.encode(self.by_pk.value(env))
            if key is None:
                return []
            cached = rt.cache.get((self.info.name, key), _MISSING)
            if cached is _MISSING:
                cached = rt.conn.execute(self.info.select_by_pk, {"pk": key}).fetchone()
                rt.cache[(self.info.name, key)] = cached
            return [] if cached is None else [cached]
        return self.run(rt.conn, env, limit, offset)

    def run(self, conn: sqlite3.Connection, env: Env, limit: int | None = None, offset: int = 0) -> list[Any]:
        active, params = self.params(env)
        if self.paged:
            params["limit"] = limit
            params["offset"] = offset
        return conn.execute(self._statement(active), params).fetchall()


def _key_encoder(info: TableInfo, column: str) -> Callable[[Any], Any]:
    kind = info.spec.columns[column].type
    if kind == "boolean":
        return lambda v: int(v) if isinstance(v, bool) else v
    if kind == "json":
        return lambda v: json.dumps(v, separators=(",", ":"))
    return lambda v: v


# ---------------------------------------------------------------------------------------------
# runnable steps


class _Run:
    bind: str | None = None
    yields: bool | None = (
        False  # True: a data step, whose value the call returns when it is last; None: only if not null
    )

    def run(self, rt: Runtime, env: Env) -> Any:
        raise NotImplementedError


class _ReturnSignal(Exception):
    def __init__(self, value: Any):
        self.value = value


@dataclass
class _GetRun(_Run):
    yields = True
    info: TableInfo
    query: _Query
    error: Callable[[Env], str]
    optional: bool
    bind: str | None

    def run(self, rt: Runtime, env: Env) -> Any:
        rows = self.query.fetch(rt, env, 1, 0)
        if rt.reads is not None:
            rt.reads.add((self.info.name, rows[0][self.info.pk_index] if rows else "*"))
        if not rows:
            if self.optional:
                return None
            raise ToolError(self.error(env))
        return self.info.decode(rows[0])


@dataclass
class _ListRun(_Run):
    yields = True
    info: TableInfo
    query: _Query
    limit: Compiled | None
    max_limit: int | None
    offset: Compiled | None
    bind: str | None

    def run(self, rt: Runtime, env: Env) -> Any:
        cap = -1 if self.max_limit is None else self.max_limit  # SQLite: LIMIT -1 is no limit
        limit = cap
        if self.limit is not None:
            asked = self.limit(env)
            if asked is not None:
                limit = max(0, int(asked) if cap < 0 else min(int(asked), cap))
        offset = 0
        if self.offset is not None:
            offset = max(0, int(self.offset(env) or 0))
        if rt.reads is not None:
            rt.reads.add((self.info.name, "*"))
        return [self.info.decode(r) for r in self.query.run(rt.conn, env, limit, offset)]


@dataclass
class _CountRun(_Run):
    yields = True
    query: _Query
    bind: str | None

    def run(self, rt: Runtime, env: Env) -> Any:
        if rt.reads is not None:
            rt.reads.add((self.query.info.name, "*"))
        return self.query.run(rt.conn, env)[0][0]


def _integrity_message(info: TableInfo, exc: sqlite3.IntegrityError, action: str) -> str:
    text = str(exc)
    if "UNIQUE" in text:
        column = text.rsplit(".", 1)[-1]
        return f"cannot {action} {info.name}: another row already has this {column}"
    if "FOREIGN KEY" in text:
        if action == "delete":
            return f"cannot delete from {info.name}: other records still refer to this row"
        return f"cannot {action} {info.name}: a referenced record does not exist"
    if "CHECK" in text:
        return f"cannot {action} {info.name}: a value is not allowed ({text})"
    return f"cannot {action} {info.name}: {text}"


@dataclass
class _CreateRun(_Run):
    yields = True
    info: TableInfo
    values: dict[str, Compiled]
    bind: str | None

    def run(self, rt: Runtime, env: Env) -> Any:
        info = self.info
        row: dict[str, Any] = {}
        now: str | None = None
        for name in info.columns:
            fn = self.values.get(name)
            if fn is not None:
                row[name] = fn(env)
            else:
                if now is None:
                    now = rt.now()
                row[name] = info.default(name, now)
        if row[info.pk] is None:
            row[info.pk] = rt.next_id(info)
        try:
            params = {name: info.encode(name, value) for name, value in row.items()}
        except ValueProblem as exc:
            raise ToolError(f"invalid value: {exc}") from None
        try:
            rt.conn.execute(info.insert, params)
        except sqlite3.IntegrityError as exc:
            raise ToolError(_integrity_message(info, exc, "create")) from None
        rt.changed(info.name, params[info.pk])
        stored = tuple(params[c] for c in info.columns)
        rt.cache[(info.name, params[info.pk])] = stored
        return info.decode(stored)


@dataclass(kw_only=True)
class _TargetedRun(_Run):
    """An update or delete: on the row of a key (`single`; it must exist, else `error`) or on every
    row a `where` matches."""

    yields = True
    info: TableInfo
    query: _Query
    single: bool
    error: Callable[[Env], str]
    bind: str | None

    def targets(self, rt: Runtime, env: Env) -> list[Any]:
        """The rows as stored that the step acts on."""
        rows = self.query.fetch(rt, env, 1, 0) if self.single else self.query.run(rt.conn, env)
        if self.single and not rows:
            raise ToolError(self.error(env))
        return rows


@dataclass(kw_only=True)
class _UpdateRun(_TargetedRun):
    sets: dict[str, Compiled]
    statement: str

    def run(self, rt: Runtime, env: Env) -> Any:
        info = self.info
        rows = self.targets(rt, env)
        out = []
        previous = env.get("row", _MISSING)
        try:
            for raw in rows:
                before = info.decode(raw)
                env["row"] = before
                new = {name: fn(env) for name, fn in self.sets.items()}
                try:
                    params = {name: info.encode(name, value) for name, value in new.items()}
                except ValueProblem as exc:
                    raise ToolError(f"invalid value: {exc}") from None
                params["pk"] = raw[info.pk_index]
                try:
                    rt.conn.execute(self.statement, params)
                except sqlite3.IntegrityError as exc:
                    raise ToolError(_integrity_message(info, exc, "update")) from None
                rt.changed(info.name, raw[info.pk_index])
                after = dict(before)
                after.update(info.decode_some(params, new))
                stored = tuple(params[c] if c in new else v for c, v in zip(info.columns, raw, strict=True))
                if info.pk in new:
                    rt.changed(info.name, params[info.pk])
                    rt.cache[(info.name, raw[info.pk_index])] = None
                rt.cache[(info.name, stored[info.pk_index])] = stored
                out.append(after)
        finally:
            if previous is _MISSING:
                env.pop("row", None)
            else:
                env["row"] = previous
        return out[0] if self.single else out


@dataclass(kw_only=True)
class _DeleteRun(_TargetedRun):
    def run(self, rt: Runtime, env: Env) -> Any:
        info = self.info
        rows = self.targets(rt, env)
        out = []
        for raw in rows:
            try:
                rt.conn.execute(info.delete_by_pk, {"pk": raw[info.pk_index]})
            except sqlite3.IntegrityError as exc:
                raise ToolError(_integrity_message(info, exc, "delete")) from None
            rt.changed(info.name, raw[info.pk_index])
            rt.cache[(info.name, raw[info.pk_index])] = None
            out.append(info.decode(raw))
        return out[0] if self.single else out


@dataclass
class _RequireRun(_Run):
    cond: Compiled
    error: Callable[[Env], str]

    def run(self, rt: Runtime, env: Env) -> Any:
        if not self.cond(env):
            raise ToolError(self.error(env))
        return None


@dataclass
class _LetRun(_Run):
    value: Compiled
    bind: str | None

    def run(self, rt: Runtime, env: Env) -> Any:
        return self.value(env)


@dataclass
class _ForEachRun(_Run):
    items: Compiled
    name: str
    index: str | None
    steps: list[_Run]
    bind: str | None

    def run(self, rt: Runtime, env: Env) -> Any:
        items = self.items(env)
        if items is None:
            items = []
        if not isinstance(items, list):
            raise EvalError(f"for_each: expected a list, got {items!r}")
        collected = []
        for i, item in enumerate(items):
            env[self.name] = item
            if self.index:
                env[self.index] = i
            collected.append(run_steps(self.steps, rt, env))
        return collected


@dataclass
class _WhenRun(_Run):
    """Runs the inner step only when the condition holds; binds null otherwise."""

    cond: Compiled
    inner: _Run
    bind: str | None

    def __post_init__(self) -> None:
        self.yields = None if self.inner.yields else False

    def run(self, rt: Runtime, env: Env) -> Any:
        if self.cond(env):
            return self.inner.run(rt, env)
        return None


@dataclass
class _UseRun(_Run):
    """A fragment: its own environment holding only its parameters (and the clock)."""

    params: dict[str, Compiled]
    steps: list[_Run]
    bind: str | None

    def run(self, rt: Runtime, env: Env) -> Any:
        inner: Env = {name: fn(env) for name, fn in self.params.items()}
        if "now" in env:
            inner["now"] = env["now"]
        try:
            return run_steps(self.steps, rt, inner)
        except _ReturnSignal as signal:
            return signal.value


@dataclass
class _ReturnRun(_Run):
    value: Compiled

    def run(self, rt: Runtime, env: Env) -> Any:
        raise _ReturnSignal(self.value(env))


def run_steps(steps: list[_Run], rt: Runtime, env: Env) -> Any:
    last = None
    for step in steps:
        value = step.run(rt, env)
        if step.bind:
            env[step.bind] = value
            last = value
        elif step.yields is True or (step.yields is None and value is not None):
            last = value
    return last


@dataclass
class CompiledTool:
    """A tool ready to run: its spec and its plan."""

    spec: Tool
    steps: list[_Run]
    uses_now: bool
    writes: bool
    tables: set[str] = field(default_factory=set)

    def execute(self, rt: Runtime, arguments: dict[str, Any]) -> Any:
        env: Env = {"args": arguments}
        if self.uses_now:
            env["now"] = rt.now()
        try:
            return run_steps(self.steps, rt, env)
        except _ReturnSignal as signal:
            return signal.value


# ---------------------------------------------------------------------------------------------
# compilation


class _Compiler:
    def __init__(
        self, tables: dict[str, TableInfo], tool: Tool, fragments: dict[str, Fragment] | None = None
    ):
        self.tables = tables
        self.tool = tool
        self.fragments = fragments or {}
        self.using: list[str] = []
        props = tool.input_schema.get("properties")
        self.scope = Scope(props.keys() if isinstance(props, dict) else None)
        self.uses_now = False
        self.writes = False
        self.touched: set[str] = set()
        self.indexed: set[tuple[str, str]] = set()

    def expr(self, value: Any, scope: Scope, where: str) -> Compiled:
        self._note_now(value)
        try:
            return compile_expr(value, scope)
        except ExprError as exc:
            raise CompileError(where, str(exc)) from None

    def template(self, text: str, scope: Scope, where: str) -> Callable[[Env], str]:
        if "{now" in text:
            self.uses_now = True
        try:
            return compile_template(text, scope)
        except ExprError as exc:
            raise CompileError(where, str(exc)) from None

    def _note_now(self, value: Any) -> None:
        if isinstance(value, str):
            if value == "$now" or value.startswith("$now."):
                self.uses_now = True
        elif isinstance(value, list):
            for v in value:
                self._note_now(v)
        elif isinstance(value, dict):
            for v in value.values():
                self._note_now(v)

    def table(self, name: str, where: str) -> TableInfo:
        info = self.tables.get(name)
        if info is None:
            raise CompileError(where, f"unknown table {name!r} (tables: {', '.join(sorted(self.tables))})")
        return info

    def column(self, info: TableInfo, name: str, where: str) -> str:
        if name not in info.spec.columns:
            raise CompileError(
                where, f"table {info.name!r} has no column {name!r} (columns: {', '.join(info.columns)})"
            )
        return name

    def filters(
        self, info: TableInfo, key: dict[str, Any] | None, where_: list[Filter] | None, scope: Scope, at: str
    ) -> list[_Filter]:
        out: list[_Filter] = []
        for col, value in (key or {}).items():
            self.column(info, col, f"{at}.key.{col}")
            self.indexed.add((info.name, col))
            out.append(
                _Filter(col, "eq", self.expr(value, scope, f"{at}.key.{col}"), False, _key_encoder(info, col))
            )
        for i, f in enumerate(where_ or []):
            self.column(info, f.column, f"{at}.where[{i}]")
            if f.op in ("eq", "in"):
                self.indexed.add((info.name, f.column))
            out.append(
                _Filter(
                    f.column,
                    f.op,
                    self.expr(f.value, scope, f"{at}.where[{i}].value"),
                    f.skip_if_null,
                    _key_encoder(info, f.column),
                )
            )
        return out

    def _error(self, text: str | None, default: str, scope: Scope, at: str) -> Callable[[Env], str]:
        return self.template(text if text is not None else default, scope, f"{at}.error")

    def _key_default(self, info: TableInfo, key: dict[str, Any] | None) -> str:
        if key:
            parts = ", ".join(
                f"{c} {{{_ref_text(v)}}}" if _ref_text(v) else f"{c} {v}" for c, v in key.items()
            )
            return f"No {info.name} record with {parts}."
        return f"No matching {info.name} record."

    def _use(self, step: UseStep, scope: Scope, at: str) -> _Run:
        return _use_fragment(self, step, scope, at)

    def steps(self, steps: list[Any], scope: Scope, at: str) -> list[_Run]:
        return [self.step(step, scope, f"{at}[{i}]") for i, step in enumerate(steps)]

    def step(self, step: Any, scope: Scope, at: str) -> _Run:
        run = self._step(step, scope, at)
        if step.when is not None:
            cond = self.expr(step.when, scope, f"{at}.when")
            inner_bind = run.bind
            run.bind = None
            return _WhenRun(cond, run, inner_bind)
        return run

    def _step(self, step: Any, scope: Scope, at: str) -> _Run:  # noqa: C901 - one branch per step kind
        run: _Run
        if isinstance(step, GetStep):
            info = self.table(step.table, at)
            if not step.key and not step.where:
                raise CompileError(at, "get needs `key` or `where`")
            for key in step.order_by:
                self.column(info, key.lstrip("-"), f"{at}.order_by")
            q = _Query(info, self.filters(info, step.key, step.where, scope, at), step.order_by, paged=True)
            run = _GetRun(
                info,
                q,
                self._error(step.error, self._key_default(info, step.key), scope, at),
                step.optional,
                step.bind,
            )
            self.touched.add(info.name)
        elif isinstance(step, ListStep):
            info = self.table(step.table, at)
            for key in step.order_by:
                self.column(info, key.lstrip("-"), f"{at}.order_by")
            q = _Query(info, self.filters(info, None, step.where, scope, at), step.order_by, paged=True)
            limit = self.expr(step.limit, scope, f"{at}.limit") if step.limit is not None else None
            offset = self.expr(step.offset, scope, f"{at}.offset") if step.offset is not None else None
            run = _ListRun(info, q, limit, step.max_limit, offset, step.bind)
        elif isinstance(step, CountStep):
            info = self.table(step.table, at)
            run = _CountRun(
                _Query(info, self.filters(info, None, step.where, scope, at), [], paged=False, count=True),
                step.bind,
            )
        elif isinstance(step, SumStep):
            info = self.table(step.table, at)
            self.column(info, step.column, f"{at}.column")
            kind = info.spec.columns[step.column].type
            if kind not in ("integer", "number"):
                raise CompileError(
                    f"{at}.column", f"sum needs a numeric column; {info.name}.{step.column} is {kind}"
                )
            query = _Query(
                info, self.filters(info, None, step.where, scope, at), [], paged=False, total=step.column
            )
            run = _CountRun(query, step.bind)
        elif isinstance(step, CreateStep):
            info = self.table(step.table, at)
            self.writes = True
            values = {}
            for col, value in step.values.items():
                self.column(info, col, f"{at}.values.{col}")
                values[col] = self.expr(value, scope, f"{at}.values.{col}")
            if info.pk not in values and info.spec.columns[info.pk].type not in ("string", "integer"):
                raise CompileError(at, f"{info.name}.{info.pk} cannot be generated; give it in `values`")
            for col in info.columns:
                spec = info.spec.columns[col]
                if col not in values and spec.default == "$now":
                    self.uses_now = True
            run = _CreateRun(info, values, step.bind)
        elif isinstance(step, UpdateStep):
            info = self.table(step.table, at)
            self.writes = True
            if bool(step.key) == bool(step.where):
                raise CompileError(at, "update needs exactly one of `key` or `where`")
            filters = self.filters(info, step.key, step.where, scope, at)
            inner = scope.child("row")
            sets = {}
            for col, value in step.set.items():
                self.column(info, col, f"{at}.set.{col}")
                sets[col] = self.expr(value, inner, f"{at}.set.{col}")
            t = info.sa_table
            statement = sql(
                sa.update(t)
                .where(t.c[info.pk] == sa.bindparam("pk"))
                .values({c: sa.bindparam(c) for c in sets})
            )
            single = bool(step.key)
            q = _Query(info, filters, [], paged=single)
            run = _UpdateRun(
                info=info,
                query=q,
                single=single,
                error=self._error(step.error, self._key_default(info, step.key), scope, at),
                bind=step.bind,
                sets=sets,
                statement=statement,
            )
        elif isinstance(step, DeleteStep):
            info = self.table(step.table, at)
            self.writes = True
            if bool(step.key) == bool(step.where):
                raise CompileError(at, "delete needs exactly one of `key` or `where`")
            single = bool(step.key)
            q = _Query(info, self.filters(info, step.key, step.where, scope, at), [], paged=single)
            run = _DeleteRun(
                info=info,
                query=q,
                single=single,
                error=self._error(step.error, self._key_default(info, step.key), scope, at),
                bind=step.bind,
            )
        elif isinstance(step, RequireStep):
            run = _RequireRun(
                self.expr(step.require, scope, f"{at}.require"),
                self.template(step.error, scope, f"{at}.error"),
            )
        elif isinstance(step, FailStep):
            run = _RequireRun(lambda env: False, self.template(step.fail, scope, f"{at}.fail"))
        elif isinstance(step, LetStep):
            run = _LetRun(self.expr(step.value, scope, f"{at}.value"), step.let)
        elif isinstance(step, ForEachStep):
            items = self.expr(step.for_each, scope, f"{at}.for_each")
            inner = scope.child(step.bind, step.index or "")
            body = self.steps(step.steps, inner, f"{at}.steps")
            scope.names.update(inner.names)  # names bound inside the loop stay visible after it
            run = _ForEachRun(items, step.bind, step.index, body, step.collect)
        elif isinstance(step, UseStep):
            run = self._use(step, scope, at)
        elif isinstance(step, ReturnStep):
            run = _ReturnRun(self.expr(step.result, scope, f"{at}.return"))
        else:  # pragma: no cover - the spec's discriminator admits nothing else
            raise CompileError(at, f"unknown step {step!r}")
        bind: str | None
        if isinstance(step, LetStep):
            bind = step.let
        elif isinstance(step, ForEachStep):
            bind = step.collect
        else:
            bind = getattr(step, "bind", None)
        scope.add(bind)
        return run


def _use_fragment(c: _Compiler, step: UseStep, scope: Scope, at: str) -> _Run:
    fragment = c.fragments.get(step.use)
    if fragment is None:
        known = ", ".join(sorted(c.fragments)) or "none"
        raise CompileError(f"{at}.use", f"unknown fragment {step.use!r} (fragments: {known})")
    if step.use in c.using:
        raise CompileError(
            f"{at}.use", f"fragment {step.use!r} uses itself ({' -> '.join([*c.using, step.use])})"
        )
    given, declared = set(step.with_), set(fragment.params)
    if given != declared:
        missing, extra = sorted(declared - given), sorted(given - declared)
        raise CompileError(
            f"{at}.with",
            f"fragment {step.use!r} takes {sorted(declared)}; missing {missing}, unknown {extra}",
        )
    params = {name: c.expr(value, scope, f"{at}.with.{name}") for name, value in step.with_.items()}
    inner = Scope(None, fragment.params)
    inner.names.discard("args")  # a fragment sees only its parameters
    c.using.append(step.use)
    try:
        body = c.steps(fragment.steps, inner, f"{at} -> fragments.{step.use}")
    finally:
        c.using.pop()
    return _UseRun(params, body, step.bind)


def _ref_text(value: Any) -> str | None:
    if isinstance(value, str) and value.startswith("$") and not value.startswith("$$"):
        return value[1:]
    return None


def compile_tool(
    tool: Tool, tables: dict[str, TableInfo], fragments: dict[str, Fragment] | None = None
) -> tuple[CompiledTool, set[tuple[str, str]]]:
    """Compile one tool. Raises CompileError naming the path inside the tool."""
    c = _Compiler(tables, tool, fragments)
    steps = c.steps(tool.steps, c.scope, "operation")
    if tool.kind == "read" and c.writes:
        raise CompileError("kind", "a `read` tool may not create, update or delete; declare it `kind: write`")
    return CompiledTool(tool, steps, c.uses_now, c.writes, c.touched), c.indexed
