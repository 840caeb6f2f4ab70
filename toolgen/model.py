"""The generator's data model: what ingest reads, what normalization makes of it, the plan.

    files ──ingest──► RawOperation / FailedFile ──normalize──► Operation ──cluster──► Plan

`RawOperation` is one operation exactly as a source describes it; `Operation` one normalized
operation (id, tool name, parameters, entity, kind, record schema, ids consumed and produced);
`FailedFile` a file that could not be read; `Plan` the clustering's output (PLAN.json). The
JSON Schemas in `schemas/` are generated from these models (`python -m toolgym.schemas`).
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

#: The kinds of operation: a read, a create, an update, a delete, or another action.
Kind = Literal["read", "create", "update", "delete", "action"]
#: What a spec declares of an operation: it only reads, it writes, or (None) nothing.
Declared = Literal["read", "write"]

#: The input formats ingest recognises.
SourceFormat = Literal[
    "openapi-3.0",
    "openapi-3.1",
    "swagger-2.0",
    "openai-tools",
    "anthropic-tools",
    "function-list",
    "bfcl",
    "toolbench",
    "gorilla-apizoo",
    "mcp-tools",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Parameter(_Model):
    """One parameter of a raw operation, as its source declares it."""

    name: str
    location: Literal["path", "query", "header", "cookie", "body", "formData", "argument"] = Field(
        description="where the parameter goes: OpenAPI's `in`, `body` for a request-body property, "
        "`argument` for a function's argument"
    )
    required: bool = False
    description: str = ""
    schema_: dict[str, Any] = Field(default_factory=dict, alias="schema", description="its JSON Schema")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RawOperation(_Model):
    """One operation as its source describes it ($refs resolved; nothing decided yet)."""

    source: str = Field(description="the file it came from: a path, or ARCHIVE!member for an archive member")
    pointer: str = Field(description="JSON pointer to the operation in that file: /paths/~1pets/get, /3")
    format: SourceFormat
    api: str = Field(
        description="the API it belongs to (a spec's title, a tool group's or MCP server's name); "
        "operations of one api are one source for clustering"
    )
    method: str | None = Field(default=None, description="HTTP method (OpenAPI), lower case")
    path: str | None = Field(default=None, description="URL path template (OpenAPI)")
    operation_id: str | None = Field(default=None, description="OpenAPI operationId, or the function's name")
    summary: str = ""
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    parameters: list[Parameter] = Field(default_factory=list)
    input_schema: dict[str, Any] | None = Field(
        default=None,
        description="a function's own input schema (function lists, MCP tools), when it has one: "
        "its properties are the parameters too",
    )
    request_schema: dict[str, Any] | None = Field(default=None, description="the request body's schema")
    request_schema_name: str | None = Field(
        default=None, description="component/definition name it came from"
    )
    response_schema: dict[str, Any] | None = Field(
        default=None, description="the success response's schema (2xx, JSON)"
    )
    response_schema_name: str | None = None
    declared: Declared | None = Field(
        default=None,
        description="what the source declares the operation does: `read` (GET/HEAD, `type: READ`, "
        "`readOnlyHint: true`, `mutates_state: false`), `write` (PUT/PATCH/DELETE, `type: WRITE`, "
        "`readOnlyHint: false`, `destructiveHint: true`, `tool_type: write`), else None",
    )
    declared_by: str | None = Field(
        default=None, description="where the declaration was read: `method GET`, `type: WRITE`, ..."
    )


class Operation(_Model):
    """One normalized operation, ready to cluster and (later) to compile into a tool."""

    id: str = Field(description="stable and unique across the corpus (source + pointer based)")
    source: str
    pointer: str
    format: SourceFormat
    api: str
    name: str = Field(description="tool name: ^[a-zA-Z0-9_-]{1,64}$, unique within its api")
    description: str
    input_schema: dict[str, Any] = Field(
        description="one JSON Schema object: path, query, header, body merged"
    )
    entity: str = Field(description="the entity it acts on, snake_case singular (e.g. `order`)")
    kind: Kind
    declared: Declared | None = Field(
        default=None,
        description="what the spec declares (`read` / `write`, None: nothing); `kind` never contradicts it",
    )
    declared_by: str | None = Field(default=None, description="where the declaration was read")
    record_schema: dict[str, Any] | None = Field(
        default=None, description="the entity's record schema (from response or request bodies)"
    )
    consumes: list[str] = Field(
        default_factory=list, description="entities whose ids it takes as arguments (`order` for order_id)"
    )
    produces: list[str] = Field(default_factory=list, description="entities whose ids its result holds")
    path_prefix: str | None = Field(
        default=None, description="the path's leading static segments, for clustering"
    )
    query: list[str] = Field(
        default_factory=list,
        description="arguments sent in the URL's query string (OpenAPI): they select or shape a request",
    )
    dropped: list[dict[str, str]] = Field(
        default_factory=list, description="parameters left out of input_schema: {name, reason}"
    )
    renamed: list[dict[str, str]] = Field(
        default_factory=list, description="parameter name clashes resolved: {from, to, reason}"
    )


class FailedFile(_Model):
    """A file that could not be read: why, and where in it when known."""

    path: str
    reason: str


class SkippedOperation(_Model):
    id: str
    reason: str


class PlannedDomain(_Model):
    name: str = Field(description="readable and stable: the dominant api and entities")
    operations: list[str] = Field(description="operation ids")
    apis: list[str] = Field(default_factory=list, description="the apis its operations come from")
    entities: list[str] = Field(default_factory=list)
    tools: dict[str, str] = Field(
        default_factory=dict,
        description="operation id -> its tool name in this domain: unique within the domain (an "
        "operation's name is unique within its api; two apis' same-named tools get the api's slug)",
    )


class Plan(_Model):
    """PLAN.json: the domains, the operations skipped (with why), the files that failed (with why)."""

    domains: list[PlannedDomain] = Field(default_factory=list)
    skipped: list[SkippedOperation] = Field(default_factory=list)
    failed_files: list[FailedFile] = Field(default_factory=list)
    seed: int = 0
    min_tools: int = 5
    max_tools: int = 40
