"""The operator table of docs/domain-format.md and the JSON Schema of expressions, from the registry.

    python -m simulator.lang.docs            # rewrite the table between the markers in the docs
    python -m toolgym.schemas                # regenerate schemas/ (expressions from `expr_defs()`)

Tests fail when either has drifted from the registry.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .registry import ALIASES, OPERATORS, Category, Operator

BEGIN, END = "<!-- operators:begin -->", "<!-- operators:end -->"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "domain-format.md"
EXPR_REF = {"$ref": "#/$defs/Expr"}
#: what a model's expression field puts in its JSON Schema; `with_expr_defs` turns it into `EXPR_REF`
#: (pydantic cannot emit a `$ref` to a definition it does not generate itself)
EXPR_SCHEMA = {"x-toolgym-expression": True}


def _ordered() -> list[Operator]:
    rank = {str(c): i for i, c in enumerate(Category)}
    ops = list(OPERATORS.values())
    return sorted(ops, key=lambda op: rank.get(op.category, len(rank)))  # stable: registration order within


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def operator_table() -> str:
    """The markdown table of every operator: category, how it is written, null rule, what it gives."""
    lines = [
        "| category | operator | operand | null | gives |",
        "|---|---|---|---|---|",
    ]
    for op in _ordered():
        old = "".join(f" (old: `{a}`)" for a in op.aliases)
        lines.append(
            f"| {op.category} | `{op.name}`{old} | `{_cell(op.signature)}` | {op.null.value} | {_cell(op.doc)} |"
        )
    return "\n".join(lines) + "\n"


def with_table(text: str, table: str | None = None) -> str:
    """`text` with the generated table between the markers (ValueError when they are missing)."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the operator table markers {BEGIN} / {END} are missing")
    return text[: start + len(BEGIN)] + "\n" + (table or operator_table()) + text[end:]


def _operand_schema(op: Operator) -> dict[str, Any]:
    if op.operand_schema is not None:
        return op.operand_schema
    if op.arity is None:
        return EXPR_REF  # one expression, or a list of them
    exactly = {"type": "array", "items": EXPR_REF, "minItems": op.arity, "maxItems": op.arity}
    if op.arity == 1:  # bare, or a list of one
        return {
            "anyOf": [
                {"type": ["null", "boolean", "number", "string"]},
                {"$ref": "#/$defs/Operator"},
                exactly,
            ]
        }
    return exactly


def expr_defs() -> dict[str, Any]:
    """`$defs` entries for expressions: `Expr` (literal, reference, list or operator) and `Operator`."""
    properties: dict[str, Any] = {}
    for op in OPERATORS.values():
        properties[op.name] = {**_operand_schema(op), "description": f"{op.signature}: {op.doc}"}
    for alias, name in ALIASES.items():
        properties[alias] = {
            **_operand_schema(OPERATORS[name]),
            "description": f"old spelling of {name}",
            "deprecated": True,
        }
    return {
        "Expr": {
            "description": "an expression: a literal, a `$reference`, a list of expressions, or a one-key operator mapping",
            "anyOf": [
                {"type": ["null", "boolean", "number", "string"]},
                {"type": "array", "items": EXPR_REF},
                {"$ref": "#/$defs/Operator"},
            ],
        },
        "Operator": {
            "description": "a one-key mapping naming an operator; its value is the operand",
            "type": "object",
            "minProperties": 1,
            "maxProperties": 1,
            "properties": dict(sorted(properties.items())),
            "additionalProperties": False,
        },
    }


def with_expr_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """A model's JSON Schema with its expression fields pointing at `$defs/Expr` (added when used)."""
    used = False

    def swap(value: Any) -> Any:
        nonlocal used
        if isinstance(value, dict):
            out = {k: swap(v) for k, v in value.items() if k not in EXPR_SCHEMA}
            if all(value.get(k) == v for k, v in EXPR_SCHEMA.items()):
                used = True
                out = {**EXPR_REF, **out}
            return out
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value

    swapped = swap(schema)
    if used:
        swapped["$defs"] = {**swapped.get("$defs", {}), **expr_defs()}
    return swapped


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else DOCS
    path.write_text(with_table(path.read_text(encoding="utf-8")), encoding="utf-8")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
