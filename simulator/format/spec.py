"""The domain format as pydantic models: tables, tools and their operations.

These models are the contract; `schemas/*.schema.json` are generated from them
(`python -m simulator.schemas`), and a test fails when a file drifts. The
semantics of operations and expressions are in docs/domain-format.md. The model of a task line
(tasks.jsonl: gold calls, answer facts) is the grading side's: `scoring.tasks.Task`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ..plan.ids import parse_pattern
from ..runtime.clock import rendering_problem
from .layout import Collection, Part, SnapshotLayout
from .operations import (
    FILTER_ALIASES,
    STEP_KINDS,
    CountStep,
    CreateStep,
    DeleteStep,
    Effect,
    FailStep,
    Filter,
    FilterOp,
    ForEachStep,
    GetStep,
    LetStep,
    ListStep,
    RelatedRows,
    RequireStep,
    ReturnStep,
    Step,
    StepModel,
    SumStep,
    UpdateStep,
    UseStep,
    register_step,
    step_spellings,
    unregister_step,
    walk_steps,
)
from .specbase import Expr
from .specbase import SpecModel as _Model

#: the domain format's models (the step models live in `simulator.format.operations`, re-exported here)
__all__ = [
    "ANSWER_TOOL",
    "Answers",
    "Clock",
    "Collection",
    "Column",
    "ColumnType",
    "CounterIds",
    "CountStep",
    "CreateStep",
    "DeleteStep",
    "DomainSpec",
    "Effect",
    "Expr",
    "FailStep",
    "Filter",
    "FILTER_ALIASES",
    "FilterOp",
    "ForEachStep",
    "Fragment",
    "GetStep",
    "HashIds",
    "IdScheme",
    "LetStep",
    "ListStep",
    "NAME",
    "Part",
    "PatternIds",
    "UuidIds",
    "register_step",
    "RelatedRows",
    "RequireStep",
    "ReturnStep",
    "SEMVER",
    "SnapshotLayout",
    "Step",
    "STEP_KINDS",
    "step_spellings",
    "StepModel",
    "SumStep",
    "Table",
    "Tool",
    "unregister_step",
    "UpdateStep",
    "UseStep",
    "walk_steps",
]

ColumnType = Literal["string", "integer", "number", "boolean", "datetime", "json"]


#: The tool the MCP server adds as the agent's answer channel; a domain may not define a tool of that name.
ANSWER_TOOL = "submit_answer"

SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


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


class UuidIds(_Model):
    """Generated keys: a version-4 UUID derived from the episode's seed (for `format: uuid` keys)."""

    scheme: Literal["uuid"]


IdScheme = Annotated[HashIds | CounterIds | PatternIds | UuidIds, Field(discriminator="scheme")]


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
    def _ids_fit(cls, value: HashIds | CounterIds | PatternIds | UuidIds | None, info: ValidationInfo) -> Any:
        if value is None:
            return value
        if info.data.get("id_prefix"):
            raise ValueError("give the prefix as `ids.prefix` (not `id_prefix`) when `ids` is given")
        key = info.data.get("primary_key")
        last = key if isinstance(key, str) else key[-1] if key else None
        column = (info.data.get("columns") or {}).get(last)
        if column is not None and column.type == "integer":
            if not isinstance(value, CounterIds) or value.prefix or value.width:
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
    snapshot: SnapshotLayout | None = Field(
        default=None,
        description="how the tables nest into the source's own shape (`toolgym export --format snapshot`)",
        exclude_if=lambda v: v is None,
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
