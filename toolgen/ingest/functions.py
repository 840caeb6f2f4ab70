"""Function-calling and MCP tool files → `RawOperation`s.

Tools are found the way count_ops.py finds them (so the counts agree): a dict with a `name` (or
`api_name`) and a parameter key, an OpenAI `{"type": "function", "function": {...}}`, a ToolBench
group's `api_list`, a list of `{name, description}` objects (Docker catalogue tools), nested in
any container (MCP `tools/list` results, LiveMCPBench servers, tau2 tool summaries). BFCL question
files (JSON lines, each line offering functions) yield each function once, by name. Each tool's
format is told by its shape; its arguments become `input_schema` (a JSON Schema object, BFCL's
Python type names mapped to JSON Schema's) and `parameters` (location `argument`; `query` for a
ToolBench GET, which RapidAPI sends in the query string).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, Literal

from toolgen.ingest.declared import WRAPPER_KEYS, http_declared, tool_declared
from toolgen.ingest.openapi import escape
from toolgen.model import Parameter, RawOperation, SourceFormat

TOOL_PARAM_KEYS = (
    "parameters", "input_schema", "inputSchema", "arguments", "parameter", "api_arguments",
    "required_parameters",
)  # fmt: skip
_MAX_DEPTH = 12
_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array", "list": "array", "int": "integer",
               "str": "string", "bool": "boolean", "String": "string", "Boolean": "boolean",
               "HashMap": "object", "ArrayList": "array", "Array": "array", "long": "integer",
               "double": "number", "char": "string", "byte": "integer", "short": "integer"}  # fmt: skip
_JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}


def is_tool(node: Any) -> bool:
    if not isinstance(node, dict):
        return False
    if node.get("type") == "function" and isinstance(node.get("function"), dict):
        return True
    name = node.get("name") or node.get("api_name")
    if not isinstance(name, str):
        return False
    return any(k in node for k in TOOL_PARAM_KEYS) or "api_call" in node


#: (pointer, tool, group name, the dict wrapping the tool with its declared kind, if any)
Found = tuple[str, dict[str, Any], str | None, dict[str, Any] | None]


def find_tools(node: Any, pointer: str, out: list[Found], group: str | None = None, depth: int = 0,
               wrapper: dict[str, Any] | None = None) -> None:  # fmt: skip
    """Collect (pointer, tool, group name, wrapper) — a tool is not descended into."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(node, list):
        items = [(i, x) for i, x in enumerate(node) if isinstance(x, dict)]
        if (
            items
            and all(isinstance(x.get("name"), str) and "description" in x for _, x in items)
            and any(is_tool(x) for _, x in items)
        ):
            out.extend((f"{pointer}/{i}", x, group, None) for i, x in items)
            return
        for i, x in enumerate(node):
            find_tools(x, f"{pointer}/{i}", out, group, depth + 1)
    elif isinstance(node, dict):
        if is_tool(node):
            out.append((pointer, node, group, wrapper))
            return
        here = _group_name(node) or group
        if isinstance(node.get("api_list"), list):  # ToolBench / RapidAPI tool group
            out.extend(
                (f"{pointer}/api_list/{i}", a, here, None)
                for i, a in enumerate(node["api_list"])
                if isinstance(a, dict)
            )
            return
        # a wrapper declaring its function's kind beside it (tau2: {"schema": fn, "tool_type": ...})
        beside = node if any(k in node for k in WRAPPER_KEYS) else None
        for key, value in node.items():
            if isinstance(value, dict | list):
                find_tools(value, f"{pointer}/{escape(str(key))}", out, here, depth + 1, beside)


def _group_name(node: dict[str, Any]) -> str | None:
    for key in ("tool_name", "server_name"):
        if isinstance(node.get(key), str) and node[key].strip():
            return str(node[key]).strip()
    info = node.get("server_info")
    if isinstance(info, dict) and isinstance(info.get("name"), str):
        return str(info["name"])
    if isinstance(node.get("name"), str) and isinstance(node.get("tools"), dict | list):
        return str(node["name"])
    return None


def _schema_types(schema: Any, depth: int = 0) -> Any:
    """BFCL-style schemas (`dict`, `float`, `any`, per-property `required: true`) → JSON Schema."""
    if depth > 32 or not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str) and value not in _JSON_TYPES:
            mapped = _BFCL_TYPES.get(value)
            if mapped:
                out["type"] = mapped
            continue
        if key in ("properties", "patternProperties") and isinstance(value, dict):
            out[key] = {k: _schema_types(v, depth + 1) for k, v in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = _schema_types(value, depth + 1)
        elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
            out[key] = [_schema_types(v, depth + 1) for v in value]
        elif key == "required" and isinstance(value, bool):
            continue  # a property-level `required: true` (ToolUniverse): lifted below
        else:
            out[key] = value
    props = out.get("properties")
    if isinstance(props, dict) and not isinstance(out.get("required"), list):
        lifted = [k for k, v in props.items() if isinstance(schema["properties"].get(k), dict)
                  and schema["properties"][k].get("required") is True]  # fmt: skip
        if lifted:
            out["required"] = lifted
    return out


def _argument_list(items: list[Any], extra_optional: list[Any] | None = None) -> dict[str, Any]:
    """A list of `{name, type, description|desc, required}` → a JSON Schema object."""
    props: dict[str, Any] = {}
    required: list[str] = []
    for optional, group in ((False, items), (True, extra_optional or [])):
        for arg in group:
            if not isinstance(arg, dict) or not isinstance(arg.get("name"), str):
                continue
            prop: dict[str, Any] = {}
            kind = arg.get("type")
            if isinstance(kind, str) and kind:
                low = kind.lower()
                prop["type"] = low if low in _JSON_TYPES else _BFCL_TYPES.get(low, "string")
            text = arg.get("description", arg.get("desc"))
            if isinstance(text, str) and text:
                prop["description"] = text
            if "default" in arg and arg["default"] not in ("", None):
                prop["default"] = arg["default"]
            props[arg["name"]] = prop
            if (not optional and arg.get("required", extra_optional is not None)) or arg.get(
                "required"
            ) is True:
                required.append(arg["name"])
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


def _described_args(args: dict[str, Any]) -> dict[str, Any]:
    """Gorilla API-zoo `api_arguments`: name → description (or a nested map of them)."""
    props: dict[str, Any] = {}
    for name, value in args.items():
        if isinstance(value, dict):
            props[str(name)] = {"type": "object", **_described_args(value)}
        elif isinstance(value, list):
            props[str(name)] = {"type": "array", "description": "; ".join(map(str, value))}
        else:
            props[str(name)] = {"description": str(value)}
    return {"type": "object", "properties": props}


def _tool_parts(tool: dict[str, Any]) -> tuple[SourceFormat, dict[str, Any], dict[str, Any]]:
    """(format, the function's own fields, its input schema)."""
    if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        fn = tool["function"]
        return "openai-tools", fn, _schema_types(fn.get("parameters") or {"type": "object"})
    if "inputSchema" in tool:
        return "mcp-tools", tool, _schema_types(tool.get("inputSchema") or {"type": "object"})
    if "input_schema" in tool:
        return "anthropic-tools", tool, _schema_types(tool.get("input_schema") or {"type": "object"})
    if "api_list" in tool or "required_parameters" in tool or "optional_parameters" in tool:
        return (
            "toolbench",
            tool,
            _argument_list(_list(tool.get("required_parameters")), _list(tool.get("optional_parameters"))),
        )
    if "api_call" in tool or "api_arguments" in tool:
        args = tool.get("api_arguments")
        return "gorilla-apizoo", tool, _described_args(args) if isinstance(args, dict) else {"type": "object"}
    if isinstance(tool.get("arguments"), list):  # Docker MCP catalogue tools
        return "mcp-tools", tool, _argument_list(tool["arguments"])
    for key in ("parameters", "parameter", "arguments"):
        value = tool.get(key)
        if isinstance(value, list):
            return "function-list", tool, _argument_list(value)
        if isinstance(value, dict):
            return "function-list", tool, _schema_types(value)
    return "function-list", tool, {"type": "object", "properties": {}}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _operation(
    source: str,
    pointer: str,
    tool: dict[str, Any],
    api: str,
    bfcl: bool,
    wrapper: dict[str, Any] | None = None,
) -> RawOperation:
    fmt, fn, schema = _tool_parts(tool)
    if bfcl:
        fmt = "bfcl"
    name = fn.get("name") or fn.get("api_name")
    if not isinstance(schema, dict):
        schema = {"type": "object"}
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    required = set(schema.get("required") or []) if isinstance(schema.get("required"), list) else set()
    method = tool.get("method")
    http = method.lower() if isinstance(method, str) and fmt == "toolbench" else None
    # (RapidAPI sends a GET's or a DELETE's arguments in the query string)
    location: Literal["query", "argument"] = "query" if http in ("get", "head", "delete") else "argument"
    params = [
        Parameter(
            name=str(key),
            location=location,
            required=key in required,
            description=str(value.get("description") or "") if isinstance(value, dict) else "",
            schema=value if isinstance(value, dict) else {},
        )
        for key, value in props.items()
    ]
    description = fn.get("description", fn.get("api_description", ""))
    declared, declared_by = tool_declared(tool, wrapper)
    if declared is None and http is not None:
        declared, declared_by = http_declared(http, None)
    return RawOperation.model_construct(
        source=source,
        pointer=pointer,
        format=fmt,
        api=api,
        method=http,
        path=None,
        operation_id=str(name) if name is not None else None,
        summary="",
        description=description if isinstance(description, str) else "",
        tags=[],
        parameters=params,
        input_schema=schema,
        request_schema=None,
        request_schema_name=None,
        response_schema=None,
        response_schema_name=None,
        declared=declared,
        declared_by=declared_by,
    )


def _file_api(source: str) -> str:
    """An api name from the file's path: its stem, or its folder for a generic stem (tools.json)."""
    member = source.rsplit("!", 1)[-1]
    path = PurePosixPath(member)
    stem = path.stem
    if stem.lower() in ("tools", "tools_list", "index", "openapi", "spec") and path.parent.name:
        return path.parent.name
    return stem.removesuffix("_tools") or stem


def read_tools(source: str, fmt: str, doc: Any) -> list[RawOperation]:
    """The tools of a function-calling or MCP file ([] when it holds none: not a spec)."""
    api = _file_api(source)
    if fmt == "jsonl":
        return _read_lines(source, doc, api)
    found: list[Found] = []
    find_tools(doc, "", found)
    return [_operation(source, ptr, tool, group or api, False, wrap) for ptr, tool, group, wrap in found]


def _read_lines(source: str, lines: list[Any], api: str) -> list[RawOperation]:
    out: list[RawOperation] = []
    seen: set[str] = set()
    for number, line in enumerate(lines):
        if isinstance(line, dict) and isinstance(line.get("function"), list):  # BFCL question line
            for index, fn in enumerate(line["function"]):
                if not isinstance(fn, dict):
                    continue
                name = str(fn.get("name"))
                if name in seen:
                    continue
                seen.add(name)
                out.append(_operation(source, f"/{number}/function/{index}", fn, api, True))
        elif isinstance(line, dict) and "api_call" in line and not is_tool(line):
            continue  # APIBench model-hub call docs: not API operations
        else:
            found: list[Found] = []
            find_tools(line, f"/{number}", found)
            out.extend(
                _operation(source, ptr, tool, group or api, True, wrap) for ptr, tool, group, wrap in found
            )
    return out
