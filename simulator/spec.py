"""The domain format as pydantic models: tables, tools and their operations, tasks.

These models are the contract; `schemas/*.schema.json` are generated from them
(`python -m simulator.schemas`), and a test fails when a file drifts. The
semantics of operations and expressions are in docs/domain-format.md.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

ColumnType = Literal["string", "integer", "number", "boolean", "datetime", "json"]
FilterOp = Literal[
    "eq", "ieq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "contains", "icontains", "prefix"
]

#: An expression: a literal, a `$reference`, a list of expressions, or a one-key operator mapping.
Expr = Any

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


class Table(_Model):
    """A table: typed columns and one primary-key column."""

    primary_key: str
    columns: dict[str, Column]
    id_prefix: str = Field(default="", description="prefix of generated string keys")
    description: str | None = None


class Clock(_Model):
    """The simulated clock: `start`, advanced by `tick_seconds` after every successful write call."""

    start: str = "2026-01-01T09:00:00Z"
    tick_seconds: int = 60


class Filter(_Model):
    """`column OP value`; skipped when the value evaluates to null unless `skip_if_null` is false.

    A literal `value: null` tests for null: `eq`/`ieq` is IS NULL, `ne` IS NOT NULL (never skipped).
    """

    column: str
    op: FilterOp = "eq"
    value: Expr = None
    skip_if_null: bool = True


class _Step(_Model):
    bind: str | None = Field(default=None, alias="as", description="name to bind the step's value to")
    when: Expr = Field(default=None, description="run the step only when this is true (absent: always)")


class GetStep(_Step):
    """One row by key or filters; a missing row is a ToolError (`error`) unless `optional`."""

    table: str = Field(alias="get")
    key: dict[str, Expr] | None = None
    where: list[Filter] | None = None
    order_by: list[str] = Field(
        default_factory=list, description="which row wins when `where` matches several"
    )
    error: str | None = None
    optional: bool = False


class ListStep(_Step):
    """Rows matching filters, ordered, capped at `max_limit`."""

    table: str = Field(validation_alias=AliasChoices("list", "search"), serialization_alias="list")
    where: list[Filter] = Field(default_factory=list)
    order_by: list[str] = Field(default_factory=list)
    limit: Expr = None
    max_limit: int | None = Field(
        default=100, description="cap on rows returned; null: no cap (for lists the agent does not page)"
    )
    offset: Expr = None


class CountStep(_Step):
    """The number of rows matching filters."""

    table: str = Field(alias="count")
    where: list[Filter] = Field(default_factory=list)


class SumStep(_Step):
    """The sum of a numeric column over rows matching filters (0 when none match)."""

    table: str = Field(alias="sum")
    column: str
    where: list[Filter] = Field(default_factory=list)


class CreateStep(_Step):
    """Insert one row; the key is generated when absent and defaults are filled."""

    table: str = Field(alias="create")
    values: dict[str, Expr]


class UpdateStep(_Step):
    """Update the row with `key` (or every row matching `where`); `$row` in `set` is the row before."""

    table: str = Field(alias="update")
    key: dict[str, Expr] | None = None
    where: list[Filter] | None = None
    set: dict[str, Expr]
    error: str | None = None


class DeleteStep(_Step):
    """Delete the row with `key` (or every row matching `where`); binds the deleted row(s)."""

    table: str = Field(alias="delete")
    key: dict[str, Expr] | None = None
    where: list[Filter] | None = None
    error: str | None = None


class RequireStep(_Model):
    """A precondition: when the condition is false the call fails with `error`."""

    require: Expr
    error: str
    when: Expr = None


class FailStep(_Model):
    """Fail the call with this message (usually under `when`)."""

    fail: str
    when: Expr = None


class LetStep(_Model):
    """Bind (or rebind) a name to a value."""

    let: str
    value: Expr
    when: Expr = None


class ForEachStep(_Model):
    """Run `steps` for each element of a list."""

    for_each: Expr
    bind: str = Field(alias="as")
    index: str | None = None
    steps: list[Step]
    collect: str | None = Field(
        default=None, description="bind a list of each pass's last value to this name"
    )
    when: Expr = None


class ReturnStep(_Model):
    """The call's result."""

    result: Expr = Field(alias="return")
    when: Expr = None


class UseStep(_Model):
    """Run a named fragment with parameters; binds its `return` value."""

    use: str
    with_: dict[str, Expr] = Field(default_factory=dict, alias="with")
    bind: str | None = Field(default=None, alias="as")
    when: Expr = None


_STEP_KEYS = {
    "get": "get",
    "list": "list",
    "search": "list",
    "count": "count",
    "sum": "sum",
    "create": "create",
    "update": "update",
    "delete": "delete",
    "require": "require",
    "fail": "fail",
    "let": "let",
    "for_each": "for_each",
    "return": "return",
    "use": "use",
}


def _step_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        for key in value:
            if key in _STEP_KEYS:
                return _STEP_KEYS[key]
        return None
    for cls, tag in _TAG_OF_CLASS.items():
        if isinstance(value, cls):
            return tag
    return None


Step = Annotated[
    Annotated[GetStep, Tag("get")]
    | Annotated[ListStep, Tag("list")]
    | Annotated[CountStep, Tag("count")]
    | Annotated[SumStep, Tag("sum")]
    | Annotated[CreateStep, Tag("create")]
    | Annotated[UpdateStep, Tag("update")]
    | Annotated[DeleteStep, Tag("delete")]
    | Annotated[RequireStep, Tag("require")]
    | Annotated[FailStep, Tag("fail")]
    | Annotated[LetStep, Tag("let")]
    | Annotated[ForEachStep, Tag("for_each")]
    | Annotated[ReturnStep, Tag("return")]
    | Annotated[UseStep, Tag("use")],
    Discriminator(
        _step_tag,
        custom_error_type="unknown_step",
        custom_error_message="a step needs one of the keys: " + ", ".join(sorted(_STEP_KEYS)),
    ),
]

_TAG_OF_CLASS: dict[type, str] = {
    GetStep: "get",
    ListStep: "list",
    CountStep: "count",
    SumStep: "sum",
    CreateStep: "create",
    UpdateStep: "update",
    DeleteStep: "delete",
    RequireStep: "require",
    FailStep: "fail",
    LetStep: "let",
    ForEachStep: "for_each",
    ReturnStep: "return",
    UseStep: "use",
}

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
