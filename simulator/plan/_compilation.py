"""The compiler's state while it compiles one tool, and the registry of compile functions.

`Compiler` walks a tool's steps (fragments inlined), compiles every expression from its tree
(`simulator.lang`), every filter to SQL (`_query.py`), and gathers what the tool does (tables read and
written, destructive, the clock, the arguments read) and every problem, each at its place. The compile
function of each step kind (`COMPILERS`, filled by `compiles`) is in `compiler.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..format.lint import expressions
from ..format.spec import (
    Filter,
    Fragment,
    RelatedRows,
    StepModel,
    Tool,
)
from ..lang import (
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
from ..lang.expressions import argument_name
from ._query import Children, CompiledFilter, Hop, Join, key_encoder
from .runsteps import (
    Analysis,
    Run,
    WhenRun,
)
from .tables import TableInfo


class CompileError(Exception):
    """A problem in one tool's operation; `where` is the path inside the tool. `all` is every
    problem compilation found in the tool (this one first): each step is compiled, and each
    expression checked, even after an earlier one failed."""

    def __init__(self, where: str, message: str, others: list[CompileError] | None = None):
        super().__init__(message)
        self.where = where
        self.message = message
        self.all: list[CompileError] = [self, *(others or [])]


def broken(env: Env) -> Any:  # stands in for an expression that did not compile (the tool never runs)
    return None


# ---------------------------------------------------------------------------------------------
# compilation


class Compiler:
    """One tool's compilation: its scope, what it reads and writes, its problems."""

    def __init__(
        self,
        tables: dict[str, TableInfo],
        tool: Tool,
        fragments: dict[str, Fragment] | None = None,
        generated: bool = True,
    ):
        self.tables = tables
        self.tool = tool
        self.fragments = fragments or {}
        self.using: list[str] = []
        props = tool.input_schema.get("properties")
        self.scope = Scope(props.keys() if isinstance(props, dict) else None, generated=generated)
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
            return broken

    def template(self, text: str, scope: Scope, where: str) -> Callable[[Env], str]:
        try:
            node = parse_template(text)
            self._note(node)
            return compile_template_node(node, scope)
        except ExprError as exc:
            self.problems.append(CompileError(where, str(exc)))
            return broken

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
                        label(value, info, col),
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
                        label(f.value, target, column),
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
        order_by_columns(self, child, how.order_by, where)
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
                f"{c} {{{ref}}}" if (ref := ref_text(v)) else f"{c} {v}" for c, v in key.items()
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


StepCompiler = Callable[[Compiler, Any, Scope, str], Run]
COMPILERS: dict[str, StepCompiler] = {}


def compiles(kind: str) -> Callable[[StepCompiler], StepCompiler]:
    """Register the compile function of a step kind (`STEP_KINDS[kind]`)."""

    def register(fn: StepCompiler) -> StepCompiler:
        COMPILERS[kind] = fn
        return fn

    return register


def order_by_columns(c: Compiler, info: TableInfo, order_by: list[str], at: str) -> None:
    for key in order_by:
        c.column(info, key.lstrip("-"), f"{at}.order_by")


def label(expr: Any, info: TableInfo, column: str) -> str:
    """A value in the agent's words for errors: the argument it comes from, else the column it meets."""
    return argument_name(expr) or f"the value for {info.name}.{column}"


def ref_text(value: Any) -> str | None:
    """The reference a key value is (`$args.id` -> `args.id`), for the default "No ... record" message."""
    try:
        node = parse(value)
    except ExprError:
        return None
    return node.text if isinstance(node, Ref) else None
