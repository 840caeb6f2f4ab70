"""Shared by the toolgen.synth tests: the fixture specs, planned and normalized by the real pipeline."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from toolgen.model import Operation, PlannedDomain
from toolgen.pipeline import generate

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "synth"
SHOP = FIXTURES / "shop_openapi.yaml"
WEATHER = FIXTURES / "weather_tools.json"


@cache
def planned(spec: Path) -> tuple[PlannedDomain, dict[str, Operation]]:
    """The one domain the pipeline plans from `spec`, and its operations by id."""
    generated = generate([spec], workers=1)
    assert len(generated.plan.domains) == 1, generated.plan
    return generated.plan.domains[0], {op.id: op for op in generated.operations}


def op_id(spec: Path, tool: str) -> str:
    """The operation id of the tool named `tool` in `spec`'s domain."""
    plan, _ = planned(spec)
    return next(i for i, name in plan.tools.items() if name == tool)


def make_op(
    name: str, kind: str, props: dict[str, Any], required: list[str] | None = None, **extra: Any
) -> Operation:
    """A function-list operation on `entity` (default `widget`) with these arguments."""
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    api = extra.pop("api", "t")
    return Operation(
        id=f"{api}:{name}",
        source="mem.json",
        pointer=extra.pop("pointer", f"/{name}"),
        format=extra.pop("format", "function-list"),
        api=api,
        name=name,
        description=extra.pop("description", name.replace("_", " ")),
        input_schema=schema,
        entity=extra.pop("entity", "widget"),
        kind=kind,
        **extra,
    )


def planned_from(*ops: Operation) -> tuple[PlannedDomain, dict[str, Operation]]:
    """A planned domain `t` of exactly these operations."""
    plan = PlannedDomain(name="t", operations=[o.id for o in ops], tools={o.id: o.name for o in ops})
    return plan, {o.id: o for o in ops}
