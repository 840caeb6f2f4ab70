"""A/B of generated-code mechanisms against their plain alternative, per tool call, interleaved.

    python benchmarks/ab_mechanisms.py                  # each mechanism on vs off
    python benchmarks/ab_mechanisms.py --aa             # on against on (the harness's noise)
    python benchmarks/ab_mechanisms.py --calls 20000 --json mech.json

`display`: a read returning an object display of six fields and a list display of three (the
generated `_display`, or the reference path's comprehension closures). Each side is the same tool
on its own episode; calls alternate, repeated with the sides swapped.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from _common import environment, measure_interleaved

from scoring import load_domain
from simulator import Domain
from simulator.lang import compile as lang_compile

TABLES = {
    "items": {
        "primary_key": "item_id",
        "columns": {
            c: {"type": "string" if c != "price" else "number"}
            for c in ("item_id", "a", "b", "c", "d", "price")
        },
    },
}
TOOLS = [
    {
        "name": "card",
        "description": "An item as a card.",
        "kind": "read",
        "input_schema": {
            "type": "object",
            "properties": {"item_id": {"type": "string"}},
            "required": ["item_id"],
        },
        "operation": [
            {"get": "items", "key": {"item_id": "$args.item_id"}, "as": "it", "error": "No item."},
            {
                "return": {
                    "object": {
                        "id": "$it.item_id",
                        "a": "$it.a",
                        "b": "$it.b",
                        "c": "$it.c",
                        "d": "$it.d",
                        "tags": ["$it.a", "$it.b", "$it.c"],
                    }
                }
            },
        ],
    },
]
ROWS = 1000


def write_domain(folder: Path) -> Path:
    spec = {"name": "mech", "version": "1.0.0", "tables": TABLES, "tools": TOOLS}
    (folder / "domain.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    (folder / "seed").mkdir()
    items = [{"item_id": f"i{n}", "a": "x", "b": "y", "c": "z", "d": "w", "price": 1.5} for n in range(ROWS)]
    for name, rows in (("items", items),):
        text = "".join(json.dumps(row) + "\n" for row in rows)
        (folder / "seed" / f"{name}.jsonl").write_text(text, encoding="utf-8")
    (folder / "tasks.jsonl").write_text("", encoding="utf-8")
    return folder


def plain_displays(folder: Path) -> Domain:
    """The domain with list and object displays compiled as the reference path's closures."""
    display = lang_compile._display

    def plain(opening: str, items: list[tuple[str | None, Any]], closing: str) -> Any:
        if opening == "[":
            return lang_compile._list_of([fn for _, fn in items])
        return lang_compile._object_of([(key, fn) for key, fn in items if key is not None])

    lang_compile._display = plain  # type: ignore[assignment]
    try:
        return load_domain(folder)
    finally:
        lang_compile._display = display  # type: ignore[assignment]


def caller(domain: Domain, tool: str, arguments: Callable[[int], dict[str, Any]]) -> Callable[[int], Any]:
    episode = domain.episode(seed=0)
    return lambda i: episode.call(tool, arguments(i))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=6_000, help="timed calls per side and mechanism")
    parser.add_argument("--seconds", type=float, default=4.0, help="time budget per mechanism")
    parser.add_argument("--repeats", type=int, default=5, help="measurements per mechanism")
    parser.add_argument("--aa", action="store_true", help="the mechanism on both sides (the harness's noise)")
    parser.add_argument("--json", help="write the report as JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_domain(Path(tmp))
        card = lambda i: {"item_id": f"i{i % ROWS}"}  # noqa: E731
        pairs = {
            "display": (
                caller(load_domain(folder), "card", card),
                caller(plain_displays(folder), "card", card),
            ),
        }
        report: dict[str, Any] = {"environment": environment(), "results": {}}
        for name, (on, off) in pairs.items():
            if args.aa:
                off = on
            savings = []
            for rep in range(args.repeats):  # (each repeat the other side first)
                sides = [on, off] if rep % 2 == 0 else [off, on]
                timed = measure_interleaved(sides, reps=args.calls, max_seconds=args.seconds, rounds=40)
                a, b = (timed[0], timed[1]) if rep % 2 == 0 else (timed[1], timed[0])
                savings.append(1 - a.median_us / b.median_us)
            report["results"][name] = {"savings": savings, "median": statistics.median(savings)}
            spread = f"{min(savings):+.1%} .. {max(savings):+.1%}"
            print(f"{name:12} saves {statistics.median(savings):+.1%} (median of {args.repeats}; {spread})")
        print(f"load (1 min) {report['environment']['load_average_1m']}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
