"""Column names, table names and column types from JSON-Schema fragments (used by `schema`).

identifier("first-name") -> "first_name"      table_name("company") -> "companies"
column_type({"type": ["integer", "null"]}) -> ("integer", True)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolgen.naming import plural

if TYPE_CHECKING:
    from .schema import ColumnPlan

__all__ = [
    "JSON_TYPE",
    "column_type",
    "fits",
    "flat",
    "identifier",
    "merge_type",
    "record_props",
    "table_name",
    "typed_hint",
    "value_type",
]

_IDENT = re.compile(r"[^A-Za-z0-9_]+")
_TYPE_OF = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}
#: the JSON Schema type of each column type (`json`: any)
JSON_TYPE = {
    "string": "string",
    "datetime": "string",
    "integer": "integer",
    "number": "number",
    "boolean": "boolean",
}


def identifier(name: str) -> str:
    """A valid table or column name as close to `name` as possible."""
    cleaned = _IDENT.sub("_", name).strip("_") or "value"
    if cleaned[0].isdigit():
        cleaned = "n_" + cleaned
    if cleaned.lower().startswith("_toolgym") or cleaned.lower() == "rowid":
        cleaned = "x" + cleaned
    return cleaned[:60]


def table_name(entity: str) -> str:
    """The table of an entity: its name in the plural (`order` → `orders`, `company` → `companies`)."""
    base = identifier(entity).lower()
    ws = base.split("_")
    joint = next((i for i, w in enumerate(ws) if i > 0 and w in _JOINING), None)
    if joint is not None and joint < len(ws) - 1:  # `time_to_live` → `times_to_live`
        return "_".join((*ws[: joint - 1], plural(ws[joint - 1]), *ws[joint:]))
    head, sep, last = base.rpartition("_")
    return head + sep + plural(last)  # a plural is kept (`news_items`, `network_settings`)


#: words that join a noun to what qualifies it (`point_of_sale`, `time_to_live`)
_JOINING = frozenset("to of for per".split())


def flat(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """A fragment whose `allOf` only adds keywords to one value (`{"allOf": [{"type": "string",
    "pattern": ...}, {"description": ...}]}`, as specs override a shared schema's description)
    as one fragment; any other fragment as it is (an `allOf` of records is `record_props`' job)."""
    parts = schema.get("allOf")
    if not isinstance(parts, list) or not parts or not all(isinstance(p, dict) for p in parts):
        return schema
    if any("properties" in p or "$ref" in p or "allOf" in p for p in parts):
        return schema
    merged: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if key in merged and merged[key] != value and key not in ("description", "title"):
                return schema  # two parts disagree: not one value's keywords
            merged.setdefault(key, value)
    return {**merged, **{k: v for k, v in schema.items() if k != "allOf"}}


def column_type(schema: Mapping[str, Any]) -> tuple[str, bool]:
    """(column type, nullable) of a JSON-Schema fragment; `json` when it has no single type."""
    schema = flat(schema)
    nullable = bool(schema.get("nullable") or schema.get("x-nullable"))
    raw = schema.get("type")
    types: list[str] = []
    if isinstance(raw, str):
        types = [raw]
    elif isinstance(raw, list):
        types = [t for t in raw if isinstance(t, str)]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if not types and isinstance(options, list):
            for option in options:
                if isinstance(option, dict):
                    sub, sub_null = column_type(option)
                    nullable = nullable or sub_null or option.get("type") == "null"
                    if option.get("type") != "null":
                        types.append("object" if sub == "json" else sub)
    if "null" in types:
        nullable = True
        types = [t for t in types if t != "null"]
    if not types and isinstance(schema.get("enum"), list):
        kinds = {value_type(v) for v in schema["enum"] if v is not None}
        types = sorted(k for k in kinds if k)
    distinct = sorted(set(types))
    if distinct == ["integer", "number"]:
        distinct = ["number"]
    if len(distinct) != 1:
        return "json", nullable
    only = distinct[0]
    if only == "string" and schema.get("format") == "date-time":
        return "datetime", nullable
    if only in ("datetime",):
        return "datetime", nullable
    return _TYPE_OF.get(only, "json"), nullable


def value_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def fits(value: Any, ctype: str) -> bool:
    """Whether a column of `ctype` can hold the JSON value."""
    kind = value_type(value)
    if ctype == "json":
        return True
    if ctype == "number":
        return kind in ("integer", "number")
    if ctype == "datetime":
        return kind == "string"
    return kind == ctype


def merge_type(a: str, b: str) -> str:
    if a == b:
        return a
    if {a, b} == {"integer", "number"}:
        return "number"
    if {a, b} == {"string", "datetime"}:
        return "string"
    return "json"


def record_props(record: Mapping[str, Any] | None) -> tuple[dict[str, Any], set[str]]:
    if not isinstance(record, dict):
        return {}, set()
    if record.get("type") == "array" and isinstance(record.get("items"), dict):
        record = record["items"]
    props = record.get("properties")
    if not isinstance(props, dict):
        for key in ("allOf", "anyOf", "oneOf"):
            parts = record.get(key)
            if isinstance(parts, list):
                merged: dict[str, Any] = {}
                for part in parts:
                    if isinstance(part, dict) and isinstance(part.get("properties"), dict):
                        merged.update(part["properties"])
                if merged:
                    props = merged
                    break
    if not isinstance(props, dict):
        return {}, set()
    required = record.get("required")
    return (
        {str(k): v if isinstance(v, dict) else {} for k, v in props.items()},
        {str(r) for r in required} if isinstance(required, list) else set(),
    )


def typed_hint(col: ColumnPlan) -> dict[str, Any]:
    hint = {k: v for k, v in col.hint.items() if k not in ("readOnly", "writeOnly", "nullable", "x-nullable")}
    if col.type != "json":
        hint["type"] = JSON_TYPE[col.type]
        for key in ("anyOf", "oneOf", "allOf", "properties", "items"):
            hint.pop(key, None)
        if col.type == "datetime":
            hint["format"] = "date-time"
    if col.enum is not None:
        hint["enum"] = list(col.enum)
    elif "enum" in hint:
        del hint["enum"]
    if col.nullable:
        hint["nullable"] = True
    if col.references:
        hint["x-references"] = col.references
    return hint
