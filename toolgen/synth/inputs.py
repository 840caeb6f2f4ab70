"""The input schema an agent sees for a generated tool: the spec's, made valid JSON Schema 2020-12.

    input_schema(op) -> {"type": "object", "properties": {...}, "required": [...], "additionalProperties": false}

Names, descriptions, required and optional arguments stay as the spec wrote them; what a
2020-12 validator would reject or `toolgym check` would call a typo is repaired keeping its
information: `example` → `examples`, `nullable: true` → a `null` type (and `x-nullable`), other
unknown words → `x-<word>`, a broken `pattern` or bound dropped, a leftover `$ref` dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from simulator.codegen.fastschema import KNOWN_KEYWORDS, linear_time_problem
from toolgen.model import Operation

__all__ = ["clean_schema", "input_schema"]


def input_schema(op: Operation, replaced: Mapping[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The schema the agent sees: the spec's properties, descriptions and required list, no others
    (a property in `replaced`, a key argument relaxed to accept the table's keys, as given there)."""
    props = op.input_schema.get("properties") or {}
    required = [r for r in op.input_schema.get("required") or [] if r in props]
    replaced = replaced or {}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {k: replaced[k] if k in replaced else _clean(v) for k, v in props.items()},
    }
    if required:
        schema["required"] = list(dict.fromkeys(required))
    schema["additionalProperties"] = False
    return schema


def clean_schema(node: Any) -> dict[str, Any]:
    """One property's schema as the agent sees it (what 2020-12 would reject fixed or dropped)."""
    cleaned = _clean(node)
    return cleaned if isinstance(cleaned, dict) else {}


def _clean(node: Any, depth: int = 0) -> Any:
    """A property schema with what JSON Schema 2020-12 would reject as a schema fixed or dropped."""
    if not isinstance(node, dict) or depth > 32:
        return node if isinstance(node, dict) else {}
    out: dict[str, Any] = {}
    unenforced: str | None = None
    for key, value in node.items():
        if key == "required" and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            continue
        if key in ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"):
            if isinstance(value, dict):
                out[key] = {str(k): _clean(v, depth + 1) for k, v in value.items()}
            continue
        if key in ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"):
            if isinstance(value, dict):
                out[key] = _clean(value, depth + 1)
            elif isinstance(value, bool) and key != "items":
                out[key] = value
            elif isinstance(value, list) and key == "items":
                out["prefixItems"] = [_clean(v, depth + 1) for v in value]
            continue
        if key in ("allOf", "anyOf", "oneOf", "prefixItems"):
            if isinstance(value, list) and value:
                out[key] = [_clean(v, depth + 1) for v in value]
            continue
        if key == "type":
            kept = _types(value)
            if kept:
                out[key] = kept
            continue
        if key == "enum" and not (isinstance(value, list) and value):
            continue
        if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
            if (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and (key != "multipleOf" or value > 0)
            ):
                out[key] = value
            continue
        if key in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"):
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                out[key] = value
            continue
        if key == "pattern":
            if isinstance(value, str) and linear_time_problem(value) is None:
                out[key] = value
            elif isinstance(value, str) and _compiles(value):
                unenforced = value  # a backtracking engine's pattern: the spec's words, not a check
            continue
        if key in ("$ref", "$id", "$schema", "$anchor", "$dynamicRef", "uniqueItems") and not isinstance(
            value, str | bool
        ):
            continue
        if key in ("$ref", "$dynamicRef"):
            continue  # refs are resolved by ingest; a leftover one would point nowhere
        if key == "example" and "examples" not in node:
            out["examples"] = [value]
        elif key == "nullable" and value is True:
            out["x-nullable"] = True
        elif key in KNOWN_KEYWORDS or key.startswith("x-"):
            out[key] = value
        elif key != "optional":  # `optional` is the required list's business
            out[f"x-{key}"] = value
    if out.get("x-nullable") and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    if unenforced is not None:
        said = out.get("description")
        said = said.rstrip() if isinstance(said, str) else ""
        out["description"] = f"{said} Must match the pattern {unenforced}.".lstrip()
    return out


_JSON_TYPES = frozenset("object array string number integer boolean null".split())


def _types(value: Any) -> Any:
    if isinstance(value, str):
        return value if value in _JSON_TYPES else None
    if isinstance(value, list):
        kept = [v for v in value if isinstance(v, str) and v in _JSON_TYPES]
        return list(dict.fromkeys(kept)) or None
    return None


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True
