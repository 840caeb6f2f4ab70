"""The tool compiler: an operation (a list of steps) -> a runnable plan of compiled statements.

Compilation happens once, when the domain loads. Every SQL statement is built with SQLAlchemy
Core and compiled to SQLite text with named parameters; argument values only ever travel as
bound parameters. Filters whose value may be null (optional arguments) compile to one statement
per combination of present filters, built on first use and cached (`query.py`); the runnable
steps are in `steps.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from .expr import argument_name
from .lang import (
    Compiled,
    Env,
    ExprError,
    Node,
    Ref,
    Scope,
    arguments_read,
    compile_node,
    compile_template_node,
    parse,
    parse_template,
    uses_now,
)
from .lint import expressions
from .query import Children, CompiledFilter, Hop, Join, Query, key_encoder
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
    RelatedRows,
    RequireStep,
    ReturnStep,
    StepModel,
    SumStep,
    Tool,
    UpdateStep,
    UseStep,
)
from .steps import (
    Analysis,
    CompiledTool,
    CountRun,
    CreateRun,
    DeleteRun,
    ForEachRun,
    GetRun,
    LetRun,
    ListRun,
    RequireRun,
    ReturnRun,
    Run,
    UpdateRun,
    UseRun,
    WhenRun,
)
from .tables import TableInfo, sql


class CompileError(Exception):
    """A problem in one tool's operation; `where` is the path inside the tool. `all` is every
    problem compilation found in the tool (this one first): each step is compiled, and each
    expression checked, even after an earlier one failed."""

    def __init__(self, where: str, message: str, others: list[CompileError] | None = None):
        super().__init__(message)
        self.where = where
        self.message = message
        self.all: list[CompileError] = [self, *(others or [])]


def _broken(env: Env) -> Any:  # stands in for an expression that did not compile (the tool never runs)
    return None


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
        self.read: set[str] = set()
        self.written: set[str] = set()
        self.destructive = False
        self.arguments: set[str] = set()
        self.indexed: set[tuple[str, str]] = set()
        self.problems: list[CompileError] = []  # every problem found; compilation goes on past each

    def expr(self, value: Any, scope: Scope, where: str) -> Compiled:
        try:
            node = parse(value)
            self._note(node)
            return compile_node(node, scope)
        except ExprError as exc:  # at its place inside the expression (`set.total.add[1]`)
            self.problems.append(CompileError(f"{where}.{exc.path}" if exc.path else where, exc.message))
            return _broken

    def template(self, text: str, scope: Scope, where: str) -> Callable[[Env], str]:
        try:
            node = parse_template(text)
            self._note(node)
            return compile_template_node(node, scope)
        except ExprError as exc:
            self.problems.append(CompileError(where, str(exc)))
            return _broken

    def _note(self, node: Node) -> None:
        """The tool's analyses, from each expression's tree: the clock, the arguments read."""
        if uses_now(node):
            self.uses_now = True
        self.arguments |= arguments_read(node)

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
        self,
        info: TableInfo,
        key: dict[str, Any] | None,
        where_: list[Filter] | None,
        scope: Scope,
        at: str,
        internal: bool = False,
    ) -> list[CompiledFilter]:
        """A step's `key` and `where` as compiled filters. In an `internal` step a filter is never
        skipped when its value is null (unless it says `skip_if_null: true`)."""
        out: list[CompiledFilter] = []
        for col, value in (key or {}).items():
            with self.noting():  # each filter checked, even after one fails
                self.column(info, col, f"{at}.key.{col}")
                self.indexed.add((info.name, col))
                out.append(
                    CompiledFilter(
                        col,
                        "eq",
                        self.expr(value, scope, f"{at}.key.{col}"),
                        False,
                        key_encoder(info, col),
                        _label(value, info, col),
                    )
                )
        for i, f in enumerate(where_ or []):
            with self.noting():  # each filter checked, even after one fails
                target, column, via = self.related(info, f.column, f"{at}.where[{i}]")
                if "value" not in f.model_fields_set:
                    raise CompileError(
                        f"{at}.where[{i}]", "a filter needs a `value` (write `value: null` to match null)"
                    )
                op = f.predicate
                if op in ("eq", "in"):
                    self.indexed.add((target.name, column))
                literal_null = f.value is None
                if literal_null and op not in ("eq", "ieq", "ne"):
                    raise CompileError(
                        f"{at}.where[{i}].value",
                        f"`{f.op}` with a literal null matches nothing; "
                        "use `op: eq` (IS NULL) or `op: ne` (IS NOT NULL) to test for null",
                    )
                skip = f.skip_if_null if (not internal or "skip_if_null" in f.model_fields_set) else False
                out.append(
                    CompiledFilter(
                        column,
                        op,
                        self.expr(f.value, scope, f"{at}.where[{i}].value"),
                        skip,
                        key_encoder(target, column),
                        _label(f.value, target, column),
                        literal_null,
                        via,
                    )
                )
        return out

    @contextmanager
    def noting(self) -> Iterator[None]:
        """Check one part of a step: a problem is noted, and the caller goes on with the next part."""
        try:
            yield
        except CompileError as exc:
            self.problems.append(exc)

    def related(self, info: TableInfo, path: str, where: str) -> tuple[TableInfo, str, tuple[Hop, ...]]:
        """`col` of this table, or `fk.col` (`fk.fk2.col`...) of the rows foreign keys refer to:
        the table and column finally compared, and the hops that lead there."""
        if path in info.spec.columns or "." not in path:
            return info, self.column(info, path, where), ()
        *links, last = path.split(".")
        here, hops = self.follow(info, path, links, where, "rel")
        return here, self.column(here, last, where), hops

    def follow(
        self, info: TableInfo, path: str, links: list[str], where: str, alias: str
    ) -> tuple[TableInfo, tuple[Hop, ...]]:
        """Follow foreign-key columns from `info`: the table reached, and the hops (aliased `alias_N`)."""
        hops: list[Hop] = []
        here = info
        for link in links:
            self.column(here, link, where)
            ref = here.spec.columns[link].references
            if ref is None:
                raise CompileError(
                    where,
                    f"{path!r}: {here.name}.{link} is not a foreign key (no `references`), so it cannot be followed",
                )
            table, key = ref.split(".")
            here = self.table(table, where)
            self.read.add(here.name)
            hops.append(Hop(link, here.sa_table.alias(f"{alias}_{len(hops)}"), key))
        return here, tuple(hops)

    def joins(self, info: TableInfo, join: dict[str, str | RelatedRows], at: str) -> dict[str, Any]:
        """`join: {NAME: fk}`: each row gets NAME, the row its foreign key (or key path) refers to;
        `join: {NAME: {rows, by}}`: the rows of another table that refer to it. Query arguments."""
        joins: list[Join] = []
        children: list[Children] = []
        for i, (name, how) in enumerate(join.items()):
            where = f"{at}.join.{name}"
            with self.noting():
                if name in info.spec.columns:
                    raise CompileError(
                        where, f"{name!r} is a column of {info.name}; name the joined row otherwise"
                    )
                if isinstance(how, str):
                    target, hops = self.follow(info, how, how.split("."), where, f"join{i}")
                    joins.append(Join(name, target, hops))
                else:
                    children.append(self.children(info, name, how, where))
        return {"joins": joins, "children": children}

    def children(self, info: TableInfo, name: str, how: RelatedRows, where: str) -> Children:
        """`{rows: TABLE, by: COLUMN}`: TABLE's rows whose COLUMN (a foreign key) refers to `info`."""
        child = self.table(how.rows, f"{where}.rows")
        self.column(child, how.by, f"{where}.by")
        _order_by(self, child, how.order_by, where)
        ref = child.spec.columns[how.by].references or ""
        table, _, column = ref.partition(".")
        if table != info.name:
            raise CompileError(
                f"{where}.by",
                f"{child.name}.{how.by} does not refer to {info.name} "
                f"({'it refers to ' + ref if ref else 'it has no `references`'})",
            )
        self.read.add(child.name)
        self.indexed.add((child.name, how.by))
        return Children.of(name, info, child, how.by, column, how.order_by)

    def _error(self, text: str | None, default: str, scope: Scope, at: str) -> Callable[[Env], str]:
        found = len(self.problems)
        message = self.template(text if text is not None else default, scope, f"{at}.error")
        if text is None:  # the default names the key's references: a bad one is the key's problem
            del self.problems[found:]
        return message

    def _key_default(self, info: TableInfo, key: dict[str, Any] | None) -> str:
        if key:
            parts = ", ".join(
                f"{c} {{{ref}}}" if (ref := _ref_text(v)) else f"{c} {v}" for c, v in key.items()
            )
            return f"No {info.name} record with {parts}."
        return f"No matching {info.name} record."

    def steps(self, steps: list[Any], scope: Scope, at: str) -> list[Run]:
        runs: list[Run] = []
        for i, step in enumerate(steps):
            try:
                runs.append(self.step(step, scope, f"{at}[{i}]"))
            except CompileError as exc:  # noted; the next steps are still checked (`check` lists all)
                self.problems.append(exc)
                for where, value in expressions(step, f"{at}[{i}]"):  # and this one's expressions
                    self.expr(value, scope.child("row"), where)  # (the loader drops a repeat)
                scope.add(step.bound_name())  # so a later `$name` is not a second problem
        return runs

    def step(self, step: StepModel, scope: Scope, at: str) -> Run:
        run = COMPILERS[step.kind](self, step, scope, at)
        self._footprint(step)
        scope.add(step.bound_name())
        if step.when is not None:
            cond = self.expr(step.when, scope, f"{at}.when")
            inner_bind = run.bind
            run.bind = None
            return WhenRun(cond, run, inner_bind)
        return run

    def _footprint(self, step: StepModel) -> None:
        """Tables read and written, from the step kind's registered effect."""
        if step.effect == "none":
            return
        table: str = getattr(step, "table")  # noqa: B009 - every data step names its table
        if step.effect in ("read", "change"):
            self.read.add(table)
        if step.effect in ("create", "change"):
            self.written.add(table)
        if step.effect == "change":
            self.destructive = True

    def analysis(self) -> Analysis:
        return Analysis(
            frozenset(self.read),
            frozenset(self.written),
            self.destructive,
            self.uses_now,
            frozenset(self.arguments),
        )


# ---------------------------------------------------------------------------------------------
# one compile function per step kind (the registry in spec.py lists the kinds)

StepCompiler = Callable[[_Compiler, Any, Scope, str], Run]
COMPILERS: dict[str, StepCompiler] = {}


def compiles(kind: str) -> Callable[[StepCompiler], StepCompiler]:
    """Register the compile function of a step kind (`STEP_KINDS[kind]`)."""

    def register(fn: StepCompiler) -> StepCompiler:
        COMPILERS[kind] = fn
        return fn

    return register


def _order_by(c: _Compiler, info: TableInfo, order_by: list[str], at: str) -> None:
    for key in order_by:
        c.column(info, key.lstrip("-"), f"{at}.order_by")


@compiles("get")
def _get(c: _Compiler, step: GetStep, scope: Scope, at: str) -> Run:
    info = c.table(step.table, at)
    if not step.key and not step.where:
        raise CompileError(at, "get needs `key` or `where`")
    _order_by(c, info, step.order_by, at)
    filters = c.filters(info, step.key, step.where, scope, at, step.internal)
    q = Query(info, filters, step.order_by, paged=True, **c.joins(info, step.join, at))
    error = c._error(step.error, c._key_default(info, step.key), scope, at)
    return GetRun(info, q, error, step.optional, step.bind)


@compiles("list")
def _list(c: _Compiler, step: ListStep, scope: Scope, at: str) -> Run:
    info = c.table(step.table, at)
    _order_by(c, info, step.order_by, at)
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
def _count(c: _Compiler, step: CountStep, scope: Scope, at: str) -> Run:
    info = c.table(step.table, at)
    filters = c.filters(info, None, step.where, scope, at, step.internal)
    return CountRun(Query(info, filters, [], paged=False, count=True), step.bind)


@compiles("sum")
def _sum(c: _Compiler, step: SumStep, scope: Scope, at: str) -> Run:
    info = c.table(step.table, at)
    c.column(info, step.column, f"{at}.column")
    kind = info.spec.columns[step.column].type
    if kind not in ("integer", "number"):
        raise CompileError(f"{at}.column", f"sum needs a numeric column; {info.name}.{step.column} is {kind}")
    filters = c.filters(info, None, step.where, scope, at, step.internal)
    return CountRun(Query(info, filters, [], paged=False, total=step.column), step.bind)


@compiles("create")
def _create(c: _Compiler, step: CreateStep, scope: Scope, at: str) -> Run:
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
    labels = {col: _label(value, info, col) for col, value in step.values.items()}
    return CreateRun(info, values, step.bind, labels)


def _targets(
    c: _Compiler, step: UpdateStep | DeleteStep, info: TableInfo, scope: Scope, at: str
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
def _update(c: _Compiler, step: UpdateStep, scope: Scope, at: str) -> Run:
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
    statement_for = _update_statements(info)
    return UpdateRun(
        **targets,
        sets=sets,
        statement=statement_for(tuple(sets)) if sets else "",
        labels={col: _label(value, info, col) for col, value in {**step.set, **step.patch}.items()},
        patch=patch,
        statement_for=statement_for,
    )


def _patch_entry(
    c: _Compiler, info: TableInfo, col: str, value: Any, scope: Scope, at: str, sets: dict[str, Any]
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
    if not needs and fn is not _broken:
        raise CompileError(
            at,
            "a `patch` value must read a tool argument ($args.NAME): it is set only when the call gives it; use `set`",
        )
    return fn, needs


def _update_statements(info: TableInfo) -> Callable[[tuple[str, ...]], str]:
    """`UPDATE table SET these columns WHERE key`, built once per set of columns."""
    cache: dict[tuple[str, ...], str] = {}
    t = info.sa_table

    def statement(columns: tuple[str, ...]) -> str:
        text = cache.get(columns)
        if text is None:
            values: dict[str, Any] = {col: sa.bindparam(col) for col in columns}
            text = cache[columns] = sql(sa.update(t).where(info.key_clause()).values(values))
        return text

    return statement


@compiles("delete")
def _delete(c: _Compiler, step: DeleteStep, scope: Scope, at: str) -> Run:
    return DeleteRun(**_targets(c, step, c.table(step.table, at), scope, at))


@compiles("require")
def _require(c: _Compiler, step: RequireStep, scope: Scope, at: str) -> Run:
    return RequireRun(
        c.expr(step.require, scope, f"{at}.require"), c.template(step.error, scope, f"{at}.error")
    )


@compiles("fail")
def _fail(c: _Compiler, step: FailStep, scope: Scope, at: str) -> Run:
    return RequireRun(lambda env: False, c.template(step.fail, scope, f"{at}.fail"))


@compiles("let")
def _let(c: _Compiler, step: LetStep, scope: Scope, at: str) -> Run:
    return LetRun(c.expr(step.value, scope, f"{at}.value"), step.let)


@compiles("for_each")
def _for_each(c: _Compiler, step: ForEachStep, scope: Scope, at: str) -> Run:
    items = c.expr(step.for_each, scope, f"{at}.for_each")
    inner = scope.child(step.bind, step.index or "")
    body = c.steps(step.steps, inner, f"{at}.steps")
    scope.names.update(inner.names)  # names bound inside the loop stay visible after it
    return ForEachRun(items, step.bind, step.index, body, step.collect)


@compiles("return")
def _return(c: _Compiler, step: ReturnStep, scope: Scope, at: str) -> Run:
    return ReturnRun(c.expr(step.result, scope, f"{at}.return"))


@compiles("use")
def _use_fragment(c: _Compiler, step: UseStep, scope: Scope, at: str) -> Run:
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
    return UseRun(params, body, step.bind)


def _label(expr: Any, info: TableInfo, column: str) -> str:
    """A value in the agent's words for errors: the argument it comes from, else the column it meets."""
    return argument_name(expr) or f"the value for {info.name}.{column}"


def _ref_text(value: Any) -> str | None:
    """The reference a key value is (`$args.id` -> `args.id`), for the default "No ... record" message."""
    try:
        node = parse(value)
    except ExprError:
        return None
    return node.text if isinstance(node, Ref) else None


def compile_tool(
    tool: Tool, tables: dict[str, TableInfo], fragments: dict[str, Fragment] | None = None
) -> tuple[CompiledTool, set[tuple[str, str]]]:
    """Compile one tool. Raises CompileError naming the path inside the tool."""
    c = _Compiler(tables, tool, fragments)
    steps = c.steps(tool.steps, c.scope, "operation")
    if tool.kind == "read" and c.written:
        c.problems.append(
            CompileError("kind", "a `read` tool may not create, update or delete; declare it `kind: write`")
        )
    if c.problems:
        first, *others = c.problems
        raise CompileError(first.where, first.message, others)
    return CompiledTool.of(tool, steps, c.analysis()), c.indexed
