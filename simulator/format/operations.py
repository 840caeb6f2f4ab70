"""The operation language's steps as pydantic models, one registry of step kinds, and filters.

Each step kind registers itself (`register_step`): its model, the YAML keys that name it, its effect
on the table it names. The discriminated union `Step` is built from the registry, so a new kind is
one model here and one compile function (`simulator.plan.compiler.COMPILERS`). `simulator.format.spec` holds the
models that contain steps (tools, fragments, the domain) and re-exports these names.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeVar, Union

from pydantic import AliasChoices, BaseModel, Discriminator, Field, Tag

from .specbase import Expr
from .specbase import SpecModel as _Model

#: Filter operators: the expression language's predicate names, compiled to SQL (`prefix` is the old
#: spelling of `starts_with`, see `FILTER_ALIASES`).
FilterOp = Literal[
    "eq",
    "ieq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "in",
    "not_in",
    "contains",
    "icontains",
    "starts_with",
    "ends_with",
    "prefix",
]
#: old filter spellings -> the shared predicate name
FILTER_ALIASES = {"prefix": "starts_with"}


class Filter(_Model):
    """`column OP value`; skipped when the value evaluates to null unless `skip_if_null` is false
    (or the step is `internal`).

    A literal `value: null` tests for null: `eq`/`ieq` is IS NULL, `ne` IS NOT NULL (never skipped).
    `column` may follow foreign keys: `address_id.zip` is the `zip` of the row `address_id` refers to.
    """

    column: str
    op: FilterOp = "eq"
    value: Expr = None
    skip_if_null: bool = True

    @property
    def predicate(self) -> str:
        """The operator's shared name (`prefix` -> `starts_with`)."""
        return FILTER_ALIASES.get(self.op, self.op)


Effect = Literal["none", "read", "create", "change"]


class StepModel(_Model):
    """A step of an operation. Each kind is registered (`STEP_KINDS`, by `register_step`) with the
    keys that name it in YAML (`keys`, the first canonical) and its effect on the table it names:
    `read`, `create`, `change` (update or delete: destructive) or `none`."""

    kind: ClassVar[str] = ""
    keys: ClassVar[tuple[str, ...]] = ()
    effect: ClassVar[Effect] = "none"

    when: Expr = Field(default=None, description="run the step only when this is true (absent: always)")

    def bound_name(self) -> str | None:
        """The name this step binds (its `as:`), if any."""
        return getattr(self, "bind", None)

    def substeps(self) -> list[StepModel]:
        """Steps nested inside this one (a `for_each` body); `use`d fragments are resolved by callers."""
        return []

    def old_spellings(self) -> Iterator[tuple[str, str, str]]:
        """`(path inside the step, old, new)` for each old spelling the step itself uses."""
        return iter(())


#: kind -> step model, in the order the discriminator tries them.
STEP_KINDS: dict[str, type[StepModel]] = {}

_S = TypeVar("_S", bound=type[StepModel])


#: YAML key -> step kind (`search` -> `list`)
_STEP_KEYS: dict[str, str] = {}


def register_step(cls: _S) -> _S:
    """Add a step model to the registry: the step union, its YAML keys and the schema follow.

    A kind registered after this module loaded rebuilds the models that hold steps (`Tool`,
    `Fragment`, `DomainSpec`); its compile function goes in `simulator.plan.compiler.COMPILERS`.
    """
    taken = [key for key in cls.keys if key in _STEP_KEYS]
    if cls.kind in STEP_KINDS or not cls.keys or taken:
        raise ValueError(f"step kind {cls.kind!r} is registered twice, has no keys, or reuses {taken}")
    STEP_KINDS[cls.kind] = cls
    _STEP_KEYS.update(dict.fromkeys(cls.keys, cls.kind))
    if "_READY" in globals():
        _rebuild_steps()
    return cls


def unregister_step(kind: str) -> None:
    """Remove a step kind (tests that register their own use this)."""
    cls = STEP_KINDS.pop(kind)
    for key in cls.keys:
        _STEP_KEYS.pop(key, None)
    _rebuild_steps()


class RelatedRows(_Model):
    """`join: {NAME: {rows: TABLE, by: COLUMN}}`: the rows of TABLE whose COLUMN refers to this row."""

    rows: str = Field(description="the table whose rows refer to this one")
    by: str = Field(description="its column that refers to this table (a foreign key)")
    order_by: list[str] = Field(default_factory=list, description="their order (then their key)")


def _join_field() -> Any:
    return Field(
        default_factory=dict,
        description="related rows added to each row as NAME: `NAME: fk_column` (or a path `fk.fk2`) the "
        "row that foreign key refers to (null when none), by a join in the same statement; "
        "`NAME: {rows: TABLE, by: COLUMN}` the list of TABLE's rows whose COLUMN refers to this row",
    )


class _Step(StepModel):
    bind: str | None = Field(default=None, alias="as", description="name to bind the step's value to")


class _RowsStep(_Step):
    """A step that finds rows by filters."""

    internal: bool = Field(
        default=False,
        description="a lookup the agent does not page: filters are never skipped when null "
        "(unless a filter says `skip_if_null: true`) and a list has no `max_limit` cap (unless given)",
    )

    def old_spellings(self) -> Iterator[tuple[str, str, str]]:
        for i, f in enumerate(getattr(self, "where", None) or []):
            if f.op in FILTER_ALIASES:
                yield f"where[{i}].op", f.op, FILTER_ALIASES[f.op]


@register_step
class GetStep(_RowsStep):
    """One row by key or filters; a missing row is a ToolError (`error`) unless `optional`."""

    kind = "get"
    keys = ("get",)
    effect = "read"

    table: str = Field(alias="get")
    key: dict[str, Expr] | None = None
    where: list[Filter] | None = None
    order_by: list[str] = Field(
        default_factory=list, description="which row wins when `where` matches several"
    )
    error: str | None = None
    optional: bool = False
    join: dict[str, str | RelatedRows] = _join_field()


@register_step
class ListStep(_RowsStep):
    """Rows matching filters, ordered, capped at `max_limit`."""

    kind = "list"
    keys = ("list", "search")
    effect = "read"

    table: str = Field(validation_alias=AliasChoices("list", "search"), serialization_alias="list")
    where: list[Filter] = Field(default_factory=list)
    order_by: list[str] = Field(default_factory=list)
    limit: Expr = None
    max_limit: int | None = Field(
        default=100, description="cap on rows returned; null: no cap (for lists the agent does not page)"
    )
    offset: Expr = None
    join: dict[str, str | RelatedRows] = _join_field()


@register_step
class CountStep(_RowsStep):
    """The number of rows matching filters."""

    kind = "count"
    keys = ("count",)
    effect = "read"

    table: str = Field(alias="count")
    where: list[Filter] = Field(default_factory=list)


@register_step
class SumStep(_RowsStep):
    """The sum of a numeric column over rows matching filters (0 when none match)."""

    kind = "sum"
    keys = ("sum",)
    effect = "read"

    table: str = Field(alias="sum")
    column: str
    where: list[Filter] = Field(default_factory=list)


@register_step
class CreateStep(_Step):
    """Insert one row; the key is generated when absent and defaults are filled."""

    kind = "create"
    keys = ("create",)
    effect = "create"

    table: str = Field(alias="create")
    values: dict[str, Expr]


@register_step
class UpdateStep(_RowsStep):
    """Update the row with `key` (or every row matching `where`); `$row` in `set` is the row before."""

    kind = "update"
    keys = ("update",)
    effect = "change"

    table: str = Field(alias="update")
    key: dict[str, Expr] | None = None
    where: list[Filter] | None = None
    set: dict[str, Expr] = Field(default_factory=dict, description="columns always set")
    patch: dict[str, Expr] = Field(
        default_factory=dict,
        description="columns set only when the call gave every argument the value reads (even as null: "
        "then null is written); an absent argument leaves the column as it is",
    )
    error: str | None = None


@register_step
class DeleteStep(_RowsStep):
    """Delete the row with `key` (or every row matching `where`); binds the deleted row(s)."""

    kind = "delete"
    keys = ("delete",)
    effect = "change"

    table: str = Field(alias="delete")
    key: dict[str, Expr] | None = None
    where: list[Filter] | None = None
    error: str | None = None


@register_step
class RequireStep(StepModel):
    """A precondition: when the condition is false the call fails with `error`."""

    kind = "require"
    keys = ("require",)

    require: Expr
    error: str


@register_step
class FailStep(StepModel):
    """Fail the call with this message (usually under `when`)."""

    kind = "fail"
    keys = ("fail",)

    fail: str


@register_step
class LetStep(StepModel):
    """Bind (or rebind) a name to a value."""

    kind = "let"
    keys = ("let",)

    let: str
    value: Expr

    def bound_name(self) -> str | None:
        return self.let


@register_step
class ForEachStep(StepModel):
    """Run `steps` for each element of a list."""

    kind = "for_each"
    keys = ("for_each",)

    for_each: Expr
    bind: str = Field(alias="as")
    index: str | None = None
    steps: list[Step]
    collect: str | None = Field(
        default=None, description="bind a list of each pass's last value to this name"
    )

    def bound_name(self) -> str | None:
        return self.collect

    def substeps(self) -> list[StepModel]:
        return list(self.steps)


@register_step
class ReturnStep(StepModel):
    """The call's result."""

    kind = "return"
    keys = ("return",)

    result: Expr = Field(alias="return")


@register_step
class UseStep(StepModel):
    """Run a named fragment with parameters; binds its `return` value."""

    kind = "use"
    keys = ("use",)

    use: str
    with_: dict[str, Expr] = Field(default_factory=dict, alias="with")
    bind: str | None = Field(default=None, alias="as")


def _step_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        for key in value:
            if key in _STEP_KEYS:
                return _STEP_KEYS[key]
        return None
    return value.kind if isinstance(value, StepModel) else None


def _step_union() -> Any:
    """`Step`: the discriminated union of every registered step model."""
    members = tuple(Annotated[cls, Tag(kind)] for kind, cls in STEP_KINDS.items())
    return Annotated[
        Union[members],  # noqa: UP007 - built from the registry
        Discriminator(
            _step_tag,
            custom_error_type="unknown_step",
            custom_error_message="a step needs one of the keys: " + ", ".join(sorted(_STEP_KEYS)),
        ),
    ]


if TYPE_CHECKING:
    Step = StepModel
else:
    Step = _step_union()


def walk_steps(steps: list[StepModel], at: str) -> Iterator[tuple[str, StepModel]]:
    """Every step of a list with its path (`operation[2].steps[0]`), nested bodies included, depth first."""
    for i, step in enumerate(steps):
        here = f"{at}[{i}]"
        yield here, step
        if step.substeps():
            yield from walk_steps(step.substeps(), f"{here}.steps")


def step_spellings(steps: list[StepModel], at: str) -> list[tuple[str, str, str]]:
    """Old spellings in steps (filter `op: prefix` -> `starts_with`): `(path, old, new)` each, in order."""
    return [
        (f"{here}.{sub}", old, new)
        for here, step in walk_steps(steps, at)
        for sub, old, new in step.old_spellings()
    ]


ForEachStep.model_rebuild()


def _rebuild_steps() -> None:
    """After the registry changed: `Step`, and every model holding steps (here and in `simulator.format.spec`)."""
    global Step
    Step = _step_union()
    holders: list[tuple[type[BaseModel], str | None]] = [(ForEachStep, "steps")]
    spec = sys.modules.get(__name__.rsplit(".", 1)[0] + ".spec")
    if spec is not None:
        setattr(spec, "Step", Step)  # noqa: B010 - the name other modules import
        holders += [(spec.Fragment, "steps"), (spec.Tool, "operation"), (spec.DomainSpec, None)]
    for model, name in holders:
        if name is not None:
            model.model_fields[name].annotation = list[Step]
        model.model_rebuild(force=True)


_READY = True  # kinds registered from now on rebuild the models
