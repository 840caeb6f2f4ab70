"""The tool compiler: an operation (a list of steps) -> a runnable plan of compiled statements.

Compilation happens once, when the domain loads. Every SQL statement is built with SQLAlchemy
Core and compiled to SQLite text with named parameters; argument values only ever travel as
bound parameters. Filters whose value may be null (optional arguments) compile to one statement
per combination of present filters, built on first use and cached (`_query.py`); the runnable
steps are in `runsteps.py`, `readsteps.py` and `writesteps.py`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..codegen.encoding import UpdatePlan
from ..format.spec import (
    CountStep,
    CreateStep,
    DeleteStep,
    FailStep,
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
from ..lang import (
    Compiled,
    ExprError,
    Scope,
    arguments_read,
    fields_read,
    parse,
)
from ..lang.expressions import argument_name
from ._compilation import (
    COMPILERS,
    CompileError,
    Compiler,
    broken,
    compiles,
    label,
    order_by_columns,
)
from ._query import Query
from .readsteps import CountRun, GetRun, ListRun
from .runsteps import (
    CompiledTool,
    ForEachRun,
    LetRun,
    RequireRun,
    ReturnRun,
    Run,
    UseRun,
)
from .tables import TableInfo
from .writesteps import CreateRun, DeleteRun, UpdateRun

__all__ = ["COMPILERS", "CompileError", "compile_tool", "compiles"]

# ---------------------------------------------------------------------------------------------
# one compile function per step kind (`simulator.format.operations.STEP_KINDS` lists the kinds)


@compiles("get")
def _get(c: Compiler, step: GetStep, scope: Scope, at: str) -> Run:
    info = c.table(step.table, at)
    if not step.key and not step.where:
        raise CompileError(at, "get needs `key` or `where`")
    order_by_columns(c, info, step.order_by, at)
    filters = c.filters(info, step.key, step.where, scope, at, step.internal)
    q = Query(info, filters, step.order_by, paged=True, **c.joins(info, step.join, at))
    error = c._error(step.error, c._key_default(info, step.key), scope, at)
    return GetRun(info, q, error, step.optional, step.bind)


@compiles("list")
def _list(c: Compiler, step: ListStep, scope: Scope, at: str) -> Run:
    info = c.table(step.table, at)
    order_by_columns(c, info, step.order_by, at)
    filters = c.filters(info, None, step.where, scope, at, step.internal)
    q = Query(info, filters, step.order_by, paged=True, **c.joins(info, step.join, at))
    limit = c.expr(step.limit, scope, f"{at}.limit") if step.limit is not None else None
    offset = c.expr(step.offset, scope, f"{at}.offset") if step.offset is not None else None
    uncapped = step.internal and "max_limit" not in step.model_fields_set
    return ListRun(
        info,
        q,
        limit,
        None if uncapped else step.max_limit,
        offset,
        step.bind,
        argument_name(step.limit) or "limit",
        argument_name(step.offset) or "offset",
    )


@compiles("count")
def _count(c: Compiler, step: CountStep, scope: Scope, at: str) -> Run:
    info = c.table(step.table, at)
    filters = c.filters(info, None, step.where, scope, at, step.internal)
    return CountRun(Query(info, filters, [], paged=False, count=True), step.bind)


@compiles("sum")
def _sum(c: Compiler, step: SumStep, scope: Scope, at: str) -> Run:
    info = c.table(step.table, at)
    c.column(info, step.column, f"{at}.column")
    kind = info.spec.columns[step.column].type
    if kind not in ("integer", "number"):
        raise CompileError(f"{at}.column", f"sum needs a numeric column; {info.name}.{step.column} is {kind}")
    filters = c.filters(info, None, step.where, scope, at, step.internal)
    return CountRun(Query(info, filters, [], paged=False, total=step.column), step.bind)


@compiles("create")
def _create(c: Compiler, step: CreateStep, scope: Scope, at: str) -> Run:
    info = c.table(step.table, at)
    values = {}
    for col, value in step.values.items():
        with c.noting():
            c.column(info, col, f"{at}.values.{col}")
            values[col] = c.expr(value, scope, f"{at}.values.{col}")
    if info.pk not in values and info.spec.columns[info.pk].type not in ("string", "integer"):
        raise CompileError(at, f"{info.name}.{info.pk} cannot be generated; give it in `values`")
    for col in info.key[:-1]:
        if col not in values:
            raise CompileError(
                at, f"{info.name}.{col} is part of the key {list(info.key)}; give it in `values`"
            )
    if any(col not in values and info.spec.columns[col].default == "$now" for col in info.columns):
        c.uses_now = True
    labels = {col: label(value, info, col) for col, value in step.values.items()}
    return CreateRun(info, values, step.bind, labels)


def _targets(
    c: Compiler, step: UpdateStep | DeleteStep, info: TableInfo, scope: Scope, at: str
) -> dict[str, Any]:
    """The rows an update or delete acts on: one by `key` (missing: `error`), or every row `where` matches."""
    if bool(step.key) == bool(step.where):
        raise CompileError(at, f"{step.kind} needs exactly one of `key` or `where`")
    filters = c.filters(info, step.key, step.where, scope, at, step.internal)
    return {
        "info": info,
        "query": Query(info, filters, [], paged=bool(step.key)),
        "single": bool(step.key),
        "error": c._error(step.error, c._key_default(info, step.key), scope, at),
        "bind": step.bind,
    }


@compiles("update")
def _update(c: Compiler, step: UpdateStep, scope: Scope, at: str) -> Run:
    info = c.table(step.table, at)
    targets = _targets(c, step, info, scope, at)
    inner = scope.child("row")
    sets = {}
    for col, value in step.set.items():
        with c.noting():
            c.column(info, col, f"{at}.set.{col}")
            sets[col] = c.expr(value, inner, f"{at}.set.{col}")
    patch = {}
    for col, value in step.patch.items():
        with c.noting():
            patch[col] = _patch_entry(c, info, col, value, inner, f"{at}.patch.{col}", step.set)
    if not step.set and not step.patch:
        c.problems.append(CompileError(at, "update needs `set` or `patch` (the columns it changes)"))
    plan_for = _update_plans(info)
    row_fields: set[str] | None = set()  # the columns of `$row` the `set` values read (None: all)
    for value in step.set.values():
        try:
            found = fields_read(parse(value), "row")
        except ExprError:
            found = None
        row_fields = None if found is None or row_fields is None else row_fields | found
    return UpdateRun(
        **targets,
        sets=sets,
        row_fields=None if row_fields is None else tuple(sorted(row_fields)),
        plan=plan_for(tuple(sets)) if sets else None,
        labels={col: label(value, info, col) for col, value in {**step.set, **step.patch}.items()},
        patch=patch,
        plan_for=plan_for,
    )


def _patch_entry(
    c: Compiler, info: TableInfo, col: str, value: Any, scope: Scope, at: str, sets: dict[str, Any]
) -> tuple[Compiled, frozenset[str]]:
    """A `patch` column: its value, and the arguments the call must give for it to be set."""
    c.column(info, col, at)
    if col in sets:
        raise CompileError(at, f"{col} is in both `set` and `patch`; give it in one")
    fn = c.expr(value, scope, at)
    try:
        needs = frozenset(arguments_read(parse(value)))
    except ExprError:
        needs = frozenset()  # (the expression's own problem is already noted)
    if not needs and fn is not broken:
        raise CompileError(
            at,
            "a `patch` value must read a tool argument ($args.NAME): it is set only when the call gives it; use `set`",
        )
    return fn, needs


#: distinct column sets whose UPDATE is kept per table: a tool patching n columns has 2^n subsets,
#: and the agent chooses which one each call gives, so the cache is bounded (beyond it, compiled again)
UPDATE_PLANS_KEPT = 256


def _update_plans(info: TableInfo) -> Callable[[tuple[str, ...]], UpdatePlan]:
    """`UPDATE table SET these columns WHERE key` (simulator.codegen.encoding.UpdatePlan), built once per set
    of columns (the most recent `UPDATE_PLANS_KEPT` sets are kept; `.cache_info()` says how many)."""

    @functools.lru_cache(maxsize=UPDATE_PLANS_KEPT)
    def plan(columns: tuple[str, ...]) -> UpdatePlan:
        return UpdatePlan.of(info, columns)

    return plan


@compiles("delete")
def _delete(c: Compiler, step: DeleteStep, scope: Scope, at: str) -> Run:
    return DeleteRun(**_targets(c, step, c.table(step.table, at), scope, at))


@compiles("require")
def _require(c: Compiler, step: RequireStep, scope: Scope, at: str) -> Run:
    return RequireRun(
        c.expr(step.require, scope, f"{at}.require"), c.template(step.error, scope, f"{at}.error")
    )


@compiles("fail")
def _fail(c: Compiler, step: FailStep, scope: Scope, at: str) -> Run:
    return RequireRun(lambda env: False, c.template(step.fail, scope, f"{at}.fail"))


@compiles("let")
def _let(c: Compiler, step: LetStep, scope: Scope, at: str) -> Run:
    return LetRun(c.expr(step.value, scope, f"{at}.value"), step.let)


@compiles("for_each")
def _for_each(c: Compiler, step: ForEachStep, scope: Scope, at: str) -> Run:
    items = c.expr(step.for_each, scope, f"{at}.for_each")
    inner = scope.child(step.bind, step.index or "")
    body = c.steps(step.steps, inner, f"{at}.steps")
    scope.names.update(inner.names)  # names bound inside the loop stay visible after it
    return ForEachRun(items, step.bind, step.index, body, step.collect)


@compiles("return")
def _return(c: Compiler, step: ReturnStep, scope: Scope, at: str) -> Run:
    return ReturnRun(c.expr(step.result, scope, f"{at}.return"))


@compiles("use")
def _use_fragment(c: Compiler, step: UseStep, scope: Scope, at: str) -> Run:
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
    inner = Scope(None, fragment.params, scope.generated)
    inner.names.discard("args")  # a fragment sees only its parameters
    c.using.append(step.use)
    try:
        body = c.steps(fragment.steps, inner, f"{at} -> fragments.{step.use}")
    finally:
        c.using.pop()
    return UseRun(params, body, step.bind)


def compile_tool(
    tool: Tool,
    tables: dict[str, TableInfo],
    fragments: dict[str, Fragment] | None = None,
    generated: bool = True,
) -> tuple[CompiledTool, set[tuple[str, str]]]:
    """Compile one tool. Raises CompileError naming the path inside the tool. Not `generated`:
    the reference path, no generated function (plain closures, `CompiledTool.interpret`)."""
    c = Compiler(tables, tool, fragments, generated)
    steps = c.steps(tool.steps, c.scope, "operation")
    if tool.kind == "read" and c.written:
        c.problems.append(
            CompileError("kind", "a `read` tool may not create, update or delete; declare it `kind: write`")
        )
    if c.problems:
        first, *others = c.problems
        raise CompileError(first.where, first.message, others)
    compiled = CompiledTool.of(tool, steps, c.analysis())
    if not generated:
        compiled.interpret()
    return compiled, c.indexed
