"""Write the JSON Schema files in `schemas/` from the pydantic models (`python -m toolgym.schemas`).

A test regenerates them in memory and fails when a committed file has drifted from its model.
Expressions (`$defs/Expr`, `$defs/Operator`) come from the operator registry, `simulator.lang`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from scoring.tasks import Task
from simulator.format.spec import DomainSpec
from simulator.lang.docs import with_expr_defs
from simulator.runtime.transcript import Transcript
from toolgen.model import Operation, Plan

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"


def models() -> dict[str, type[BaseModel]]:
    """File name -> model, for every file format a user writes or reads."""
    found: dict[str, type[BaseModel]] = {
        "domain.schema.json": DomainSpec,
        "task.schema.json": Task,
        "transcript.schema.json": Transcript,
    }
    try:
        from scoring.report import ScoreReport
        from scoring.rollout import ChatTranscript
    except ImportError:
        pass
    else:
        found["score-report.schema.json"] = ScoreReport
        found["chat-transcript.schema.json"] = ChatTranscript
    try:
        from scoring.validation.domains import ValidationReport
    except ImportError:
        pass
    else:
        found["validation-report.schema.json"] = ValidationReport
    found["operation.schema.json"] = Operation
    found["plan.schema.json"] = Plan
    return found


def render(model: type[BaseModel]) -> str:
    schema: dict[str, Any] = model.model_json_schema(by_alias=True, mode="validation")
    schema = with_expr_defs(schema)  # expressions: from the operator registry (simulator.lang)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://toolgym.dev/schemas/{model.__name__}",
        **schema,
    }
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write(directory: Path = SCHEMA_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in models().items():
        path = directory / name
        path.write_text(render(model), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write(Path(sys.argv[1]) if len(sys.argv) > 1 else SCHEMA_DIR):
        print(p)
