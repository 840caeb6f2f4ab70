"""The attack benchmark: one hostile client cannot stall another session.

    python benchmarks/attack.py --json attack.json           # about a minute
    python benchmarks/attack.py --quick --json attack.json   # fewer calls (smoke test)

A `toolgym serve` over streamable HTTP on 127.0.0.1 holds two kinds of sessions: a victim that
makes a cheap call (`calculate` of `1+1` on tau2-retail; `get_customer` on the pattern shop) in a
loop, and one attacking client with several sessions that sends the worst calls known, in a loop,
while the victim runs (bounded: at most `--attack-calls` calls and the victim's run time):

| scenario | server | the attacker's calls |
|---|---|---|
| tau2-retail | bundled tau2-retail | `calculate` of `((9**999)**999)**999`; `exchange_delivered_order_items` with 1,000 item ids (the schema's bound) and with 100,000 ids in a ~2.8 MB body |
| pattern | the test shop with `^(a+)+$` as a `pattern` on `set_note.notes` | `set_note` with 23 `a`s and a `!` (catastrophic backtracking for a backtracking engine) |

The victim's p50 and p99 call latency are measured unloaded, under a benign load (the same
number of sessions of the same client making the victim's own cheap call in a loop) and under
attack, in one run; the results are the ratios attacked / unloaded (goal: p99 within 2x) and
attacked / benign (what the worst calls cost beyond ordinary traffic). Every attack call must end with a
tool error or a refusal (asserted), never stall: the attacker's own latencies are reported too.
The attacking client runs in a process of its own pinned to core 0, as it would run on another
machine; the server and the victim's client share core 1, for every measurement alike.
All traffic goes to 127.0.0.1 only; loops are bounded in count and time and stop by themselves.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# `import mcp` must find the SDK, not benchmarks/mcp.py
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if p not in ("", _HERE)] + [_HERE]

from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ENV = {
    **os.environ,
    "PYTHONPATH": str(ROOT),
    "FASTMCP_CHECK_FOR_UPDATES": "off",
    "FASTMCP_LOG_LEVEL": "ERROR",
}
SERVE = [sys.executable, "-c", "from toolgym.cli import main; main()", "serve"]
#: The attacking client runs on a core of its own, as it would on another machine: what is
#: measured is what the attack costs the server, not what the attacker's own client burns.
ATTACKER_CPUS = {0}
SERVER_CPUS = {1}

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def server(domain: str, runs: Path) -> Iterator[str]:
    port = free_port()
    args = [*SERVE, domain, "--transport", "http", "--port", str(port), "--runs", str(runs)]
    proc = subprocess.Popen(
        args,
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: pin(SERVER_CPUS),
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"the server for {domain} exited with {proc.returncode}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if time.monotonic() > deadline:
                raise SystemExit("the server did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


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


def pin(cpus: set[int]) -> None:
    """Run this process on `cpus` (where the machine has them)."""
    available = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    wanted = cpus & available
    if wanted and len(available) > 1:
        os.sched_setaffinity(0, wanted)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_scenario(name: str, n: int, attackers: int, attack_calls: int, tmp: Path) -> dict[str, Any]:
    scenario = SCENARIOS[name]
    domain = scenario["domain"] or str(pattern_shop(tmp))
    benign = {**scenario, "attacks": [scenario["victim"]]}
    with server(domain, tmp / f"runs-{name}") as url:
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
    pin(SERVER_CPUS)  # the victim's client shares the server's core
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (smoke test)")
    parser.add_argument("--json", type=Path, help="write the report here")
    parser.add_argument("--attackers", type=int, default=1, help="attacking sessions of the one client")
    parser.add_argument("--attack-calls", type=int, default=2000, help="bound on the attack's calls")
    parser.add_argument("--check", action="store_true", help="exit 1 when a p99 ratio exceeds 2")
    opts = parser.parse_args(argv)
    n = 60 if opts.quick else 400
    with tempfile.TemporaryDirectory(prefix="toolgym-attack-") as tmp:
        results = [run_scenario(name, n, opts.attackers, opts.attack_calls, Path(tmp)) for name in SCENARIOS]
    load = os.getloadavg()
    report = {"suite": "attack", "meta": {"loadavg": load, "quick": opts.quick}, "results": results}
    head = f"{'scenario':<12} {'unloaded p50/p99':>18} {'benign load':>18} {'attacked':>18}"
    print(f"{head} {'p99 x':>6} {'vs benign':>9}  attack calls (median ms)")
    for r in results:
        print(
            f"{r['scenario']:<12} {r['unloaded_p50_ms']:>8.2f}/{r['unloaded_p99_ms']:<9.2f} "
            f"{r['benign_p50_ms']:>8.2f}/{r['benign_p99_ms']:<9.2f} "
            f"{r['loaded_p50_ms']:>8.2f}/{r['loaded_p99_ms']:<9.2f} {r['p99_ratio']:>6.2f} "
            f"{r['p99_ratio_vs_benign']:>9.2f}  {r['attack_calls']} {json.dumps(r['attack_call_median_ms'])}"
        )
    print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if opts.json:
        opts.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if opts.check and any(r["p99_ratio"] > 2.0 for r in results):
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
