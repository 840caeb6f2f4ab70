"""Runnable read steps: `get` (a row by key or filter), `list` (rows, paged) and `count` (a count
or a sum). Each is a `simulator.plan.runsteps.Run`; a `get` by key can write its own lines into a step list's
generated body (`emit`, see `simulator.plan.runsteps.compile_steps`).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..codegen.emit import StepSource
from ..errors import ToolError
from ..lang.expressions import Compiled, Env, brief
from ..lang.numbers import INT64_MAX
from ._query import Query, Runtime
from .runsteps import Run
from .tables import TableInfo


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

    def emit(self, src: StepSource, keep: bool) -> str | None:
        """`run` of a read by key (no related rows) written out (see `compile_steps`)."""
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

    def emit(self, src: StepSource, keep: bool) -> str | None:
        """`run` of a list the call gives no limit or offset, written out (see `compile_steps`)."""
        query = self.query
        if self.limit is not None or self.offset is not None or not query.emits_rows():
            return None
        src.runtime = True
        with src.block("if reads is not None:"):
            src.add(f"reads.add(({src.bind(self.info.name, 'n')}, '*'))")
            if query.related_reads:
                src.add(f"reads.update({src.bind(query.related_reads, 'rel')})")
        rows = query.emit_rows(src, -1 if self.max_limit is None else self.max_limit)
        if query.children:
            value = f"{src.bind(query, 'q')}.output(rt.conn, {rows})"
        else:
            decode, row = src.bind(query.decode, "dec"), src.temp("r")
            value = f"[{decode}({row}) for {row} in {rows}]"
        if keep:
            return value
        src.add(value)  # (its related rows are still read, as `run` reads them)
        return "None"


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
