"""A domain's tools as the model sees them, in the three wire forms trainers use.

    tool_list(domain, "openai")     # [{"type": "function", "function": {name, description, ...}}]
    tool_list(domain, "anthropic")  # [{name, description, input_schema}]
    tool_list(domain, "mcp")        # [{name, description, inputSchema, annotations}]

The MCP form is what the server's `tools/list` returns; the other two re-key it. `submit_answer`
is listed when the domain has tasks graded on answer facts. Design notes: docs/design/serving.md.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from mcp_types import ToolAnnotations

from scoring.tasks import graded
from simulator import Domain
from simulator.serve.mcptools import (
    SUBMIT_ANSWER,
    SUBMIT_ANSWER_DESCRIPTION,
    SUBMIT_ANSWER_SCHEMA,
    DomainTool,
    tool_annotations,
)

ToolFormat = Literal["openai", "anthropic", "mcp"]
FORMATS: tuple[str, ...] = get_args(ToolFormat)

#: `submit_answer` writes nothing to the database and ends the session (as the server registers it).
SUBMIT_ANSWER_ANNOTATIONS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)


async def _not_served(name: str, arguments: dict[str, Any]) -> Any:  # pragma: no cover - never called
    raise RuntimeError("a listed tool is not served")


def has_answer_tasks(domain: Domain) -> bool:
    """Whether any task of the domain is graded on answer facts (then `submit_answer` is listed)."""
    return any(task.answer_facts for task in graded(domain).tasks)


def mcp_tools(domain: Domain, answer: bool | None = None) -> list[dict[str, Any]]:
    """The domain's tools in the MCP `tools/list` form, the server's own wire conversion.

    `answer`: list `submit_answer` (default: when the domain has answer-fact tasks).
    """
    tools = [
        DomainTool(
            name=compiled.spec.name,
            description=compiled.spec.description,
            parameters=compiled.spec.input_schema,
            annotations=tool_annotations(compiled),
            call=_not_served,
        )
        for compiled in domain.tools.values()
    ]
    if has_answer_tasks(domain) if answer is None else answer:
        tools.append(
            DomainTool(
                name=SUBMIT_ANSWER,
                description=SUBMIT_ANSWER_DESCRIPTION,
                parameters=SUBMIT_ANSWER_SCHEMA,
                annotations=SUBMIT_ANSWER_ANNOTATIONS,
                call=_not_served,
            )
        )
    return [t.to_mcp_tool().model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def convert(tools: list[dict[str, Any]], form: ToolFormat) -> list[dict[str, Any]]:
    """MCP-form tools in another form (the same name, description and input schema)."""
    if form == "mcp":
        return tools
    if form == "openai":
        return [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t.get("description", ""),
                    "parameters": t["inputSchema"],
                },
            }
            for t in tools
        ]
    if form == "anthropic":
        return [
            {"name": t["name"], "description": t.get("description", ""), "input_schema": t["inputSchema"]}
            for t in tools
        ]
    raise ValueError(f"unknown tool format {form!r}: use one of {', '.join(FORMATS)}")


def tool_list(domain: Domain, form: ToolFormat, answer: bool | None = None) -> list[dict[str, Any]]:
    """The domain's tools in `form` (openai, anthropic or mcp); see the module docstring."""
    if form not in FORMATS:
        raise ValueError(f"unknown tool format {form!r}: use one of {', '.join(FORMATS)}")
    return convert(mcp_tools(domain, answer), form)


def all_formats(domain: Domain, answer: bool | None = None) -> dict[str, list[dict[str, Any]]]:
    """{format: tools} for every format, converted from one MCP listing."""
    tools = mcp_tools(domain, answer)
    return {form: convert(tools, form) for form in FORMATS}  # type: ignore[arg-type]
