"""Domain tools as MCP tools: the wire form of each tool, the answer channel, and results.

Every domain tool is served with exactly its name, description and input JSON Schema (no
generated title, no `_meta`); annotations mark reads read-only and idempotent, and writes
destructive when they update or delete rows. The server adds `submit_answer`, the agent's final
answer. A result is JSON text (plus structured content for an object); a tool error is `isError`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from fastmcp.tools import Tool as MCPToolBase
from fastmcp.tools.base import ToolResult
from mcp_types import TextContent, ToolAnnotations
from mcp_types import Tool as WireTool
from pydantic import PrivateAttr

from ..format.spec import ANSWER_TOOL
from ..plan.runsteps import CompiledTool

#: The answer channel the server adds to every domain: the agent's final answer, then the end.
SUBMIT_ANSWER = ANSWER_TOOL
SUBMIT_ANSWER_DESCRIPTION = (
    "Submit your final answer to the user and end this session. Call it once, when you are done: "
    "put in `answer` everything the user asked you to tell them (the values, names, amounts or "
    "ids they asked for), in plain words. After it no tool can be called in this session."
)
SUBMIT_ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {
            "type": "string",
            "description": "Your final answer to the user, with every value they asked for.",
            "maxLength": 20000,
        }
    },
    "required": ["answer"],
    "additionalProperties": False,
}


def tool_annotations(tool: CompiledTool) -> ToolAnnotations:
    """Reads are read-only and idempotent; writes that update or delete rows (the compiled tool's
    `destructive` analysis, fragments and loops included) are destructive."""
    if tool.spec.kind == "read":
        return ToolAnnotations(
            read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        )
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=tool.destructive,
        idempotent_hint=False,
        open_world_hint=False,
    )


#: The `_meta` key of the episode handle: a stateless session's first result carries it, and the
#: client passes it back in each request's `_meta` (or as `&handle=` in the URL).
HANDLE_META = "toolgym/handle"

CallFn = Callable[[str, dict[str, Any]], Awaitable[ToolResult]]


class DomainTool(MCPToolBase):
    """One domain tool as an MCP tool: the schema is served verbatim, the call goes to a session."""

    call: CallFn
    _wire: WireTool | None = PrivateAttr(default=None)  # `tools/list`'s entry, made once

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return await self.call(self.name, arguments)

    def to_mcp_tool(self, **overrides: Any) -> WireTool:
        # No generated title and no fastmcp `_meta`: exactly the domain's name, description, schema.
        # A domain tool never changes, so its plain listing (every session lists it) is built once.
        if overrides.keys() <= {"name"} and overrides.get("name", self.name) == self.name:
            if self._wire is None:
                self._wire = super().to_mcp_tool().model_copy(update={"title": None, "meta": None})
            return self._wire
        return super().to_mcp_tool(**overrides).model_copy(update={"title": None, "meta": None})


def ok_result(value: Any) -> ToolResult:
    """A tool's result: JSON text, plus structured content when it is an object.

    The value is already plain JSON (an episode's result), so it is not validated again.
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return ToolResult.model_construct(
        content=[TextContent(type="text", text=text)],
        structured_content=value if isinstance(value, dict) else None,
        meta=None,
        is_error=False,
    )


def error_result(message: str) -> ToolResult:
    """A tool error the agent sees: `isError` with the message as text."""
    return ToolResult(content=[TextContent(type="text", text=message)], is_error=True)
