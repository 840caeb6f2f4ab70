"""Shared by the toolgen.synth tests: the fixture specs, planned and normalized by the real pipeline."""

from __future__ import annotations

from functools import cache
from pathlib import Path

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
