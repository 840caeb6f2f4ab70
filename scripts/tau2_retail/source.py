"""Reading tau2's retail data (../shared/peers/tau2/retail): only its data files, never its code."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEFAULT_SOURCE = REPO.parent / "shared" / "peers" / "tau2" / "retail"
DEFAULT_OUT = REPO / "domains" / "tau2-retail"


@dataclass(frozen=True)
class Peer:
    """tau2's retail data as read from its folder."""

    db: dict[str, Any]  # db.json: {"users": ..., "orders": ..., "products": ...}
    tasks: list[dict[str, Any]]  # tasks.json
    schemas: dict[str, Any]  # tool_schemas.json: {"assistant": [{"schema": ..., "mutates_state": ...}]}
    split: dict[str, list[str]]  # split_tasks.json: {"train": [ids], "test": [ids], ...}
    expected: dict[str, dict[str, Any]]  # expected.jsonl by task id: tau2's run of the gold calls
    policy: str  # policy.md, verbatim
    licence: str | None  # ../LICENSE, when present


def _json(source: Path, name: str) -> Any:
    return json.loads((source / name).read_text(encoding="utf-8"))


def load_expected(source: Path) -> list[dict[str, Any]]:
    """tau2's own run of every task's gold calls (expected.jsonl), in task order."""
    text = (source / "expected.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def read_peer(source: Path) -> Peer:
    licence = source.parent / "LICENSE"
    return Peer(
        db=_json(source, "db.json"),
        tasks=_json(source, "tasks.json"),
        schemas=_json(source, "tool_schemas.json"),
        split=_json(source, "split_tasks.json"),
        expected={rec["task_id"]: rec for rec in load_expected(source)},
        policy=(source / "policy.md").read_text(encoding="utf-8"),
        licence=licence.read_text(encoding="utf-8") if licence.is_file() else None,
    )
