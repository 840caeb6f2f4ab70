#!/usr/bin/env python3
"""Port tau2-bench's retail domain into a toolgym domain folder, and check that the port agrees.

    python scripts/port_tau2_retail.py build [--source DIR] [--out DIR]
    python scripts/port_tau2_retail.py agree [--source DIR] [--out DIR] [--task ID ...] [--verbose]

The port itself is the package scripts/tau2_retail/ (its docstring says what each module does).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tau2_retail import DEFAULT_OUT, DEFAULT_SOURCE, build, check_agreement


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("command", nargs="?", default="build", choices=["build", "agree"])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="tau2 retail data folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="domain folder to write / check")
    parser.add_argument("--task", action="append", help="agree: only these task ids")
    parser.add_argument(
        "--verbose", "-v", action="store_true", help="agree: also list output and error-text differences"
    )
    args = parser.parse_args(argv)
    if args.command == "build":
        build(args.source, args.out)
        return 0
    res = check_agreement(args.source, args.out, args.task, args.verbose)
    print(res.report())
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
