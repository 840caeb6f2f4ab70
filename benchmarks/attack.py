"""The attack benchmark: hostile clients neither stall honest sessions nor grow the server past its caps.

    python benchmarks/attack.py --json attack.json           # about two minutes
    python benchmarks/attack.py --quick --json attack.json   # smaller numbers (smoke test, < 1 min)
    python benchmarks/attack.py --only siege --check         # exit 1 when a goal is missed
    python benchmarks/attack.py --only siege --attacks growth,half-sent   # some attacks only

Two parts. **The siege** (`benchmarks/siege.py`, which says what it sends and measures): one live
server, N honest sessions, every attack at once from one attacking process.

**The scenarios** (costly-but-legal calls, each on its own server): a victim makes a cheap call in
a loop, unloaded, beside a benign load and beside one attacking client sending the worst legal
calls known (tau2-retail: `calculate` of `((9**999)**999)**999`, `exchange_delivered_order_items`
with 1,000 ids and with 100,000 ids in a ~2.8 MB body; a shop whose `set_note.notes` has the
pattern `^(a+)+$`: 23 `a`s and a `!`). Every attack call must end in a tool error or a refusal.

The attackers run on core 0, the server and the honest clients on core 1, as if the attackers
were on another machine. All traffic goes to 127.0.0.1; loops are bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# `import mcp` must find the SDK, not benchmarks/mcp.py
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if p not in ("", _HERE)] + [_HERE]

from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from siege import (  # noqa: E402
    ATTACKER_CPUS,
    ATTACKS,
    FULL,
    QUICK,
    ROOT,
    SERVER_CPUS,
    pct,
    pin,
    print_siege,
    run_siege,
    server,
)

# -- the scenarios: costly-but-legal calls, each on its own server ------------------------------

ORDER = {"order_id": "#W4817420", "payment_method_id": "gift_card_8168843"}


def _exchange(n: int) -> dict[str, Any]:
    ids = [str(1000000000 + i) for i in range(n)]
    return {**ORDER, "item_ids": ids, "new_item_ids": ids}


SCENARIOS: dict[str, dict[str, Any]] = {
    "tau2-retail": {
        "domain": "tau2-retail",
        "victim": ("calculate", {"expression": "1+1"}),
        "attacks": [
            ("calculate", {"expression": "((9**999)**999)**999"}),
            ("exchange_delivered_order_items", _exchange(1000)),
            ("exchange_delivered_order_items", _exchange(100_000)),
        ],
    },
    "pattern": {
        "domain": None,  # the shop with a catastrophic pattern, written to a temp folder
        "victim": ("get_customer", {"customer_id": "C-0001"}),
        "attacks": [("set_note", {"customer_id": "C-0001", "notes": "a" * 23 + "!"})],
    },
}


def pattern_shop(folder: Path) -> Path:
    """tests/fixtures/shop with `pattern: ^(a+)+$` on set_note's `notes` argument."""
    target = folder / "pattern_shop"
    shutil.copytree(ROOT / "tests" / "fixtures" / "shop", target)
    spec = target / "domain.yaml"
    text = spec.read_text(encoding="utf-8")
    old = "properties: {customer_id: {type: string}, notes: {type: string}}"
    assert old in text, "the shop fixture changed: update benchmarks/attack.py"
    new = 'properties: {customer_id: {type: string}, notes: {type: string, pattern: "^(a+)+$"}}'
    spec.write_text(text.replace(old, new, 1), encoding="utf-8")
    return target


async def victim(url: str, call: tuple[str, dict[str, Any]], n: int) -> list[float]:
    """n sequential calls in one session; their latencies in ms (after a warm-up)."""
    name, args = call
    out = []
    async with streamable_http_client(url) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        for _ in range(10):
            await session.call_tool(name, args)
        for _ in range(n):
            t0 = time.perf_counter()
            result = await session.call_tool(name, args)
            out.append((time.perf_counter() - t0) * 1000)
            assert not result.is_error, result
    return out


async def attacker(
    url: str, attacks: list[tuple[str, dict[str, Any]]], stop: Any, budget: int
) -> list[tuple[str, float, str]]:
    """One attacker: the worst calls in a loop until `stop` is set or `budget` calls were made.

    A refused request (413: body too large) ends the client's connection; it reconnects at once.
    """
    seen: list[tuple[str, float, str]] = []
    i = 0
    while not stop.is_set() and i < budget:
        async with streamable_http_client(url) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            while not stop.is_set() and i < budget:
                name, args = attacks[i % len(attacks)]
                i += 1
                t0 = time.perf_counter()
                try:
                    result = await session.call_tool(name, args)
                except Exception as exc:
                    seen.append((name, (time.perf_counter() - t0) * 1000, f"refused: {type(exc).__name__}"))
                    break
                outcome = "tool-error" if result.is_error else "ok"
                seen.append((name, (time.perf_counter() - t0) * 1000, outcome))
    return seen


def _attack_process(url: str, attacks: list[Any], stop: Any, budget: int, out: Any) -> None:
    """The attacking client, in a process of its own on a core of its own."""
    pin(ATTACKER_CPUS)
    out.put(asyncio.run(attacker(url, attacks, stop, budget)))


def under_attack(
    url: str, scenario: dict[str, Any], n: int, attackers: int, attack_calls: int
) -> tuple[list[float], list[tuple[str, float, str]]]:
    ctx = multiprocessing.get_context("spawn")
    stop, out = ctx.Event(), ctx.Queue()
    budget = max(1, attack_calls // attackers)
    procs = [
        ctx.Process(target=_attack_process, args=(url, scenario["attacks"], stop, budget, out))
        for _ in range(attackers)
    ]
    for proc in procs:
        proc.start()
    time.sleep(2.0)  # the attack is under way before the victim starts
    try:
        lat = asyncio.run(victim(url, scenario["victim"], n))
    finally:
        stop.set()
    seen = [row for _ in procs for row in out.get(timeout=120)]
    for proc in procs:
        proc.join(timeout=30)
    return lat, seen


def run_scenario(name: str, n: int, attackers: int, attack_calls: int, tmp: Path) -> dict[str, Any]:
    scenario = SCENARIOS[name]
    domain = scenario["domain"] or str(pattern_shop(tmp))
    benign = {**scenario, "attacks": [scenario["victim"]]}
    with server(domain, tmp / f"runs-{name}") as (url, _):
        unloaded = asyncio.run(victim(url, scenario["victim"], n))
        busy, _ = under_attack(url, benign, n, attackers, attack_calls)
        loaded, seen = under_attack(url, scenario, n, attackers, attack_calls)
    bad = [s for s in seen if s[2] == "ok"]  # every attack call ends in a tool error or a refusal
    assert not bad, f"an attack call succeeded: {bad[:1]}"
    by_call: dict[str, list[float]] = {}
    for call, ms, _ in seen:
        by_call.setdefault(call, []).append(ms)
    return {
        "scenario": name,
        "victim_calls": n,
        "attack_calls": len(seen),
        "attack_outcomes": sorted({s[2] for s in seen}),
        "unloaded_p50_ms": round(statistics.median(unloaded), 3),
        "unloaded_p99_ms": round(pct(unloaded, 0.99), 3),
        "benign_p50_ms": round(statistics.median(busy), 3),
        "benign_p99_ms": round(pct(busy, 0.99), 3),
        "loaded_p50_ms": round(statistics.median(loaded), 3),
        "loaded_p99_ms": round(pct(loaded, 0.99), 3),
        "p99_ratio": round(pct(loaded, 0.99) / pct(unloaded, 0.99), 3),
        "p99_ratio_vs_benign": round(pct(loaded, 0.99) / pct(busy, 0.99), 3),
        "attack_call_median_ms": {k: round(statistics.median(v), 2) for k, v in sorted(by_call.items())},
    }


def main(argv: list[str] | None = None) -> int:
    pin(SERVER_CPUS)  # the honest clients share the server's core
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller numbers (smoke test)")
    parser.add_argument("--json", type=Path, help="write the report here")
    parser.add_argument("--only", choices=("siege", "scenarios"), help="run one part only")
    parser.add_argument(
        "--attacks",
        type=lambda text: [a.strip() for a in text.split(",")],
        default=list(ATTACKS),
        help=f"siege: these attacks only (comma-separated, of: {', '.join(ATTACKS)})",
    )
    parser.add_argument(
        "--attackers", type=int, default=1, help="scenarios: attacking sessions of the one client"
    )
    parser.add_argument(
        "--attack-calls", type=int, default=2000, help="scenarios: bound on the attack's calls"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when a goal is missed")
    opts = parser.parse_args(argv)
    if unknown := set(opts.attacks) - set(ATTACKS):
        parser.error(f"unknown attacks: {', '.join(sorted(unknown))}")
    n = 60 if opts.quick else 400
    load_start = os.getloadavg()
    siege: dict[str, Any] | None = None
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="toolgym-attack-") as tmp:
        if opts.only != "scenarios":
            siege = run_siege(QUICK if opts.quick else FULL, Path(tmp), opts.attacks)
            print_siege(siege)
        if opts.only != "siege":
            results = [
                run_scenario(name, n, opts.attackers, opts.attack_calls, Path(tmp)) for name in SCENARIOS
            ]
            print_scenarios(results)
    load = os.getloadavg()
    print(
        f"load average: {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f} at the start, "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end"
    )
    report = {
        "suite": "attack",
        "meta": {"loadavg": load, "loadavg_start": load_start, "quick": opts.quick},
        "results": results,
        "siege": siege,
    }
    if opts.json:
        opts.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    missed = any(r["p99_ratio"] > 2.0 for r in results) or (
        siege is not None and not all(siege["goals"].values())
    )
    return 1 if opts.check and missed else 0


def print_scenarios(results: list[dict[str, Any]]) -> None:
    head = f"{'scenario':<12} {'unloaded p50/p99':>18} {'benign load':>18} {'attacked':>18}"
    print(f"{head} {'p99 x':>6} {'vs benign':>9}  attack calls (median ms)")
    for r in results:
        print(
            f"{r['scenario']:<12} {r['unloaded_p50_ms']:>8.2f}/{r['unloaded_p99_ms']:<9.2f} "
            f"{r['benign_p50_ms']:>8.2f}/{r['benign_p99_ms']:<9.2f} "
            f"{r['loaded_p50_ms']:>8.2f}/{r['loaded_p99_ms']:<9.2f} {r['p99_ratio']:>6.2f} "
            f"{r['p99_ratio_vs_benign']:>9.2f}  {r['attack_calls']} {json.dumps(r['attack_call_median_ms'])}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
