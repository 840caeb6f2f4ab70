"""Runnable steps: what a compiled operation is made of, and how a call runs them.

Each step kind of the operation language has a runnable class here; `run_steps` runs a list of them
against an episode (the `Runtime`) and an environment of bound names. `CompiledTool.execute` is a
tool call's whole operation.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .budget import charge
from .decoding import DECODERS
from .emit import Source
from .encoding import InsertPlan, UpdatePlan, encode_source
from .errors import ToolError
from .expr import Compiled, Env, EvalError, brief
from .lang.generated import define
from .query import MISSING, Query, Runtime
from .spec import Tool
from .tables import BIND_ERRORS, INT64_MAX, TableInfo, ValueProblem, bind_error

#: a list of steps as one function of the runtime and the environment (`straight`)
Body = Callable[[Runtime, Env], Any]


class Run:
    """A runnable step. `yields`: True for a data step, whose value the call returns when it is
    the last step; None for a step that yields only a non-null value; False otherwise."""

    bind: str | None = None
    yields: bool | None = False

    def run(self, rt: Runtime, env: Env) -> Any:
        raise NotImplementedError

    def act(self, rt: Runtime, env: Env) -> None:
        """`run` where nothing reads the step's value (`straight` knows): the same effects and
        errors; a step may skip building its value."""
        self.run(rt, env)

    def emit(self, src: Source, keep: bool) -> str | None:
        """Lines of `src` doing what `run` does (`act`, unless `keep`), and the expression of its
        value; None when the step is called instead (`straight`)."""
        return None


class ReturnSignal(Exception):
    def __init__(self, value: Any):
        self.value = value


@dataclass
class GetRun(Run):
    yields = True
    info: TableInfo
    query: Query
    error: Callable[[Env], str]
    optional: bool
    bind: str | None

    def run(self, rt: Runtime, env: Env) -> Any:
        query = self.query
        if query.by_pk is not None:
            raw = query.row_by_key(rt, env)
        else:
            rows = query.fetch(rt, env, 1, 0)
            raw = rows[0] if rows else None
        if rt.reads is not None:
            rt.reads.add((self.info.name, "*" if raw is None else self.info.key_of(raw)))
            rt.reads.update(query.related_reads)
        if raw is None:
            if self.optional:
                return None
            raise ToolError(self.error(env))
        if query.children:
            return query.output(rt.conn, [raw])[0]
        return query.decode(raw)

    def emit(self, src: Source, keep: bool) -> str | None:
        """`run` of a read by key (no related rows) written out (see `straight`)."""
        query = self.query
        if query.by_pk is None or query.children:
            return None
        key, raw, value = query.emit_key(src), src.temp("raw"), src.temp("got")
        query.emit_row(src, key, raw)
        table, key_of = src.bind(self.info.name, "n"), src.bind(self.info.key_of, "key_of")
        with src.block("if reads is not None:"):
            src.add(f"reads.add(({table}, '*' if {raw} is None else {key_of}({raw})))")
            if query.related_reads:
                src.add(f"reads.update({src.bind(query.related_reads, 'rel')})")
        decode = src.bind(query.decode, "dec")
        if self.optional:
            src.add(f"{value} = None if {raw} is None else {decode}({raw})")
        else:
            src.add(f"if {raw} is None: raise ToolError({src.bind(self.error, 'e')}(env))")
            src.add(f"{value} = {decode}({raw})")
        return value


@dataclass
class ListRun(Run):
    yields = True
    info: TableInfo
    query: Query
    limit: Compiled | None
    max_limit: int | None
    offset: Compiled | None
    bind: str | None
    limit_label: str = "limit"
    offset_label: str = "offset"

    def run(self, rt: Runtime, env: Env) -> Any:
        cap = -1 if self.max_limit is None else self.max_limit  # SQLite: LIMIT -1 is no limit
        limit = cap
        if self.limit is not None:
            asked = _count(self.limit(env), self.limit_label)
            if asked is not None:
                limit = max(0, asked if cap < 0 else min(asked, cap))
        offset = 0
        if self.offset is not None:
            offset = max(0, _count(self.offset(env), self.offset_label) or 0)
        if rt.reads is not None:
            rt.reads.add((self.info.name, "*"))
            rt.reads.update(self.query.related_reads)
        return self.query.output(rt.conn, self.query.run(rt.conn, env, limit, offset))


_WHOLE = re.compile(r"\s*[+-]?[0-9]{1,30}\s*", re.ASCII)


def _count(value: Any, label: str) -> int | None:
    """A row count or position (a limit, an offset) as an int; past SQLite's range it means "all"."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and _WHOLE.fullmatch(value):
        value = int(value)  # (a numeric string was always accepted)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"{label} must be a whole number, got {brief(value)}")
    return min(value, INT64_MAX)


@dataclass
class CountRun(Run):
    yields = True
    query: Query
    bind: str | None

    def run(self, rt: Runtime, env: Env) -> Any:
        if rt.reads is not None:
            rt.reads.add((self.query.info.name, "*"))
            rt.reads.update(self.query.related_reads)
        try:
            return self.query.run(rt.conn, env)[0][0]
        except sqlite3.OperationalError as exc:
            if str(exc) != "integer overflow":  # SQLite's sum() past 2^63-1
                raise
            raise ToolError(
                f"the sum of {self.query.info.name}.{self.query.total} over these rows is out of range"
            ) from None


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
    given (simulator.encoding.InsertPlan: what the general code did, planned once)."""

    yields = True
    info: TableInfo
    values: dict[str, Compiled]
    bind: str | None
    labels: dict[str, str] = field(default_factory=dict)
    _plan: InsertPlan | None = field(default=None, init=False, repr=False, compare=False)

    def run(self, rt: Runtime, env: Env) -> Any:
        return self.info.decode(self._insert(rt, env))

    def act(self, rt: Runtime, env: Env) -> None:
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

    def emit(self, src: Source, keep: bool) -> str | None:
        """`run` (`act` unless `keep`) written out: the values, the key and, on a table keyed by one
        column, `_store`'s first attempt; should it fail, `_attempts` makes it again (it failed
        before the row was stored, so it fails the same way) and goes on as `_store` does."""
        plan, info, me = self.plan, self.info, src.bind(self, "s")
        given, key, stored = src.temp("given"), src.temp("key"), src.temp("stored")
        src.add(f"{given} = [{', '.join(src.value(fn) for fn in plan.values)}]")
        if plan.key_value is not None:
            src.add(f"{key} = {given}[{plan.key_value}]")
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
            params = stored if plan.order is None else f"({''.join(f'{stored}[{i}], ' for i in plan.order)})"
            with src.block("try:"):
                src.add(f"{stored} = {src.bind(plan.row, 'row')}({given}, {key}, now)")
                src.add(f"cur.execute({src.bind(plan.statement, 'sql')}, {params})")
            with src.block("except STORE_ERRORS:"):
                src.add(f"{stored} = {me}._attempts(rt, {given}, {key}, {unprobed}, None)")
            with src.block("else:"):
                pk = src.temp("pk")
                src.add(f"{pk} = {stored}[{info.pk_index}]", f"changed({table}, {pk})")
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
    order of `set` (then `patch`); one UPDATE by key (simulator.encoding.UpdatePlan)."""

    sets: dict[str, Compiled]
    plan: UpdatePlan | None  # the UPDATE of the `set` columns (None: no `set`)
    labels: dict[str, str] = field(default_factory=dict)
    patch: dict[str, tuple[Compiled, frozenset[str]]] = field(default_factory=dict)
    plan_for: Callable[[tuple[str, ...]], UpdatePlan] | None = None  # the UPDATE of these columns
    row_fields: tuple[str, ...] | None = None  # the columns of `$row` the `set` values read (None: all)

    def __post_init__(self) -> None:
        self._fns = tuple(self.sets.values())
        # the common shape, written out in `_apply`: one row by its key, one `set` column, no `patch`
        plan = self.plan
        self._one = self.single and not self.patch and plan is not None and plan.width == 1
        self._one = self._one and self.query.by_pk is not None
        # ... on a table keyed by one column that the update does not set: its write written out too
        self._simple = self._one and not self.info.composite and plan is not None and not plan.moves_key

    def emit(self, src: Source, keep: bool) -> str | None:
        """`_apply` of the one-column update of one row by its key, on a table keyed by a column it
        does not set (`_simple`), written out in `_apply`'s order (see `straight`)."""
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
            fast = encode_source(info, plan.columns[0], value, encode)
            src.add(f"{encoded} = {encode}({value})" if fast is None else f"{encoded} = {fast}")
        with src.block("except ValueProblem as exc:"):
            src.add('raise ToolError(f"invalid value: {exc}") from None')
        src.add(f"{pk} = {raw}[{info.pk_index}]")
        with src.block("try:"):
            src.add(f"cur.execute({src.bind(plan.statement, 'sql')}, ({encoded}, {pk}))")
        with src.block("except WRITE_ERRORS as exc:"):
            src.add(f"raise {me}._write_error({src.bind(plan, 'plan')}, [{encoded}], {pk}, exc) from None")
        src.add(f"touched({table}, {pk})")  # (`_simple`: the key stays)
        src.add(f"{row} = list({raw})", f"{row}[{plan.positions[0]}] = {encoded}")
        src.add(f"cache[({table}, {pk})] = tuple({row})")
        if not keep:
            return "None"
        after, column, decode = src.temp("after"), plan.columns[0], plan.decoders[0]
        src.add(f"{after} = {before}.copy()")
        if decode is None:
            src.add(f"{after}[{column!r}] = {encoded}")
        else:
            src.add(
                f"{after}[{column!r}] = None if {encoded} is None else {src.bind(decode, 'd')}({encoded})"
            )
        return after

    def _row_field(self, src: Source, raw: str, name: str) -> str:
        """`name: value` of a dict display of the row as `info.decode` gives it ('' when the table
        has no such column: the decoded row does not have it either)."""
        if name not in self.info.columns:
            return ""
        at = self.info.columns.index(name)
        decode = DECODERS.get(self.info.kinds[at])
        if decode is None:
            return f"{name!r}: {raw}[{at}]"
        return f"{name!r}: None if {raw}[{at}] is None else {src.bind(decode, 'd')}({raw}[{at}])"

    def _columns(self, env: Env) -> tuple[dict[str, Compiled], UpdatePlan | None]:
        """The columns this call sets (`set`, and the `patch` columns it gave), and their plan."""
        given = env.get("args") or {}
        sets = dict(self.sets)
        sets.update((col, fn) for col, (fn, needs) in self.patch.items() if needs.issubset(given))
        assert self.plan_for is not None
        return sets, self.plan_for(tuple(sets)) if sets else None

    def run(self, rt: Runtime, env: Env) -> Any:
        return self._apply(rt, env, True)

    def act(self, rt: Runtime, env: Env) -> None:
        self._apply(rt, env, False)

    def _apply(self, rt: Runtime, env: Env, keep: bool) -> Any:
        """Update the rows; `keep`: return them after, as a read would (else None)."""
        info = self.info
        if self._one:
            raw = self.query.row_by_key(rt, env)
            if raw is None:
                raise ToolError(self.error(env))
            previous = env.get("row", MISSING)
            before = env["row"] = info.decode(raw)
            try:
                value = self._fns[0](env)
            finally:
                if previous is MISSING:
                    env.pop("row", None)
                else:
                    env["row"] = previous
            plan = self.plan
            assert plan is not None
            try:
                encoded = plan.encoders[0](value)
            except ValueProblem as exc:
                raise ToolError(f"invalid value: {exc}") from None
            if not self._simple:
                return self._write(rt, plan, raw, before, [encoded], keep)
            key = info.key_of(raw)  # (what `_write` does for this shape, in its order)
            try:
                rt.conn.execute(plan.statement, (encoded, key))
            except (*BIND_ERRORS, sqlite3.IntegrityError) as exc:
                raise self._write_error(plan, [encoded], key, exc) from None
            rt.changed(info.name, key)
            row = list(raw)
            row[plan.positions[0]] = encoded
            rt.cache[(info.name, key)] = tuple(row)
            if not keep:
                return None
            after = before.copy()
            decode = plan.decoders[0]
            after[plan.columns[0]] = encoded if decode is None or encoded is None else decode(encoded)
            return after
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


@dataclass
class RequireRun(Run):
    cond: Compiled
    error: Callable[[Env], str]

    def run(self, rt: Runtime, env: Env) -> Any:
        if not self.cond(env):
            raise ToolError(self.error(env))
        return None


@dataclass
class LetRun(Run):
    value: Compiled
    bind: str | None

    def run(self, rt: Runtime, env: Env) -> Any:
        return self.value(env)


@dataclass
class ForEachRun(Run):
    items: Compiled
    name: str
    index: str | None
    steps: list[Run]
    bind: str | None
    _body: Body | None = field(default=None, init=False, repr=False, compare=False)

    def run(self, rt: Runtime, env: Env) -> Any:
        items = self.items(env)
        if items is None:
            items = []
        if not isinstance(items, list):
            raise EvalError(f"for_each: expected a list, got {brief(items)}")
        charge(len(items))
        body = self._body
        if body is None:
            body = self._body = straight(self.steps)
        collected = []
        name, index = self.name, self.index
        for i, item in enumerate(items):
            env[name] = item
            if index:
                env[index] = i
            collected.append(body(rt, env))
        return collected

    def emit(self, src: Source, keep: bool) -> str | None:
        """`run` written out, its body's steps inside the loop (`write_steps`); the list of their
        values is built only when read (`keep`)."""
        items, item, at, last, collected = (src.temp(n) for n in ("items", "item", "i", "last", "collected"))
        src.add(f"{items} = {src.value(self.items)}", f"if {items} is None: {items} = []")
        src.add(
            f"if not isinstance({items}, list): raise EvalError('for_each: expected a list, got ' + brief({items}))"
        )
        src.add(f"charge(len({items}))")
        if keep:
            src.add(f"{collected} = []")
        with src.block(f"for {at}, {item} in enumerate({items}):"):
            src.add(f"env[{self.name!r}] = {item}")
            if self.index:
                src.add(f"env[{self.index!r}] = {at}")
            src.add(f"{last} = None")
            write_steps(src, self.steps, last, emit=True)
            if keep:
                src.add(f"{collected}.append({last})")
        return collected if keep else "None"


@dataclass
class WhenRun(Run):
    """Runs the inner step only when the condition holds; binds null otherwise."""

    cond: Compiled
    inner: Run
    bind: str | None

    def __post_init__(self) -> None:
        self.yields = None if self.inner.yields else False

    def run(self, rt: Runtime, env: Env) -> Any:
        if self.cond(env):
            return self.inner.run(rt, env)
        return None

    def act(self, rt: Runtime, env: Env) -> None:
        if self.cond(env):
            self.inner.act(rt, env)


@dataclass
class UseRun(Run):
    """A fragment: its own environment holding only its parameters (and the clock)."""

    params: dict[str, Compiled]
    steps: list[Run]
    bind: str | None
    _body: Body | None = field(default=None, init=False, repr=False, compare=False)

    def run(self, rt: Runtime, env: Env) -> Any:
        inner: Env = {name: fn(env) for name, fn in self.params.items()}
        if "now" in env:
            inner["now"] = env["now"]
        body = self._body
        if body is None:
            body = self._body = straight(self.steps, whole=True)
        return body(rt, inner)


@dataclass
class ReturnRun(Run):
    value: Compiled

    def run(self, rt: Runtime, env: Env) -> Any:
        raise ReturnSignal(self.value(env))


def straight(steps: list[Run], whole: bool = False, emit: bool = True) -> Body:
    """`run_steps` of this list (`run_body` when `whole`) as one generated function: each step's
    work, its binding and whether its value is the last one, written out in order (no loop, no
    per-step checks of `bind` and `yields`). A `let`, a `require` and a step that can `emit` its
    own lines (simulator.emit) are written out; any other step is called (`run`, or `act` when
    nothing reads its value). Made on a list's first run, after compilation has set every step.
    `emit=False`: every step but `let` and `require` called (what tests hold the lines to)."""
    src = Source()
    ends_in_return = whole and bool(steps) and type(steps[-1]) is ReturnRun
    write_steps(src, steps[:-1] if ends_in_return else steps, "last", emit, ends_in_return)
    if ends_in_return:
        ret = steps[-1]
        assert isinstance(ret, ReturnRun)
        src.add(f"return {src.value(ret.value)}")
    else:
        src.add("return last")
    setup = "        cur, cache, reads, now = rt.cursor, rt.cache, rt.reads, rt.now\n"
    setup += "        changed, touched = rt.changed, rt.touched\n"
    if whole:  # a `return` inside a loop or a `when` ends the run
        text = f"        try:\n{src.text(3)}        except ReturnSignal as signal:\n            return signal.value\n"
    else:
        text = src.text(2)
    if not src.runtime:
        setup = ""
    names = ", ".join(src.bound)
    source = f"def make({names}):\n    def run(rt, env):\n        last = None\n{setup}{text}    return run\n"
    namespace: dict[str, Any] = {
        "ReturnSignal": ReturnSignal,
        "ToolError": ToolError,
        "ValueProblem": ValueProblem,
        "MISSING": MISSING,
        "BIND_ERRORS": BIND_ERRORS,
        "WRITE_ERRORS": (*BIND_ERRORS, sqlite3.IntegrityError),
        "STORE_ERRORS": (ValueProblem, *BIND_ERRORS, sqlite3.IntegrityError),
        "EvalError": EvalError,
        "brief": brief,
        "charge": charge,
    }
    run: Body = define(source, "<steps>", namespace, "make")(**src.bound)
    return run


def write_steps(src: Source, running: list[Run], last: str, emit: bool, ends_in_return: bool = False) -> None:
    """The lines of `straight` for `running` (its steps but a final `return`), keeping the last
    value in local `last` (`ends_in_return`: a `return` follows, so no value of these is the last)."""
    for i, step in enumerate(running):
        kind = type(step)
        if kind is RequireRun and not step.bind:
            assert isinstance(step, RequireRun)
            src.add(f"if not {src.value(step.cond)}: raise ToolError({src.bind(step.error, 'e')}(env))")
            continue
        # a value nothing reads: not bound, and a later step's value (or the `return`) is the last
        # (`act` is Run's; a step of another class only has to `run`; Run's own `act` is `run`)
        unread = (
            isinstance(step, Run)
            and not step.bind
            and (ends_in_return or any(later.bind or later.yields is True for later in running[i + 1 :]))
        )
        call: str | None = None
        if kind is LetRun:
            assert isinstance(step, LetRun)
            call = src.value(step.value)
        elif emit and isinstance(step, Run):
            call = step.emit(src, not unread)
            if call is not None and unread:
                continue
        if call is None:
            method = step.act if unread and kind.act is not Run.act else step.run
            call = f"{src.bind(method, 'r')}(rt, env)"
        if unread:
            src.add(call)
        elif step.bind:
            src.add(f"{last} = env[{step.bind!r}] = {call}")
        elif step.yields is True:
            src.add(f"{last} = {call}")
        elif step.yields is None:
            src.add(f"value = {call}", f"if value is not None: {last} = value")
        else:
            src.add(call)


def run_steps(steps: list[Run], rt: Runtime, env: Env) -> Any:
    last = None
    for step in steps:
        value = step.run(rt, env)
        if step.bind:
            env[step.bind] = value
            last = value
        elif step.yields is True or (step.yields is None and value is not None):
            last = value
    return last


def run_body(steps: list[Run], rt: Runtime, env: Env) -> Any:
    """The steps of an operation or a fragment, run as a whole: the value of a `return`, else of
    the last data step. A `return` that is the last step is evaluated in place; one inside a loop
    or a `when` ends the run with a `ReturnSignal`."""
    try:
        last = steps[-1] if steps else None
        if type(last) is ReturnRun:
            run_steps(steps[:-1], rt, env)
            return last.value(env)
        return run_steps(steps, rt, env)
    except ReturnSignal as signal:
        return signal.value


@dataclass(frozen=True)
class Analysis:
    """What a tool's operation does, derived from its step tree (fragments and loops included)."""

    tables_read: frozenset[str] = frozenset()
    tables_written: frozenset[str] = frozenset()
    destructive: bool = False  # it can update or delete rows
    uses_now: bool = False
    arguments_read: frozenset[str] = frozenset()


@dataclass
class CompiledTool:
    """A tool ready to run: its spec, its plan, and the analyses of its step tree."""

    spec: Tool
    steps: list[Run]
    uses_now: bool
    writes: bool
    analysis: Analysis = field(default_factory=Analysis)
    _body: Body | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def of(cls, spec: Tool, steps: list[Run], analysis: Analysis) -> CompiledTool:
        return cls(spec, steps, analysis.uses_now, bool(analysis.tables_written), analysis)

    @property
    def tables_read(self) -> frozenset[str]:
        return self.analysis.tables_read

    @property
    def tables_written(self) -> frozenset[str]:
        return self.analysis.tables_written

    @property
    def destructive(self) -> bool:
        """Whether a call can update or delete rows (the MCP `destructiveHint`)."""
        return self.analysis.destructive

    @property
    def arguments_read(self) -> frozenset[str]:
        return self.analysis.arguments_read

    def execute(self, rt: Runtime, arguments: dict[str, Any]) -> Any:
        env: Env = {"args": arguments}
        if self.uses_now:
            env["now"] = rt.now()
        body = self._body
        if body is None:
            body = self._body = straight(self.steps, whole=True)
        return body(rt, env)
