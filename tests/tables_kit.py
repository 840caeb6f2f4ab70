"""Helpers the table/key/id/clock tests share: a small domain folder written from Python values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from scoring import load_domain
from simulator import Domain


def write_domain(
    folder: Path,
    tables: dict[str, Any],
    tools: list[dict[str, Any]],
    seed: dict[str, list[dict[str, Any]]] | None = None,
    clock: dict[str, Any] | None = None,
    tasks: list[dict[str, Any]] | None = None,
) -> Path:
    """A domain folder (domain.yaml, seed/*.jsonl, tasks.jsonl) named `t`."""
    folder.mkdir(parents=True, exist_ok=True)
    spec: dict[str, Any] = {"name": "t", "version": "1.0.0", "tables": tables, "tools": tools}
    if clock is not None:
        spec["clock"] = clock
    (folder / "domain.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    (folder / "seed").mkdir(exist_ok=True)
    for table, rows in (seed or {}).items():
        lines = "".join(json.dumps(r) + "\n" for r in rows)
        (folder / "seed" / f"{table}.jsonl").write_text(lines, encoding="utf-8")
    lines = "".join(json.dumps(t) + "\n" for t in tasks or [])
    (folder / "tasks.jsonl").write_text(lines, encoding="utf-8")
    return folder


def build(folder: Path, *args: Any, generated: bool = True, **kwargs: Any) -> Domain:
    """`write_domain`, loaded (`generated=False`: on the reference path)."""
    return load_domain(write_domain(folder, *args, **kwargs), generated=generated)


def tool(name: str, kind: str, operation: Any, properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """A tool whose arguments are all optional, of the types given (default: any)."""
    props = properties or {}
    return {
        "name": name,
        "description": name,
        "kind": kind,
        "input_schema": {"type": "object", "properties": props},
        "operation": operation,
    }
