"""Record (or check) every bundled domain's gold replays: per call, the outcome; per task, the digest.

The language may change inside; what a domain written against the documentation does may not.
`python scripts/golden_replays.py --write` pins today's behaviour in
tests/fixtures/golden_replays.json; tests/test_golden_replays.py checks it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "golden_replays.json"
FIXTURES = ROOT / "tests" / "fixtures"
DOMAINS = [ROOT / "domains" / d for d in ("bank", "logistics", "office", "tau2-retail")]
#: hand-written fixture domains whose tasks live beside them: (folder, tasks file)
WITH_TASKS = [(FIXTURES / "shop", FIXTURES / "shop_tasks.jsonl")]
#: fixture domains written by hand from the documentation, tasks.jsonl inside the folder
HAND_WRITTEN = [FIXTURES / "stays"]


def _folders(tmp: Path) -> list[Path]:
    folders = [*DOMAINS, *HAND_WRITTEN]
    for folder, tasks in WITH_TASKS:
        if not folder.exists():
            continue
        copy = tmp / folder.name
        shutil.copytree(folder, copy)
        shutil.copy(tasks, copy / "tasks.jsonl")
        folders.append(copy)
    return folders


SEEDS = (0, 7)


def _hash(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def record() -> dict[str, Any]:
    try:
        from scoring import load_domain  # the tasks' gold is the grading side's (issue 27)
    except ImportError:  # the code before: the runtime's domain held whole tasks
        from simulator import load_domain

    with tempfile.TemporaryDirectory() as tmp:
        domains = [load_domain(path) for path in _folders(Path(tmp))]
    return {domain.ref: record_domain(domain) for domain in domains}


def record_domain(domain: Any) -> dict[str, Any]:
    """One domain's tasks: per seed, each gold call's outcome and the final digest."""
    from simulator import ToolError

    try:
        from scoring.calls import resolve_arguments
    except ImportError:  # the code before issue 11 (the baseline records new fixtures)
        from simulator.gold import resolve_arguments  # type: ignore[no-redef]

    tasks: dict[str, Any] = {}
    for task in domain.tasks:
        runs = []
        for seed in SEEDS:
            calls = []
            results: list[Any] = []
            with domain.episode(seed=seed) as ep:
                for i, call in enumerate(task.calls):
                    args = resolve_arguments(call.arguments, results, task.id, i)
                    try:
                        result = ep.call(call.name, args)
                        calls.append(["ok", _hash(result)])
                    except ToolError as exc:
                        result = None
                        calls.append(["error", str(exc)])
                    results.append(result)
                runs.append({"seed": seed, "calls": calls, "digest": ep.digest()})
        tasks[task.id] = runs
    return tasks


if __name__ == "__main__":
    data = record()
    if "--write" in sys.argv:
        FIXTURE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {FIXTURE} ({sum(len(t) for t in data.values())} tasks)")
    else:
        old = json.loads(FIXTURE.read_text(encoding="utf-8"))
        print("identical" if old == data else "DIFFERENT")
