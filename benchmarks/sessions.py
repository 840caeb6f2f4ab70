"""N live MCP sessions in one server: memory, server CPU per call, latency, isolation.

    python benchmarks/sessions.py --json sessions.json                 # 64, 256, 1,024 sessions
    python benchmarks/sessions.py --quick                              # 16, 64 (smoke test)
    python benchmarks/sessions.py --sessions 256 --seconds 20

For each N, `toolgym serve bank --transport http` and a bare fastmcp server listing the same
tools as no-ops (`_serving.bare_server`) run side by side on fresh processes, and N streamable
HTTP sessions are opened on each with a lightweight client (`mcpclient.py`: raw JSON-RPC posts,
so that the client's own CPU does not hide the server's on a 2-core machine):

- **memory**: resident memory of the server (summed over all its processes) after one session,
  and after N more, per session;
- **saturated**: every session calls `get_customer` in a loop (closed loop, N calls in flight),
  toolgym and bare alternating in rounds so that load on the shared machine hits both alike:
  calls/s, server CPU per call (user + system of the server's processes / calls), p50/p99;
- **paced**: every session calls at a fixed rate, the sum being `--pace` (default 0.7) of the
  calls/s the saturated phase reached on toolgym (the rate the CPU allows), on both servers:
  p50/p99 per call, the latency an RL loop sees with N rollouts in flight, and the server's CPU
  per call and share of a core in this phase (calls one by one cost more than in a closed loop,
  where requests batch: a share near 100% means the pace was more than the CPU allows);
- **isolation** (toolgym): each session first writes its own marker (`update_contact` sets the
  customer's address to a value only it knows), and every read of every phase checks that it
  sees its own marker and no other session's.

The client's own garbage collector stays out of the figures (its connections frozen, no
collection during a phase); the servers' collectors run as they would. The load average at the
start and at the end is in the report: the machine is shared.

Targets (issue #14): server CPU per call <= 1 ms; at 1,024 sessions the paced p99 <= 1 s; no
isolation failure; memory per session <= the domain's database + 1 MiB. This is also the MCP
half of issue #16's "256 simultaneous episodes through the MCP server stay isolated, p99 reported
in benchmarks/" (the OpenEnv half is that adapter's benchmark).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import Target, build_report, print_results, result_row, write_report
from _serving import both_http, cpu_seconds, quantile, rss_bytes  # noqa: I001  (sets sys.path first)
from mcpclient import McpHttp

CUSTOMER = "CUS-090075c2"
READ = ("get_customer", {"customer_id": CUSTOMER})

TARGETS = (
    Target("server_cpu_per_call", "median_us", 1000.0, "server CPU per tool call <= 1 ms"),
    Target(
        "paced_p99_1024", "median_us", 1_000_000.0, "1,024 sessions: p99 <= 1 s at the rate the CPU allows"
    ),
)


class Isolation:
    """Counts reads that saw another session's marker (or none)."""

    def __init__(self) -> None:
        self.checked = 0
        self.failures: list[str] = []

    def check(self, marker: str | None, result: dict[str, Any]) -> None:
        if result.get("isError"):
            self.failures.append(f"tool error: {result.get('content')}")
            return
        if marker is None:  # the bare server: no state to check
            return
        self.checked += 1
        seen = (result.get("structuredContent") or {}).get("address")
        if seen != marker:
            self.failures.append(f"expected {marker!r}, saw {seen!r}")


async def open_sessions(port: int, n: int, marked: bool, tag: str) -> list[tuple[McpHttp, str | None]]:
    """N initialized sessions, each having written its own marker (toolgym) or made one call (bare)."""
    out: list[tuple[McpHttp, str | None]] = []

    async def one(i: int) -> tuple[McpHttp, str | None]:
        client = await McpHttp.connect("127.0.0.1", port, "/mcp")
        await client.initialize()
        marker = f"{i} Marker St, {tag}" if marked else None
        if marker is not None:
            wrote = await client.call_tool("update_contact", {"customer_id": CUSTOMER, "address": marker})
            if wrote.get("isError"):
                raise RuntimeError(f"marker write failed: {wrote}")
        else:
            await client.call_tool(*READ)
        return client, marker

    for start in range(0, n, 32):  # open in batches: the server's accept queue stays short
        out.extend(await asyncio.gather(*(one(i) for i in range(start, min(n, start + 32)))))
    return out


async def closed_loop(
    sessions: list[tuple[McpHttp, str | None]], seconds: float, iso: Isolation
) -> list[float]:
    """Every session calls in a loop for `seconds`; per-call latencies (s)."""
    latencies: list[float] = []
    stop = time.perf_counter() + seconds

    async def run(client: McpHttp, marker: str | None) -> None:
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            result = await client.call_tool(*READ)
            latencies.append(time.perf_counter() - t0)
            iso.check(marker, result)

    await asyncio.gather(*(run(c, m) for c, m in sessions))
    return latencies


async def paced(
    sessions: list[tuple[McpHttp, str | None]], rate: float, seconds: float, iso: Isolation
) -> list[float]:
    """Every session calls every N/rate seconds (staggered) for `seconds`; latencies (s)."""
    latencies: list[float] = []
    period = len(sessions) / rate
    start = time.perf_counter()
    stop = start + seconds

    async def run(k: int, client: McpHttp, marker: str | None) -> None:
        due = start + period * k / len(sessions)
        while due < stop:
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            t0 = time.perf_counter()
            result = await client.call_tool(*READ)
            latencies.append(time.perf_counter() - t0)  # from when it was sent
            iso.check(marker, result)
            due += period

    await asyncio.gather(*(run(k, c, m) for k, (c, m) in enumerate(sessions)))
    return latencies


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def measure_n(n: int, seconds: float, rounds: int, pace: float, runs: Path) -> dict[str, Any]:
    with both_http(runs, "--idle-timeout", "3600", "--max-sessions", str(n + 8)) as (p1, p2, pid1, pid2):
        ports, pids = {"toolgym": p1, "bare": p2}, {"toolgym": pid1, "bare": pid2}
        iso = Isolation()
        sessions: dict[str, list[tuple[McpHttp, str | None]]] = {}
        memory: dict[str, dict[str, float]] = {}
        for side in ("toolgym", "bare"):
            (first,) = await open_sessions(ports[side], 1, side == "toolgym", "warm")
            await asyncio.sleep(0.3)
            before = rss_bytes(pids[side])
            sessions[side] = await open_sessions(ports[side], n, side == "toolgym", side)
            await asyncio.sleep(0.3)
            after = rss_bytes(pids[side])
            memory[side] = {"rss_before": before, "rss_after": after, "per_session": (after - before) / n}
            await first[0].close()

        saturated: dict[str, dict[str, Any]] = {
            s: {"latencies": [], "cpu": 0.0, "wall": 0.0} for s in sessions
        }
        # the client's own collector stays out of the figures: its 2N connections frozen, no
        # collection while a phase runs (the servers' collectors run as they would)
        gc.collect()
        gc.freeze()
        for _ in range(rounds):
            for side, group in sessions.items():
                c0, t0 = cpu_seconds(pids[side]), time.perf_counter()
                with _no_gc():
                    saturated[side]["latencies"] += await closed_loop(group, seconds / rounds, iso)
                saturated[side]["wall"] += time.perf_counter() - t0
                saturated[side]["cpu"] += cpu_seconds(pids[side]) - c0
        rate = pace * len(saturated["toolgym"]["latencies"]) / saturated["toolgym"]["wall"]
        paced_lat: dict[str, list[float]] = {s: [] for s in sessions}
        paced_cpu = dict.fromkeys(sessions, 0.0)
        paced_wall = dict.fromkeys(sessions, 0.0)
        for _ in range(max(1, rounds // 2)):
            for side, group in sessions.items():
                c0, t0 = cpu_seconds(pids[side]), time.perf_counter()
                with _no_gc():
                    paced_lat[side] += await paced(group, rate, seconds / max(1, rounds // 2), iso)
                paced_wall[side] += time.perf_counter() - t0
                paced_cpu[side] += cpu_seconds(pids[side]) - c0
        gc.unfreeze()
        for group in sessions.values():
            await asyncio.gather(*(c.close() for c, _ in group))

    def summary(side: str) -> dict[str, Any]:
        sat = saturated[side]
        calls = len(sat["latencies"])
        return {
            "calls": calls,
            "calls_per_s": round(calls / sat["wall"], 1),
            "cpu_per_call_us": round(sat["cpu"] / max(calls, 1) * 1e6, 1),
            "p50_us": round(statistics.median(sat["latencies"]) * 1e6, 1),
            "p99_us": round(quantile(sat["latencies"], 0.99) * 1e6, 1),
            "paced_calls": len(paced_lat[side]),
            # the server's CPU per call when calls come one by one, and the share of one core it used
            "paced_cpu_per_call_us": round(paced_cpu[side] / max(len(paced_lat[side]), 1) * 1e6, 1),
            "paced_server_busy": round(paced_cpu[side] / max(paced_wall[side], 1e-9), 2),
            "paced_p50_us": round(statistics.median(paced_lat[side]) * 1e6, 1),
            "paced_p99_us": round(quantile(paced_lat[side], 0.99) * 1e6, 1),
            "memory_per_session": round(memory[side]["per_session"]),
            "rss_after": memory[side]["rss_after"],
        }

    return {
        "sessions": n,
        "paced_rate": round(rate, 1),
        "toolgym": summary("toolgym"),
        "bare": summary("bare"),
        "isolation": {
            "reads_checked": iso.checked,
            "failures": len(iso.failures),
            "examples": iso.failures[:3],
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="write the report here")
    parser.add_argument("--quick", action="store_true", help="16 and 64 sessions, short phases")
    parser.add_argument("--sessions", help="comma-separated session counts (default 64,256,1024)")
    parser.add_argument("--seconds", type=float, help="seconds of calls per server and phase (default 12)")
    parser.add_argument("--rounds", type=int, default=4, help="alternations between the servers")
    parser.add_argument("--pace", type=float, default=0.7, help="paced rate, as a share of saturated calls/s")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    opts = parser.parse_args()

    from simulator import load_domain

    domain = load_domain("bank")
    db_size = len(domain.snapshot())
    counts = [int(x) for x in (opts.sessions or ("16,64" if opts.quick else "64,256,1024")).split(",")]
    seconds = opts.seconds or (4.0 if opts.quick else 12.0)
    load = [round(x, 2) for x in os.getloadavg()]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="toolgym-bench-sessions-") as tmp:
        for n in counts:
            rows.append(asyncio.run(measure_n(n, seconds, opts.rounds, opts.pace, Path(tmp) / f"runs-{n}")))
            r = rows[-1]
            print(
                f"{n} sessions: {r['toolgym']['cpu_per_call_us']:.0f} us CPU/call "
                f"(bare {r['bare']['cpu_per_call_us']:.0f}), paced p99 {r['toolgym']['paced_p99_us'] / 1e3:.0f} ms, "
                f"isolation failures {r['isolation']['failures']}",
                file=sys.stderr,
            )

    results = []
    bare = "bare fastmcp no-op tools, same client"
    for r in rows:
        n, ours, base = r["sessions"], r["toolgym"], r["bare"]
        results.append(
            result_row(f"server_cpu_per_call_{n}", n, ours["cpu_per_call_us"], bare, base["cpu_per_call_us"])
        )
        results.append(result_row(f"saturated_p99_{n}", n, ours["p99_us"], bare, base["p99_us"]))
        results.append(result_row(f"paced_p50_{n}", n, ours["paced_p50_us"], bare, base["paced_p50_us"]))
        results.append(result_row(f"paced_p99_{n}", n, ours["paced_p99_us"], bare, base["paced_p99_us"]))
    results.append(
        result_row("server_cpu_per_call", 0, statistics.median(r["toolgym"]["cpu_per_call_us"] for r in rows))
    )
    report = build_report(
        "sessions",
        results,
        TARGETS,
        domain=domain.ref,
        database_bytes=db_size,
        load_at_start=load,
        load_at_end=[round(x, 2) for x in os.getloadavg()],
        quick=opts.quick,
    )
    report["sessions"] = rows
    limit = db_size + 1024 * 1024
    for r in rows:
        report["targets"].append(
            {
                "name": f"memory_per_session_{r['sessions']}",
                "rows": r["sessions"],
                "metric": "bytes",
                "limit": limit,
                "value": r["toolgym"]["memory_per_session"],
                "ok": r["toolgym"]["memory_per_session"] <= limit,
            }
        )
        report["targets"].append(
            {
                "name": f"isolation_{r['sessions']}",
                "rows": r["sessions"],
                "metric": "failures",
                "limit": 0,
                "value": r["isolation"]["failures"],
                "ok": r["isolation"]["failures"] == 0 and r["isolation"]["reads_checked"] > 0,
            }
        )
    print_results(
        report,
        title=f"benchmark suite: sessions ({domain.ref}; load {load} -> {report['meta']['load_at_end']})",
    )
    print_table(rows)
    if opts.json:
        write_report(report, opts.json)
    if opts.check and not all(t["ok"] for t in report["targets"]):
        return 1
    return 0


def print_table(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="live sessions (toolgym / bare fastmcp)", title_justify="left")
    for header in (
        "sessions",
        "calls/s",
        "CPU us/call",
        "sat. p50 ms",
        "sat. p99 ms",
        "paced rate/s",
        "paced CPU us/call (busy)",
        "paced p50 ms",
        "paced p99 ms",
        "KiB/session",
        "isolation",
    ):
        table.add_column(header, justify="right")
    for r in rows:
        a, b = r["toolgym"], r["bare"]

        def pair(key: str, scale: float = 1.0, a: dict[str, Any] = a, b: dict[str, Any] = b) -> str:
            return f"{a[key] / scale:,.0f} / {b[key] / scale:,.0f}"

        iso = r["isolation"]
        table.add_row(
            str(r["sessions"]),
            pair("calls_per_s"),
            pair("cpu_per_call_us"),
            pair("p50_us", 1e3),
            pair("p99_us", 1e3),
            f"{r['paced_rate']:,.0f}",
            f"{a['paced_cpu_per_call_us']:,.0f} ({a['paced_server_busy']:.0%})",
            pair("paced_p50_us", 1e3),
            pair("paced_p99_us", 1e3),
            pair("memory_per_session", 1024),
            f"{iso['failures']} of {iso['reads_checked']:,}",
        )
    Console(width=160).print(table)


if __name__ == "__main__":
    sys.exit(main())
