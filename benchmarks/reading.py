"""Draw kept instructions to read, with a quoted seed, from a generated corpus (#26's readings).

    python benchmarks/reading.py OUT_DIR --seed 71 [--n 50] [--json sample.json]

OUT_DIR is what `toolgym generate --out` or `benchmarks/toolgen.py --out` wrote: one folder per
kept domain with its `tasks.jsonl`, and `report.json`; only the domains the report keeps are read
(an earlier run's folders in the same place are not). Every kept task (folders in name order,
tasks in file order) is a candidate; `random.Random(seed).sample` draws `n` of them. The same
folder and seed give the same list, so a reading's verdicts in docs/ can be checked again.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any


def _kept(root: Path) -> set[str] | None:
    """The domains the run that wrote `root` kept (its `report.json`), None without one."""
    try:
        report = json.loads((root / "report.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    results = report.get("domain_results") if isinstance(report, dict) else None
    if not isinstance(results, list):
        return None
    return {
        r["name"] for r in results if isinstance(r, dict) and r.get("kept") and isinstance(r.get("name"), str)
    }


def kept_tasks(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """(domain, task) for every task of every domain folder under `root` the run kept (by its
    `report.json`; every folder without one), in a fixed order."""
    found = []
    folders = sorted(p for p in root.iterdir() if (p / "tasks.jsonl").is_file())
    kept = _kept(root)
    if kept is not None:
        stale = [p.name for p in folders if p.name not in kept]
        if stale:
            print(
                f"ignored {len(stale)} folders report.json does not keep (an earlier run's)", file=sys.stderr
            )
        folders = [p for p in folders if p.name in kept]
    else:
        print(f"no readable report.json in {root}: reading every domain folder", file=sys.stderr)
    for folder in folders:
        path = folder / "tasks.jsonl"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                task = json.loads(line)
            except json.JSONDecodeError as exc:
                print(f"skipped {path}:{number}: not JSON ({exc.msg})", file=sys.stderr)
                continue
            if isinstance(task, dict) and isinstance(task.get("instruction"), str):
                found.append((folder.name, task))
            else:
                print(f"skipped {path}:{number}: no instruction", file=sys.stderr)
    return found


def draw(root: Path, seed: int, n: int = 50) -> list[dict[str, Any]]:
    """`n` kept tasks drawn with `seed`: domain, tier, kind, gold calls and instruction each."""
    tasks = kept_tasks(root)
    picked = random.Random(seed).sample(tasks, min(n, len(tasks)))
    return [
        {
            "domain": domain,
            "tier": next((t for t in task.get("tags", []) if t.startswith("tier-")), ""),
            "kind": (task.get("tags") or ["", "", ""])[-1],
            "calls": len(task.get("calls", [])),
            "instruction": task["instruction"],
        }
        for domain, task in picked
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path, help="a folder of generated domain folders")
    parser.add_argument(
        "--seed", type=int, required=True, help="chosen before reading, quoted with the verdicts"
    )
    parser.add_argument("--n", type=int, default=50, help="instructions to draw (default 50)")
    parser.add_argument("--json", type=Path, help="also write the sample here")
    args = parser.parse_args(argv)
    if not args.out.is_dir():
        print(f"error: {args.out} is not a folder", file=sys.stderr)
        return 2
    sample = draw(args.out, args.seed, args.n)
    if not sample:
        print(f"error: no tasks.jsonl under {args.out}", file=sys.stderr)
        return 1
    for i, s in enumerate(sample, 1):
        print(f"{i}. [{s['domain']}] {s['tier']} {s['kind']} {s['calls']} :: {s['instruction']}\n")
    if args.json:
        args.json.write_text(json.dumps(sample, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
