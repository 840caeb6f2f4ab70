"""`internal: true` says what `skip_if_null: false` on every filter and `max_limit: null` said.

The retail port wrote them over and over; rewritten to `internal: true`, it replays its gold calls
exactly as pinned (outcomes, errors, digests at two seeds).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

from scoring import load_domain

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import golden_replays  # noqa: E402

ROW_STEPS = ("get", "list", "search", "count", "sum")


def _internal(step: dict[str, Any]) -> bool:
    """Rewrite one step to `internal: true` when that says exactly what it says; True if rewritten."""
    if not any(key in step for key in ROW_STEPS) or "internal" in step:
        return False
    where = step.get("where") or []
    if any(f.get("skip_if_null", True) for f in where):
        return False
    is_list = "list" in step or "search" in step
    if is_list and not ("max_limit" in step and step["max_limit"] is None):
        return False  # (its cap of 100 would go)
    if not is_list and not where:
        return False
    for f in where:
        del f["skip_if_null"]
    step.pop("max_limit", None)
    step["internal"] = True
    return True


def _rewrite(steps: list[dict[str, Any]]) -> int:
    count = 0
    for step in steps:
        count += _internal(step)
        count += _rewrite(step.get("steps") or [])
    return count


def _as_list(operation: Any) -> list[dict[str, Any]]:
    return operation if isinstance(operation, list) else [operation]


def test_the_retail_port_rewritten_to_internal_replays_identically(tmp_path: Path) -> None:
    folder = tmp_path / "tau2-retail"
    shutil.copytree(ROOT / "domains" / "tau2-retail", folder)
    spec = yaml.safe_load((folder / "domain.yaml").read_text(encoding="utf-8"))
    before = json.dumps(spec).count('"skip_if_null": false') + json.dumps(spec).count('"max_limit": null')
    rewritten = sum(_rewrite(_as_list(t["operation"])) for t in spec["tools"])
    rewritten += sum(_rewrite(f["steps"]) for f in spec.get("fragments", {}).values())
    after = json.dumps(spec).count('"skip_if_null": false') + json.dumps(spec).count('"max_limit": null')
    (folder / "domain.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")

    assert (before, after, rewritten) == (37, 0, 20)  # 37 repeated options become 20 `internal: true`
    domain = load_domain(folder)
    pinned = json.loads(golden_replays.FIXTURE.read_text(encoding="utf-8"))[domain.ref]
    assert golden_replays.record_domain(domain) == pinned
