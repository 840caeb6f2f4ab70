"""Runnable write steps: `create`, `update` and `delete` (the last two on the row of a key or on
every row a `where` matches). Each is a `simulator.plan.runsteps.Run`; a create and a one-column update by
key write their own lines into a step list's generated body (`emit`, see `simulator.plan.runsteps.compile_steps`,
whose namespace holds the names those lines use: `ToolError`, `ValueProblem`, `MISSING`,
`WRITE_ERRORS`, `STORE_ERRORS`). SQLite's refusals become the agent's errors (`_integrity_message`,
`simulator.plan.tables.bind_error`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..codegen.decoding import DECODERS
from ..codegen.emit import StepSource
from ..codegen.encoding import InsertPlan, UpdatePlan, encode_source
from ..errors import ToolError
from ..lang.expressions import Compiled, Env
from ._query import MISSING, Query, Runtime
from .runsteps import Run
from .tables import BIND_ERRORS, TableInfo, ValueProblem, bind_error


def _integrity_message(info: TableInfo, exc: sqlite3.IntegrityError, action: str) -> str:
    text = str(exc)
    if "UNIQUE" in text:  # "UNIQUE constraint failed: t.a, t.b"
        column = ", ".join(part.rsplit(".", 1)[-1] for part in text.split(": ", 1)[-1].split(", "))
        return f"cannot {action} {info.name}: another row already has this {column}"
    if "FOREIGN KEY" in text:
        if action == "delete":
            return f"cannot delete from {info.name}: other records still refer to this row"
        return f"cannot {action} {info.name}: a referenced record does not exist"
    if "CHECK" in text:
        return f"cannot {action} {info.name}: a value is not allowed ({text})"
    return f"cannot {action} {info.name}: {text}"


@dataclass
class CreateRun(Run):
    """A new row: the given values, each other column's default, a generated key when none is
    given (simulator.codegen.encoding.InsertPlan: what the general code did, planned once)."""

    yields = True
    info: TableInfo
    values: dict[str, Compiled]
    bind: str | None
    labels: dict[str, str] = field(default_factory=dict)
    _plan: InsertPlan | None = field(default=None, init=False, repr=False, compare=False)

    def run(self, rt: Runtime, env: Env) -> Any:
        return self.info.decode(self._insert(rt, env))

    def run_unread(self, rt: Runtime, env: Env) -> None:
        self._insert(rt, env)

    @property
    def plan(self) -> InsertPlan:
        plan = self._plan
        if plan is None:
            plan = self._plan = InsertPlan.of(self.info, self.values)
        return plan

    def _insert(self, rt: Runtime, env: Env) -> Any:
        """Insert the row; the row as stored."""
        plan = self.plan
        given = [fn(env) for fn in plan.values]
        if plan.key_value is not None:
            key = given[plan.key_value]
        else:
            key = rt.now() if plan.key_now else plan.key_default
        return self._store(rt, given, key)

    def emit(self, src: StepSource, keep: bool) -> str | None:
        """`run` (`run_unread` unless `keep`) written out: the values, the key and, on a table keyed by one
        column, `_store`'s first attempt; should it fail, `_attempts` makes it again (it failed
        before the row was stored, so it fails the same way) and goes on as `_store` does."""
        plan, info, me = self.plan, self.info, src.bind(self, "s")
        given, key, stored = src.temp("given"), src.temp("key"), src.temp("stored")
        src.add(f"{given} = [{', '.join(src.value(fn) for fn in plan.values)}]")
        if plan.key_value is not None:
            src.add(f"{key} = {given}[{src.integer(plan.key_value)}]")
        else:
            src.runtime = True
            src.add(f"{key} = {'now()' if plan.key_now else src.bind(plan.key_default, 'k')}")
        if info.composite:
            src.add(f"{stored} = {me}._store(rt, {given}, {key})")
        else:
            src.runtime = True
            table, unprobed = src.bind(info.name, "n"), src.temp("unprobed")
            # (`_store`'s first lines, for a table keyed by one column: no parents)
            src.add(f"{unprobed} = {key} is None" if not info.next_int_key else f"{unprobed} = False")
            src.add(
                f"if {key} is None: {key} = rt.next_id({src.bind(info, 'info')}, None, probe=not {unprobed})"
            )
            params = (
                stored
                if plan.order is None
                else f"({''.join(f'{stored}[{src.integer(i)}], ' for i in plan.order)})"
            )
            with src.block("try:"):
                src.add(f"{stored} = {src.bind(plan.row, 'row')}({given}, {key}, now)")
                src.add(f"cur.execute({src.bind(plan.statement, 'sql')}, {params})")
            with src.block("except STORE_ERRORS:"):
                src.add(f"{stored} = {me}._attempts(rt, {given}, {key}, {unprobed}, None)")
            with src.block("else:"):
                pk = src.temp("pk")
                src.add(f"{pk} = {stored}[{src.integer(info.pk_index)}]", f"changed({table}, {pk})")
                src.add(f"cache[({table}, {pk})] = {stored}")
        if not keep:
            return "None"
        return f"{src.bind(info.decode, 'dec')}({stored})"

    def _store(self, rt: Runtime, given: list[Any], key: Any) -> Any:
        """Insert the row of the `given` values (the plan's) and `key` (None: generate one); the row
        as stored."""
        info, plan = self.info, self.plan
        parents = dict(zip(plan.names, given, strict=True)) if info.composite else None
        # a generated string key is inserted without looking it up first; if anything fails, it is
        # looked up the general way (Episode.next_id) and one that existed is replaced by the free
        # one, so that keys and errors are what they always were
        unprobed = key is None and not info.next_int_key
        if key is None:
            key = rt.next_id(info, parents, probe=not unprobed)
        return self._attempts(rt, given, key, unprobed, parents)

    def _attempts(
        self, rt: Runtime, given: list[Any], key: Any, unprobed: bool, parents: dict[str, Any] | None
    ) -> Any:
        """`_store` from its first attempt to insert the row with `key`."""
        info, plan = self.info, self.plan
        while True:
            try:
                stored = plan.row(given, key, rt.now)
            except ValueProblem as exc:
                if unprobed:
                    unprobed, free = False, rt.next_id(info, parents)
                    if free != key:
                        key = free
                        continue
                raise ToolError(f"invalid value: {exc}") from None
            try:
                rt.conn.execute(
                    plan.statement, stored if plan.order is None else tuple(stored[i] for i in plan.order)
                )
            except (sqlite3.IntegrityError, *BIND_ERRORS) as exc:
                if unprobed:
                    unprobed, free = False, rt.next_id(info, parents)
                    if free != key:
                        key = free
                        continue
                if isinstance(exc, sqlite3.IntegrityError):
                    raise ToolError(_integrity_message(info, exc, "create")) from None
                raise bind_error(dict(zip(info.columns, stored, strict=True)), self.labels, exc) from None
            break
        key = info.key_of(stored)
        rt.changed(info.name, key)
        rt.cache[(info.name, key)] = stored
        return stored


@dataclass(kw_only=True)
class TargetedRun(Run):
    """An update or delete: on the row of a key (`single`; it must exist, else `error`) or on every
    row a `where` matches."""

    yields = True
    info: TableInfo
    query: Query
    single: bool
    error: Callable[[Env], str]
    bind: str | None

    def targets(self, rt: Runtime, env: Env) -> list[Any]:
        """The rows as stored that the step acts on."""
        if not self.single:
            return self.query.run(rt.conn, env)
        query = self.query
        if query.by_pk is not None:
            raw = query.row_by_key(rt, env)
            rows = [] if raw is None else [raw]
        else:
            rows = query.fetch(rt, env, 1, 0)
        if not rows:
            raise ToolError(self.error(env))
        return rows


@dataclass(kw_only=True)
class UpdateRun(TargetedRun):
    """`set` columns always; `patch` columns only when the call gave every argument they read.

    Each row: `$row` is the row before; the new values are evaluated, then encoded, in column
    order of `set` (then `patch`); one UPDATE by key (simulator.codegen.encoding.UpdatePlan)."""

    sets: dict[str, Compiled]
    plan: UpdatePlan | None  # the UPDATE of the `set` columns (None: no `set`)
    labels: dict[str, str] = field(default_factory=dict)
    patch: dict[str, tuple[Compiled, frozenset[str]]] = field(default_factory=dict)
    plan_for: Callable[[tuple[str, ...]], UpdatePlan] | None = None  # the UPDATE of these columns
    row_fields: tuple[str, ...] | None = None  # the columns of `$row` the `set` values read (None: all)

    def __post_init__(self) -> None:
        self._fns = tuple(self.sets.values())
        # the common shape, written out by `emit`: one row by its key, one `set` column, no `patch`,
        # on a table keyed by one column that the update does not set (not on the reference path:
        # the general loop, `TableInfo.generated`)
        plan = self.plan
        self._simple = self.info.generated and self.single and not self.patch and self.query.by_pk is not None
        self._simple = self._simple and plan is not None and plan.width == 1 and not plan.moves_key

    def emit(self, src: StepSource, keep: bool) -> str | None:
        """`_apply` of the one-column update of one row by its key, on a table keyed by a column it
        does not set (`_simple`), written out in `_apply`'s and `_write`'s order (see `compile_steps`)."""
        if not self._simple:
            return None
        info, plan = self.info, self.plan
        assert plan is not None
        me, table = src.bind(self, "s"), src.bind(info.name, "n")
        key = self.query.emit_key(src)
        raw, prev, before, value, encoded, pk, row = (
            src.temp(n) for n in ("raw", "prev", "before", "new", "enc", "pk", "row")
        )
        self.query.emit_row(src, key, raw)
        src.add(f"if {raw} is None: raise ToolError({src.bind(self.error, 'e')}(env))")
        src.add(f"{prev} = env.get('row', MISSING)")
        if keep or self.row_fields is None:
            src.add(f"{before} = env['row'] = {src.bind(info.decode, 'dec')}({raw})")
        else:  # `$row` as the `set` values read it: only their columns decoded
            fields = [self._row_field(src, raw, name) for name in self.row_fields]
            src.add(f"env['row'] = {{{', '.join(field for field in fields if field)}}}")
        with src.block("try:"):
            src.add(f"{value} = {src.value(self._fns[0])}")
        with src.block("finally:"):
            src.add(f"if {prev} is MISSING: env.pop('row', None)")
            src.add(f"else: env['row'] = {prev}")
        with src.block("try:"):
            encode = src.bind(plan.encoders[0], "enc")
            fast = encode_source(info, plan.columns[0], value, encode, src)
            src.add(f"{encoded} = {encode}({value})" if fast is None else f"{encoded} = {fast}")
        with src.block("except ValueProblem as exc:"):
            src.add('raise ToolError(f"invalid value: {exc}") from None')
        src.add(f"{pk} = {raw}[{src.integer(info.pk_index)}]")
        with src.block("try:"):
            src.add(f"cur.execute({src.bind(plan.statement, 'sql')}, ({encoded}, {pk}))")
        with src.block("except WRITE_ERRORS as exc:"):
            src.add(f"raise {me}._write_error({src.bind(plan, 'plan')}, [{encoded}], {pk}, exc) from None")
        src.add(f"touched({table}, {pk})")  # (`_simple`: the key stays)
        src.add(f"{row} = list({raw})", f"{row}[{src.integer(plan.positions[0])}] = {encoded}")
        src.add(f"cache[({table}, {pk})] = tuple({row})")
        if not keep:
            return "None"
        after, column, decode = src.temp("after"), plan.columns[0], plan.decoders[0]
        src.add(f"{after} = {before}.copy()")
        if decode is None:
            src.add(f"{after}[{src.bind(column, 'h')}] = {encoded}")
        else:
            src.add(
                f"{after}[{src.bind(column, 'h')}] = None if {encoded} is None else {src.bind(decode, 'd')}({encoded})"
            )
        return after

    def _row_field(self, src: StepSource, raw: str, name: str) -> str:
        """`name: value` of a dict display of the row as `info.decode` gives it ('' when the table
        has no such column: the decoded row does not have it either)."""
        if name not in self.info.columns:
            return ""
        at = self.info.columns.index(name)
        decode = DECODERS.get(self.info.kinds[at])
        if decode is None:
            name_, at_ = src.bind(name, "h"), src.integer(at)
            return f"{name_}: {raw}[{at_}]"
        name_, at_ = src.bind(name, "h"), src.integer(at)
        return f"{name_}: None if {raw}[{at_}] is None else {src.bind(decode, 'd')}({raw}[{at_}])"

    def _columns(self, env: Env) -> tuple[dict[str, Compiled], UpdatePlan | None]:
        """The columns this call sets (`set`, and the `patch` columns it gave), and their plan."""
        given = env.get("args") or {}
        sets = dict(self.sets)
        sets.update((col, fn) for col, (fn, needs) in self.patch.items() if needs.issubset(given))
        assert self.plan_for is not None
        return sets, self.plan_for(tuple(sets)) if sets else None

    def run(self, rt: Runtime, env: Env) -> Any:
        return self._apply(rt, env, True)

    def run_unread(self, rt: Runtime, env: Env) -> None:
        self._apply(rt, env, False)

    def _apply(self, rt: Runtime, env: Env, keep: bool) -> Any:
        """Update the rows; `keep`: return them after, as a read would (else None)."""
        info = self.info
        rows = self.targets(rt, env)
        if self.patch:
            sets, plan = self._columns(env)
            fns = tuple(sets.values())
        else:
            plan, fns = self.plan, self._fns
        if plan is None:  # a patch the call gave nothing for: the rows as they are
            if not keep:
                return None
            rows_now = [info.decode(raw) for raw in rows]
            return rows_now[0] if self.single else rows_now
        out: list[dict[str, Any] | None] = []
        previous = env.get("row", MISSING)
        try:
            for raw in rows:
                before = env["row"] = info.decode(raw)
                new = [fns[0](env)] if plan.width == 1 else [fn(env) for fn in fns]
                try:
                    if plan.width == 1:
                        encoded = [plan.encoders[0](new[0])]
                    else:
                        encoded = [encode(value) for encode, value in zip(plan.encoders, new, strict=True)]
                except ValueProblem as exc:
                    raise ToolError(f"invalid value: {exc}") from None
                out.append(self._write(rt, plan, raw, before, encoded, keep))
        finally:
            if previous is MISSING:
                env.pop("row", None)
            else:
                env["row"] = previous
        if not keep:
            return None
        return out[0] if self.single else out

    def _write_error(self, plan: UpdatePlan, encoded: list[Any], key: Any, exc: Exception) -> Exception:
        """The agent's error for an UPDATE SQLite refused: a constraint, or a value it could not bind."""
        if isinstance(exc, sqlite3.IntegrityError):
            return ToolError(_integrity_message(self.info, exc, "update"))
        named = dict(zip(plan.columns, encoded, strict=True))
        named.update(self.info.key_params(key))
        return bind_error(named, self.labels, exc)

    def _write(
        self, rt: Runtime, plan: UpdatePlan, raw: Any, before: dict[str, Any], encoded: list[Any], keep: bool
    ) -> dict[str, Any] | None:
        """Store one row's encoded new values; the row after, as a read would return it (`keep`)."""
        info = self.info
        key = info.key_of(raw)
        if info.composite:
            values = encoded if plan.order is None else [encoded[i] for i in plan.order]
            params: tuple[Any, ...] = (*values, *key)
        elif plan.width == 1:
            params = (encoded[0], key)
        else:
            params = (*(encoded if plan.order is None else [encoded[i] for i in plan.order]), key)
        try:
            rt.conn.execute(plan.statement, params)
        except (*BIND_ERRORS, sqlite3.IntegrityError) as exc:
            raise self._write_error(plan, encoded, key, exc) from None
        rt.changed(info.name, key)
        row = list(raw)
        after = before.copy() if keep else None
        if plan.width == 1:
            value = row[plan.positions[0]] = encoded[0]
            if after is not None:
                decode = plan.decoders[0]
                after[plan.columns[0]] = value if decode is None or value is None else decode(value)
        else:
            for name, at, decode, value in zip(
                plan.columns, plan.positions, plan.decoders, encoded, strict=True
            ):
                row[at] = value
                if after is not None:
                    after[name] = value if decode is None or value is None else decode(value)
        stored = tuple(row)
        if plan.moves_key:
            new_key = info.key_of(stored)
            if new_key != key:
                rt.changed(info.name, new_key)
                rt.cache[(info.name, key)] = None
                key = new_key
        rt.cache[(info.name, key)] = stored
        return after


@dataclass(kw_only=True)
class DeleteRun(TargetedRun):
    def run(self, rt: Runtime, env: Env) -> Any:
        info = self.info
        rows = self.targets(rt, env)
        out = []
        for raw in rows:
            key = info.key_of(raw)
            try:
                rt.conn.execute(info.delete_by_pk, info.key_params(key))
            except sqlite3.IntegrityError as exc:
                raise ToolError(_integrity_message(info, exc, "delete")) from None
            rt.changed(info.name, key)
            rt.cache[(info.name, key)] = None
            out.append(info.decode(raw))
        return out[0] if self.single else out
