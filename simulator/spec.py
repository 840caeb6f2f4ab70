"""The domain format as pydantic models: tables, tools and their operations, tasks.

These models are the contract; `schemas/*.schema.json` are generated from them
(`python -m simulator.schemas`), and a test fails when a file drifts. The
semantics of operations and expressions are in docs/domain-format.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeVar, Union

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from .clock import rendering_problem
from .ids import parse_pattern

ColumnType = Literal["string", "integer", "number", "boolean", "datetime", "json"]
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

#: An expression: a literal, a `$reference`, a list of expressions, or a one-key operator mapping.
#: Parsed by `simulator.lang`; its JSON Schema (`$defs/Expr`) is generated from the operator registry:
#: the marker below is `simulator.lang.docs.EXPR_SCHEMA`, swapped for the reference by `toolgym.schemas`.
Expr = Annotated[Any, WithJsonSchema({"x-toolgym-expression": True})]

#: The tool the MCP server adds as the agent's answer channel; a domain may not define a tool of that name.
ANSWER_TOOL = "submit_answer"

SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class Column(_Model):
    """A typed column."""

    type: ColumnType
    nullable: bool = False
    unique: bool = False
    enum: list[Any] | None = None
    default: Any = None
    references: str | None = Field(default=None, description="foreign key as `table.column`")
    description: str | None = None


class HashIds(_Model):
    """Generated keys: `prefix` + 8 hex digits derived from the episode's seed (the default)."""

    scheme: Literal["hash"]
    prefix: str = ""


class CounterIds(_Model):
    """Generated keys: `prefix` + a running number from `start`, zero-padded to `width` digits;
    numbering continues after the largest number the seed uses (`certificate_1000001`)."""

    scheme: Literal["counter"]
    prefix: str = ""
    start: int = Field(default=1, ge=0)
    width: int = Field(default=0, ge=0, le=30, description="zero-pad the number to this many digits")


class PatternIds(_Model):
    """Generated keys: `prefix` + `pattern` with each slot drawn from the episode's seed: `A` an
    upper-case letter, `a` a lower-case letter, `9` a digit, `X` / `x` an upper- / lower-case letter
    or a digit; other characters stand for themselves, `\\` makes a slot letter literal."""

    scheme: Literal["pattern"]
    prefix: str = ""
    pattern: str = Field(examples=["AAA999"])

    @field_validator("pattern")
    @classmethod
    def _slots(cls, value: str) -> str:
        parse_pattern(value)
        return value


IdScheme = Annotated[HashIds | CounterIds | PatternIds, Field(discriminator="scheme")]


class Table(_Model):
    """A table: typed columns and a primary key (one column, or a list of columns)."""

    primary_key: str | list[str] = Field(
        description="the key column, or a list of columns whose values together identify a row"
    )
    columns: dict[str, Column]
    id_prefix: str = Field(default="", description="prefix of generated string keys (hash scheme)")
    ids: IdScheme | None = Field(
        default=None,
        description="how `create` generates a key it is not given (default: hash with `id_prefix`)",
        exclude_if=lambda v: v is None,
    )
    description: str | None = None

    @property
    def key_columns(self) -> tuple[str, ...]:
        """The key's columns, in order (one for a single-column key)."""
        return (self.primary_key,) if isinstance(self.primary_key, str) else tuple(self.primary_key)

    @field_validator("primary_key")
    @classmethod
    def _key_shape(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, list):
            if not value:
                raise ValueError("give at least one column")
            if len(set(value)) != len(value):
                raise ValueError(f"a column appears twice in {value}")
        return value

    @field_validator("ids")
    @classmethod
    def _ids_fit(cls, value: HashIds | CounterIds | PatternIds | None, info: ValidationInfo) -> Any:
        if value is None:
            return value
        if info.data.get("id_prefix"):
            raise ValueError("give the prefix as `ids.prefix` (not `id_prefix`) when `ids` is given")
        key = info.data.get("primary_key")
        last = key if isinstance(key, str) else key[-1] if key else None
        column = (info.data.get("columns") or {}).get(last)
        if column is not None and column.type == "integer":
            if value.scheme != "counter" or value.prefix or value.width:
                raise ValueError(
                    f"{last} is an integer key, generated as max+1; only `scheme: counter` "
                    "with `start` applies to it (no prefix, width or pattern)"
                )
        return value


class Clock(_Model):
    """The simulated clock: `start`, advanced by `tick_seconds` after every successful write call.

    `$now` is rendered like `start` (same separator, precision and zone; a start ending in `Z` as
    `2026-01-01T09:00:00Z`), or with `format`, a strftime format that must render an ISO-8601 date-time.
    """

    start: str = "2026-01-01T09:00:00Z"
    tick_seconds: int = 60
    format: str | None = Field(
        default=None,
        description="strftime format of `$now` (e.g. `%Y-%m-%d %H:%M:%S`); absent: the shape of `start`",
        exclude_if=lambda v: v is None,
    )

    @model_validator(mode="after")
    def _renders(self) -> Clock:
        problem = rendering_problem(self.start, self.format)
        if problem is not None:
            raise ValueError(problem)
        return self


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
    `Fragment`, `DomainSpec`); its compile function goes in `simulator.compiler.COMPILERS`.
    """
    taken = [key for key in cls.keys if key in _STEP_KEYS]
    if cls.kind in STEP_KINDS or not cls.keys or taken:
        raise ValueError(f"step kind {cls.kind!r} is registered twice, has no keys, or reuses {taken}")
    STEP_KINDS[cls.kind] = cls
    _STEP_KEYS.update(dict.fromkeys(cls.keys, cls.kind))
    if "DomainSpec" in globals():
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


def _one_or_many(schema: dict[str, Any]) -> None:
    """JSON Schema of `operation`: a list of steps, or a single step."""
    items = schema.pop("items")
    schema.pop("type", None)
    schema["anyOf"] = [{"type": "array", "items": items}, items]


class Tool(_Model):
    """A tool: what the agent sees (name, description, input schema) and the operation it runs."""

    name: str
    description: str
    kind: Literal["read", "write"]
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    output_schema: dict[str, Any] | None = None
    operation: list[Step] = Field(
        description="one step, or a list of steps run in order", json_schema_extra=_one_or_many
    )

    @field_validator("operation", mode="before")
    @classmethod
    def _one_step_is_a_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    @property
    def steps(self) -> list[Any]:
        """The operation as a list of steps."""
        return list(self.operation)

    @field_validator("name")
    @classmethod
    def _name_shape(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError("a tool name is letters, digits, '_' and '-', starting with a letter or '_'")
        if value == ANSWER_TOOL:
            raise ValueError(
                f"the tool name {ANSWER_TOOL!r} is reserved: the server adds it as the answer channel"
            )
        return value


class Fragment(_Model):
    """Named, reusable steps with declared parameters (`use: NAME` inlines them at load time)."""

    params: list[str] = Field(default_factory=list)
    steps: list[Step]


#: Where answer facts may appear: the final assistant message, or any assistant message.
Answers = Literal["final", "any"]


class DomainSpec(_Model):
    """The contents of `domain.yaml`."""

    name: str
    version: str
    description: str = ""
    policy: str | None = Field(default=None, description="agent-facing policy text (or policy.md beside it)")
    clock: Clock = Field(default_factory=Clock)
    tables: dict[str, Table]
    fragments: dict[str, Fragment] = Field(default_factory=dict, description="reusable steps for `use:`")
    tools: list[Tool]
    answers: Answers = Field(
        default="final",
        description="where tasks' answer facts may appear: the final assistant message or any assistant message",
    )

    @field_validator("version")
    @classmethod
    def _semver(cls, value: str) -> str:
        if not SEMVER.match(value):
            raise ValueError(f"version {value!r} is not semver (MAJOR.MINOR.PATCH)")
        return value

    @field_validator("name")
    @classmethod
    def _name_shape(cls, value: str) -> str:
        if not re.match(r"^[a-z0-9][a-z0-9_-]*$", value):
            raise ValueError("a domain name is lower-case letters, digits, '_' and '-'")
        return value


class Call(_Model):
    """One tool call: a name and its arguments."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    expect_error: bool = Field(default=False, description="the correct behaviour is that this call fails")
    free: list[str] = Field(
        default_factory=list,
        description="arguments whose value the task leaves to the agent (e.g. a memo); validation does not mutate them",
    )


class Task(_Model):
    """One task: an instruction, the gold calls, answer facts, columns to ignore when diffing."""

    id: str
    instruction: str
    calls: list[Call] = Field(default_factory=list)
    answer_facts: list[Any] = Field(default_factory=list)
    answers: Answers | None = Field(
        default=None,
        description="where answer facts may appear: `final` (the last assistant message without tool calls) or `any` assistant message; null: the domain's `answers`",
    )
    ignore_columns: list[str] = Field(default_factory=list, description="`table.column` entries")
    difficulty: str | None = None
    tags: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="ungraded notes for people (e.g. rubric text)")
    seed: int = 0

    @model_validator(mode="after")
    def _ignore_shape(self) -> Task:
        for entry in self.ignore_columns:
            if entry.count(".") != 1:
                raise ValueError(f"ignore_columns entry {entry!r} is not `table.column`")
        return self


def _rebuild_steps() -> None:
    """After the registry changed: `Step` and every model holding steps, rebuilt."""
    global Step
    Step = _step_union()
    holders: list[tuple[type[BaseModel], str | None]] = [
        (ForEachStep, "steps"),
        (Fragment, "steps"),
        (Tool, "operation"),
        (DomainSpec, None),
    ]
    for model, name in holders:
        if name is not None:
            model.model_fields[name].annotation = list[Step]
        model.model_rebuild(force=True)
