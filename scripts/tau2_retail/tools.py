"""The tools: tau2's names, descriptions and parameter schemas, with the operations of operations.py."""

from __future__ import annotations

from typing import Any

import yaml

from .operations import FRAGMENTS_YAML, OPERATIONS_YAML
from .tables import PM_FIELDS

#: comments written above a tool in the generated domain.yaml (the dump drops operations.py's YAML comments)
TOOL_NOTES = {
    "calculate": (
        "WORKAROUND: the invalid-character test lists the ASCII characters tau2 rejects and tests for cased "
        "letters (no operator lists a string's characters); evaluation errors share one message"
    ),
    "modify_pending_order_items": "tau2 quirk kept: every modified item takes the price and options of the LAST new variant",
    "transfer_to_human_agents": "kind write (tau2: generic, no state): the transfer is recorded in `handoffs`",
}

WRITE_TOOLS = {
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
}
#: tools whose kind here differs from tau2's `mutates_state`, and why
KIND_OVERRIDES = {"transfer_to_human_agents": "write"}  # records a handoff row (tau2 records nothing)

#: characters tau2's calculate accepts; every other ASCII character is listed for the invalid-character test
CALC_ALPHABET = set("0123456789+-*/(). ")


def _bad_chars() -> list[str]:
    """The ASCII characters calculate rejects, as literal expressions (a leading `$` is escaped)."""
    return ["$$" if c == "$" else c for c in map(chr, range(128)) if c not in CALC_ALPHABET]


def _placeholders() -> dict[str, str]:
    """@NAME@ placeholders in operations.py's YAML -> flow-style YAML text."""

    def dump(value: Any) -> str:
        return yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()

    return {
        "@PM_FIELDS@": dump({k: list(v) for k, v in PM_FIELDS.items()}),
        "@BAD_CHARS@": dump(_bad_chars()),
    }


def _load_yaml(text: str) -> Any:
    for key, value in _placeholders().items():
        text = text.replace(key, value)
    return yaml.safe_load(text)


def build_fragments() -> dict[str, Any]:
    """domain.yaml's `fragments:` (tau2's Order and User views)."""
    return _load_yaml(FRAGMENTS_YAML)


def build_tools(schemas: dict[str, Any]) -> list[dict[str, Any]]:
    """domain.yaml's `tools:`, in tau2's order; each tau2 tool must have an operation, and vice versa."""
    operations = _load_yaml(OPERATIONS_YAML)
    tools = []
    names = []
    for entry in schemas["assistant"]:
        fn = entry["schema"]["function"]
        name = fn["name"]
        names.append(name)
        if name not in operations:
            raise SystemExit(f"no operation written for tau2 tool {name!r}")
        kind = "write" if entry.get("mutates_state") else "read"
        if (kind == "write") != (name in WRITE_TOOLS):
            raise SystemExit(
                f"tool {name!r}: tau2 says mutates_state={entry.get('mutates_state')}, the port disagrees"
            )
        tools.append(
            {
                "name": name,
                "description": fn["description"],
                "kind": KIND_OVERRIDES.get(name, kind),
                "input_schema": fn["parameters"],
                "operation": operations[name],
            }
        )
    extra = set(operations) - set(names)
    if extra:
        raise SystemExit(f"operations for tools tau2 does not have: {sorted(extra)}")
    return tools
