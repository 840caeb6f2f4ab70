"""How long `toolgym --help` and each `toolgym COMMAND --help` take to start: CPU seconds, median of N.

Goal: ≤ 0.3 s each (commands import what they need when they run). Beside them, the floor: a bare
`python -c pass` and `python -c "import typer, rich.console"`, measured in the same run.

    python benchmarks/cli_start.py [--runs 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

GOAL = 0.3
ROOT = Path(__file__).resolve().parent.parent
TOOLGYM = [sys.executable, "-c", "from toolgym.cli import main; main()"]


def cpu_seconds(argv: list[str]) -> float:
    """User + system CPU time of one run of `argv` (the child's own, from the kernel)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def commands() -> list[str]:
    from toolgym.cli import app  # noqa: PLC0415 - the benchmark's own process, not the timed one

    return sorted(c.name or c.callback.__name__ for c in app.registered_commands if c.callback)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=10, help="runs of each command (the median is kept)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    cases = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "import typer, rich": [sys.executable, "-c", "import typer, rich.console"],
        "toolgym --help": [*TOOLGYM, "--help"],
        **{f"toolgym {name} --help": [*TOOLGYM, name, "--help"] for name in commands()},
    }
    medians = {
        label: statistics.median(cpu_seconds(argv) for _ in range(args.runs)) for label, argv in cases.items()
    }
    timed = {k: v for k, v in medians.items() if k.startswith("toolgym")}
    slowest = max(timed.values())
    result = {
        "runs": args.runs,
        "load_average_1m": round(os.getloadavg()[0], 2),
        "goal_s": GOAL,
        "met": slowest <= GOAL,
        "median_cpu_s": {k: round(v, 3) for k, v in medians.items()},
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"CPU seconds to start, median of {args.runs} (load {result['load_average_1m']}); goal ≤ {GOAL} s"
        )
        for label, value in medians.items():
            print(f"  {label:32} {value:6.3f} s")
        print(f"slowest: {slowest:.3f} s — {'met' if result['met'] else 'NOT met'}")
    return 0 if result["met"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
