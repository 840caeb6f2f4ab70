"""Generating from a spec whose patterns a backtracking engine would choke on, against the same spec
without them: CPU seconds of `toolgym generate`, median of N, interleaved.

Goal (issue #24): the hostile spec takes <= 2x the plain one. Its string fields carry lookaheads and
nested quantifiers (`^(a+)+(?!b)$|@`, `^(?=.*[A-Z])(\\w+\\s?)*$`, ...): such a pattern is kept as the
argument's words, never run by a backtracking engine, so validation's mutations cost what they cost
on plain strings. The spec: `--ops` collections, each with a list, a create and an update.

    python benchmarks/patterns.py [--runs 3] [--ops 6] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

GOAL = 2.0
ROOT = Path(__file__).resolve().parent.parent
TOOLGYM = [sys.executable, "-c", "from toolgym.cli import main; main()"]
HOSTILE = ["^(a+)+(?!b)$|@", "^(?=.*[A-Z])(\\w+\\s?)*$", "^((ab)*|(a|b)*)+(?<=z)$", "^(\\d+)*(?!x)\\d$"]
NOUNS = ["widgets", "gadgets", "gizmos", "sprockets", "levers", "dials", "knobs", "valves"]


def spec(collections: int, hostile: bool) -> dict[str, Any]:
    """An OpenAPI spec: per collection a list, a create and an update of a record with string fields."""
    paths: dict[str, Any] = {}
    for i, noun in enumerate(NOUNS[:collections]):
        fields = {}
        for k, name in enumerate(("code", "label", "serial")):
            field: dict[str, Any] = {"type": "string", "description": f"The {noun[:-1]}'s {name}."}
            if hostile:
                field["pattern"] = HOSTILE[(i + k) % len(HOSTILE)]
            fields[name] = field
        item = {"type": "object", "properties": {"id": {"type": "string"}, **fields}}
        body = {"content": {"application/json": {"schema": {"type": "object", "properties": fields,
                                                             "required": ["code"]}}}}  # fmt: skip
        ok = {"description": "ok", "content": {"application/json": {"schema": item}}}
        many = {
            "description": "ok",
            "content": {"application/json": {"schema": {"type": "array", "items": item}}},
        }
        paths[f"/{noun}"] = {
            "get": {"operationId": f"list_{noun}", "responses": {"200": many}},
            "post": {"operationId": f"create_{noun[:-1]}", "requestBody": body, "responses": {"201": ok}},
        }
        paths[f"/{noun}/{{id}}"] = {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "get": {"operationId": f"get_{noun[:-1]}", "responses": {"200": ok}},
            "patch": {"operationId": f"update_{noun[:-1]}", "requestBody": body, "responses": {"200": ok}},
        }
    return {"openapi": "3.0.0", "info": {"title": "Parts", "version": "1"}, "paths": paths}


def cpu_seconds(argv: list[str]) -> float:
    """User + system CPU time of one run of `argv` (the child's own, from the kernel)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of each spec, interleaved")
    parser.add_argument("--ops", type=int, default=6, help=f"collections (at most {len(NOUNS)})")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    opts = parser.parse_args()
    if not 1 <= opts.ops <= len(NOUNS):
        parser.error(f"--ops must be between 1 and {len(NOUNS)}")
    times: dict[str, list[float]] = {"plain": [], "hostile": []}
    with tempfile.TemporaryDirectory(prefix="toolgym-patterns-") as tmp:
        for kind in times:
            Path(tmp, f"{kind}.json").write_text(json.dumps(spec(opts.ops, kind == "hostile")), "utf-8")
        for run in range(opts.runs):
            for kind in times:
                out = Path(tmp, f"out-{kind}-{run}")
                times[kind].append(
                    cpu_seconds([*TOOLGYM, "generate", str(Path(tmp, f"{kind}.json")), "--out", str(out)])
                )
    medians = {k: statistics.median(v) for k, v in times.items()}
    ratio = medians["hostile"] / medians["plain"]
    load = os.getloadavg()
    report = {"cpu_s": times, "median_cpu_s": medians, "ratio": ratio, "goal": GOAL, "loadavg": load}
    if opts.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"generate, {opts.ops} collections x 4 operations, CPU seconds (median of {opts.runs}):")
        print(f"  plain strings      {medians['plain']:.2f}")
        print(f"  hostile patterns   {medians['hostile']:.2f}")
        print(f"  ratio              {ratio:.2f}  (goal <= {GOAL}: {'met' if ratio <= GOAL else 'missed'})")
        print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
