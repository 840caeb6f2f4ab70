"""Checks of a domain's operations beyond compiling them: literals against columns, and warnings.

Problems (load errors): a literal that the column it goes to can never hold. Warnings (the domain
loads): values that are lost or never read, steps that never run, and old spellings (`Spelling`).
Every finding is `(where, message)`, `where` the path inside the tool or fragment
(`operation[2].set.status`), in the loader's location format. Details: docs/design/engine.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from ..lang import ExprError, constant, deprecations, free_names, parse, parse_template
from ..plan.tables import TableInfo, ValueProblem
from .spec import (
    FailStep,
    Filter,
    ForEachStep,
    Fragment,
    GetStep,
    LetStep,
    ReturnStep,
    StepModel,
    UseStep,
)
from .spec import walk_steps as spec_walk_steps

Finding = tuple[str, str]


@dataclass(frozen=True)
class Placed:
    """A step and its path inside the tool or fragment."""

    step: Any
    at: str


def walk_steps(steps: list[Any], at: str) -> Iterator[Placed]:
    """Every step of a list, nested bodies (`for_each`) included, depth first, with its path."""
    for here, step in spec_walk_steps(steps, at):
        yield Placed(step, here)


_NO_VALUE = object()


def literal(expr: Any) -> Any:
    """The value of an expression that is a constant (a literal, `$$text`, `literal:`, or operators
    over constants), or `_NO_VALUE`; the expression tree (`simulator.lang`) decides."""
    try:
        is_constant, value = constant(parse(expr))
    except ExprError:
        return _NO_VALUE  # the compiler reports it
    return value if is_constant else _NO_VALUE


def _value_problem(info: TableInfo, column: str, value: Any) -> str | None:
    try:
        info.encode(column, value)
    except ValueProblem as exc:
        return str(exc)
    return None


#: filter operators whose value is compared with the column's stored value as it is
_EXACT = {"eq", "ne"}
#: filter operators that order values: the value is of the column's type (any value of it)
_RANGE = {"lt", "le", "gt", "ge"}
#: the JSON values a column type holds (booleans are not numbers)
_KINDS: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "datetime": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}
_MEMBERS = {"in", "not_in"}
#: filter operators that test text: the column holds text and the value is a string
_TEXT = {"ieq", "contains", "icontains", "prefix", "starts_with", "ends_with"}


def _filter_problem(info: TableInfo, f: Filter, skip: set[str], value: Any) -> str | None:
    if f.column not in info.spec.columns or f.column in skip:
        return None  # the compiler reports it, or the column's definition is wrong (reported there)
    if value is _NO_VALUE or value is None:
        return None  # null tests for null (eq/ne), or is the compiler's to refuse
    col = info.spec.columns[f.column]
    op = getattr(f, "predicate", f.op)  # the canonical name of the filter's operator
    if op in _MEMBERS:
        if not isinstance(value, list):
            value = [value]
        for item in value:
            problem = _value_problem(info, f.column, item) if item is not None else None
            if problem is not None:
                return f"`{f.op}` lists a value no row can hold: {problem}"
        return None
    if op in _RANGE and col.enum is not None:  # any value of the type orders against the enum's
        kinds = _KINDS.get(col.type)
        if kinds is None or (isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))):
            return None
        return f"`{f.op}` compares {info.name}.{f.column} ({col.type}) with {value!r}"
    if op in _EXACT | _RANGE:
        problem = _value_problem(info, f.column, value)
        if problem is None:
            return None
        if op == "ne":
            return f"`ne` compares with a value no row can hold, so it matches every row: {problem}"
        return f"`{f.op}` compares with a value no row can hold: {problem}"
    if op in _TEXT and (col.type not in ("string", "datetime", "json") or not isinstance(value, str)):
        return f"`{f.op}` tests text, but {info.name}.{f.column} is {col.type} and the value is {value!r}"
    return None


def literal_problems(
    steps: list[Any],
    at: str,
    tables: dict[str, TableInfo],
    unsound: dict[str, set[str]] | None = None,
    fragments: dict[str, Fragment] | None = None,
) -> list[Finding]:
    """Literals in `values`, `set`, `key` and filters that their column can never hold; and literals
    a `use:` passes to a fragment that puts the parameter in such a place (reported at the `with:`).
    `unsound`: table -> columns whose definition is wrong (nothing is checked against them)."""
    out = [(where, message) for where, message, _ in _literals(steps, at, tables, unsound or {}, literal)]
    for placed in walk_steps(steps, at):
        step = placed.step
        fragment = (fragments or {}).get(step.use) if isinstance(step, UseStep) else None
        if fragment is None:
            continue
        given = {f"${name}": (name, literal(expr)) for name, expr in step.with_.items()}
        given = {ref: (name, v) for ref, (name, v) in given.items() if v is not _NO_VALUE and _plain(v)}

        def passed(expr: Any, given: dict[str, tuple[str, Any]] = given) -> Any:
            return given[expr][1] if isinstance(expr, str) and expr in given else _NO_VALUE

        for where, message, expr in _literals(fragment.steps, "steps", tables, unsound or {}, passed):
            name = given[expr][0]
            out.append((f"{placed.at}.with.{name}", f"{message} (fragments.{step.use}.{where})"))
    return out


def _plain(value: Any) -> bool:
    """A value that means itself wherever it is written (not text that would read as a reference)."""
    return not (isinstance(value, str) and value.startswith("$"))


def _literals(
    steps: list[Any], at: str, tables: dict[str, TableInfo], unsound: dict[str, set[str]], value_of: Any
) -> Iterator[tuple[str, str, Any]]:
    """`(where, problem, expression)` for each expression `value_of` gives a constant value to
    that its column can never hold."""
    for placed in walk_steps(steps, at):
        step = placed.step
        info = tables.get(getattr(step, "table", None) or "")
        if info is None:
            continue  # not a table step, or an unknown table (the compiler reports it)
        skip = unsound.get(info.name, set())
        columns = {name: col for name, col in info.spec.columns.items() if name not in skip}
        for field, mapping in (
            ("values", getattr(step, "values", None)),
            ("set", getattr(step, "set", None)),
            ("key", getattr(step, "key", None)),
        ):
            for col, expr in (mapping or {}).items():
                value = value_of(expr)
                if col not in columns or value is _NO_VALUE:
                    continue
                if value is None and (field == "key" or (field == "values" and col == info.pk)):
                    continue  # a null key is generated (create) or matches nothing (a lookup)
                problem = _value_problem(info, col, value)
                if problem is not None:
                    yield f"{placed.at}.{field}.{col}", f"this literal can never be stored: {problem}", expr
        for i, f in enumerate(getattr(step, "where", None) or []):
            problem = _filter_problem(info, f, skip, value_of(f.value))
            if problem is not None:
                yield f"{placed.at}.where[{i}].value", problem, f.value


# ---------------------------------------------------------------------------------------------
# warnings: values that are lost


def names_read(steps: list[Any], at: str = "") -> set[str]:
    """Every name the steps read, from the expression tree: the free names of each expression
    (`simulator.lang.free_names`) and of each text field read as a template (`error:`, `fail:`)."""
    out: set[str] = set()
    for placed in walk_steps(steps, at):
        for _, expr in expressions(placed.step, placed.at):
            try:
                out |= free_names(parse(expr))
            except ExprError:
                continue  # the compiler reports it
        for name in type(placed.step).model_fields:
            text = getattr(placed.step, name)
            if isinstance(text, str) and "{" in text:
                try:
                    out |= free_names(parse_template(text))
                except ExprError:
                    continue
    return out


def _returns_value(fragment: Fragment) -> bool:
    return any(
        isinstance(p.step, ReturnStep) and p.step.result is not None
        for p in walk_steps(fragment.steps, "steps")
    )


def _ends(step: Any) -> bool:
    """An unconditional `return` or `fail`: nothing after it in the same list runs."""
    return isinstance(step, ReturnStep | FailStep) and step.when is None


def lost_values(steps: list[Any], at: str, fragments: dict[str, Fragment]) -> list[Finding]:
    """Warnings about values that are computed and then lost. A list's value (a tool's result, a
    fragment's, a `for_each` pass's when it is collected) is its last step that yields one, so that
    step's value is not lost."""
    out: list[Finding] = []
    read = names_read(steps, at)
    _unreachable(steps, at, out)
    results = {_result_at(steps, at)}
    for placed in walk_steps(steps, at):
        step = placed.step
        if isinstance(step, ForEachStep) and step.collect:
            results.add(_result_at(step.steps, f"{placed.at}.steps"))  # each pass's value is collected
    for placed in walk_steps(steps, at):
        step = placed.step
        if isinstance(step, UseStep) and step.bind is None:
            fragment = fragments.get(step.use)
            if fragment is not None and _returns_value(fragment):
                out.append(
                    (
                        placed.at,
                        f"the value fragment {step.use!r} returns is lost: add `as: NAME` to keep it",
                    )
                )
        if not _value_only(step) or placed.at in results:
            continue
        name = step.bound_name()
        if name is None:
            out.append(
                (placed.at, "this step's value is lost: nothing reads it (bind it with `as:`, or drop it)")
            )
        elif name not in read:
            out.append((placed.at, f"${name} is bound here but never read: its value is lost"))
    return out


def _value_only(step: Any) -> bool:
    """A step whose value is all it produces: it writes nothing and has no check that can fail."""
    if isinstance(step, LetStep | ForEachStep):
        return isinstance(step, LetStep) or step.collect is not None
    return bool(step.effect == "read" and (not isinstance(step, GetStep) or step.optional))


def _yields(step: Any) -> bool:
    """A step whose value becomes its list's value (a bound name, or a data step)."""
    return step.bound_name() is not None or step.effect != "none"


def _result_at(steps: list[Any], at: str) -> str | None:
    """The path of the step whose value is the list's value, or None when a `return` decides it."""
    result = None
    for i, step in enumerate(steps):
        if isinstance(step, ReturnStep) and step.when is None:
            return None
        if _yields(step):
            result = f"{at}[{i}]"
    return result


def _unreachable(steps: list[Any], at: str, out: list[Finding]) -> None:
    for i, step in enumerate(steps):
        if isinstance(step, ForEachStep):
            _unreachable(step.steps, f"{at}[{i}].steps", out)
        if _ends(step) and i + 1 < len(steps):
            out.append((f"{at}[{i + 1}]", f"never runs: step {i} always ends the call before it"))
            return


# ---------------------------------------------------------------------------------------------
# warnings: old spellings


@dataclass(frozen=True)
class Spelling:
    """An old spelling that still loads: where (the path of the key or value written), as written,
    and the new form. `toolgym migrate` rewrites each in place."""

    at: str
    old: str
    new: str

    @property
    def message(self) -> str:
        return f"`{self.old}` is an old spelling: write `{self.new}`"


#: the JSON-schema mark of a type annotated as an expression (`spec.Expr`)
_EXPR_MARK = "x-toolgym-expression"


def _marked(metadata: Any) -> bool:
    return any(
        isinstance(getattr(m, "json_schema", None), dict) and m.json_schema.get(_EXPR_MARK) for m in metadata
    )


def expressions(model: BaseModel, at: str) -> Iterator[tuple[str, Any]]:
    """Every expression written in a step (or a filter), with its path: fields typed `Expr`, the
    values of `dict[str, Expr]` fields (`values`, `set`, `key`, `with`), and inside lists of
    models that are not steps (filters). Nested steps are not entered (`walk_steps` yields them)."""
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        if value is None:
            continue
        here = f"{at}.{field.alias or name}"
        if _marked(field.metadata):
            yield here, value
            continue
        for tp in (field.annotation, *get_args(field.annotation)):  # (X | None: look at X)
            args = get_args(tp)
            if get_origin(tp) is dict and len(args) == 2 and _marked(getattr(args[1], "__metadata__", ())):
                for key, item in value.items():
                    yield f"{here}.{key}", item
            elif (
                get_origin(tp) is list
                and value
                and all(isinstance(v, BaseModel) and not isinstance(v, StepModel) for v in value)
            ):
                for i, item in enumerate(value):
                    yield from expressions(item, f"{here}[{i}]")
            else:
                continue
            break


def old_spellings(steps: list[Any], at: str) -> list[Spelling]:
    """Old spellings in steps: of a step or filter (`op: prefix`, from the step models) and of
    operators inside their expressions (`get` -> `get_key`, from the expression tree)."""
    out: list[Spelling] = []
    for placed in walk_steps(steps, at):
        step = placed.step
        for sub, old, new in getattr(step, "old_spellings", lambda: iter(()))():
            out.append(Spelling(f"{placed.at}.{sub}", old, new))
        for where, expr in expressions(step, placed.at):
            try:
                found = deprecations(parse(expr))
            except ExprError:
                continue  # the compiler reports it
            out.extend(Spelling(f"{where}.{d.path}" if d.path else where, d.old, d.new) for d in found)
    return out
