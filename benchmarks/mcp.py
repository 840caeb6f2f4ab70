"""The MCP serving benchmark: per-call overhead, first-call latency, HTTP throughput, memory.

    python benchmarks/mcp.py --json mcp.json           # a few minutes
    python benchmarks/mcp.py --quick --json mcp.json   # fewer repetitions (smoke test, ~1 min)
    python benchmarks/mcp.py --only call_memory,call_stdio   # some sections (see --help)

Every measurement runs a domain read (`get_customer` on the bundled bank domain) through
`toolgym serve` and the same call on a bare fastmcp server that lists the same tools (names,
descriptions, schemas, instructions) but whose tools do nothing, over the same transport with
the same client, interleaved in rounds so that machine noise hits both sides alike:

| name                   | toolgym                                      | baseline: bare no-op tools             |
|------------------------|----------------------------------------------|----------------------------------------|
| call_memory            | fastmcp in-memory Client (handshake session) | same client, in memory                 |
| call_stdio             | official `mcp` ClientSession over stdio      | same client over stdio                 |
| call_http              | official ClientSession over streamable HTTP  | same client over HTTP                  |
| first_call_memory/http | a new session: initialize + first tool result (episode creation included) | the same |
| first_call_*_extra     | first_call minus its baseline: what a new toolgym session costs on top | - |
| http_throughput_N      | N concurrent official-client HTTP sessions calling in loops: p50 per call | the same load on the bare server |

(The bare server lists the domain's tools because the official client fetches `tools/list`
before its first call to check results; tool count does not change the per-call time.)
The throughput section runs toolgym and bare alternately in rounds (12 s of calls per server by
default) and reports calls/s, p99 and the server's CPU per call for both; the official client's
own CPU is part of the wall time here, so `sessions.py` measures the servers with a lightweight
client. The memory section reports resident memory per live HTTP session (N sessions opened and
kept open on a fresh server, RSS of all its processes), for both servers. Targets: an in-memory
call <= 1.1x the bare one, stdio and HTTP calls <= 1.2x; a first call (handshake, episode
creation, first result) <= 1.2x the bare first call (`first_call_*_extra` shows what a new
session costs on top, for information); memory per session <= the domain's database + 1 MB.

Subprocess servers bind 127.0.0.1 on free ports and are stopped before the script exits.
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
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

# This file is named mcp.py: its folder must come after site-packages, or `import mcp` finds it.
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if p not in ("", _HERE)] + [_HERE]

from _common import ROOT, Target, build_report, print_results, result_row, write_report  # noqa: E402
from _serving import (  # noqa: E402
    BARE,
    DOMAIN,
    ENV,
    TOOLGYM,
    bare_server,
    both_http,
    cpu_seconds,
    quantile,
    rss_bytes,
)

READ = ("get_customer", {"customer_id": "CUS-090075c2"})
SECTIONS = ("call_memory", "call_stdio", "first_call_memory", "http", "memory")

TARGETS = (
    Target("call_memory", "ratio", 1.1, "in-memory call <= 1.1x a bare fastmcp no-op tool"),
    Target("call_stdio", "ratio", 1.2, "stdio call <= 1.2x a bare fastmcp no-op tool"),
    Target("call_http", "ratio", 1.2, "HTTP call <= 1.2x a bare fastmcp no-op tool"),
    Target("first_call_memory", "ratio", 1.2, "a new session's first call <= 1.2x the bare one"),
    Target("first_call_http", "ratio", 1.2, "a new session's first call <= 1.2x the bare one"),
)


# ---------------------------------------------------------------------------------------------
# clients and timing


@contextlib.asynccontextmanager
async def http_session(url: str) -> AsyncIterator[Any]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextlib.asynccontextmanager
async def stdio_session(argv: list[str]) -> AsyncIterator[Any]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=ENV, cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def checked(call: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
    async def run() -> Any:
        result = await call()
        if getattr(result, "is_error", False):
            raise RuntimeError(f"tool call failed: {result.content}")
        return result

    return run


async def interleaved(
    calls: dict[str, Callable[[], Awaitable[Any]]], reps: int, rounds: int = 10, warmup: int = 50
) -> dict[str, list[float]]:
    """Per-call microseconds of each call, alternating between them in `rounds` blocks (GC paused)."""
    for call in calls.values():
        for _ in range(warmup):
            await call()
    out: dict[str, list[float]] = {name: [] for name in calls}
    per_round = max(1, reps // rounds)
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            for name, call in calls.items():
                samples = out[name]
                for _ in range(per_round):
                    t0 = time.perf_counter_ns()
                    await call()
                    samples.append((time.perf_counter_ns() - t0) / 1000)
    finally:
        gc.enable()
    return out


def median(samples: list[float]) -> float:
    return statistics.median(samples)


# ---------------------------------------------------------------------------------------------
# the measurements


async def call_memory(domain: Any, runs: Path, reps: int) -> dict[str, list[float]]:
    from fastmcp import Client

    from simulator.serve.server import DomainServer

    ours = DomainServer(domain, runs=runs)
    bare = bare_server()
    name, args = READ
    async with Client(ours.mcp, mode="legacy") as a, Client(bare, mode="legacy") as b:
        return await interleaved(
            {
                "ours": checked(lambda: a.call_tool(name, args, raise_on_error=False)),
                "bare": checked(lambda: b.call_tool(name, args, raise_on_error=False)),
            },
            reps,
        )


async def call_stdio(runs: Path, reps: int) -> dict[str, list[float]]:
    name, args = READ
    ours = [*TOOLGYM, "serve", DOMAIN, "--runs", str(runs)]
    async with stdio_session(ours) as a, stdio_session([*BARE, "stdio"]) as b:
        return await interleaved(
            {
                "ours": checked(lambda: a.call_tool(name, args)),
                "bare": checked(lambda: b.call_tool(name, args)),
            },
            reps,
        )


async def call_http(ours_url: str, bare_url: str, reps: int) -> dict[str, list[float]]:
    name, args = READ
    async with http_session(ours_url) as a, http_session(bare_url) as b:
        return await interleaved(
            {
                "ours": checked(lambda: a.call_tool(name, args)),
                "bare": checked(lambda: b.call_tool(name, args)),
            },
            reps,
        )


async def first_call_memory(domain: Any, runs: Path, reps: int) -> dict[str, list[float]]:
    """A new in-memory handshake session: initialize, then the first tool result."""
    from fastmcp import Client

    from simulator.serve.server import DomainServer

    ours = DomainServer(domain, runs=runs)
    bare = bare_server()
    name, args = READ

    samples: dict[str, list[float]] = {"ours": [], "bare": []}

    def first(label: str, server: Any, tool: str, arguments: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
        async def run() -> None:
            t0 = time.perf_counter_ns()
            async with Client(server, mode="legacy") as client:
                await checked(lambda: client.call_tool(tool, arguments, raise_on_error=False))()
                samples[label].append((time.perf_counter_ns() - t0) / 1000)

        return run

    # keep one client open on each server so that the server lifespan is not re-entered per session
    async with Client(ours.mcp, mode="legacy"), Client(bare, mode="legacy"):
        await interleaved(
            {"ours": first("ours", ours.mcp, name, args), "bare": first("bare", bare, name, args)},
            reps,
            warmup=5,
        )
    return {k: v[5:] for k, v in samples.items()}


async def first_call_http(ours_url: str, bare_url: str, reps: int) -> dict[str, list[float]]:
    """A new HTTP session (a new connection): initialize, then the first tool result."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    name, args = READ
    samples: dict[str, list[float]] = {"ours": [], "bare": []}

    def first(label: str, url: str, tool: str, arguments: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
        async def run() -> None:
            async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
                t0 = time.perf_counter_ns()
                await session.initialize()
                result = await session.call_tool(tool, arguments)
                samples[label].append((time.perf_counter_ns() - t0) / 1000)
                assert not result.is_error

        return run

    await interleaved(
        {"ours": first("ours", ours_url, name, args), "bare": first("bare", bare_url, name, args)},
        reps,
        rounds=5,
        warmup=3,
    )
    return {k: v[3:] for k, v in samples.items()}


async def throughput(
    servers: dict[str, tuple[str, int]], sessions: int, seconds: float, rounds: int = 4
) -> dict[str, dict[str, Any]]:
    """`sessions` concurrent official-client HTTP sessions on each server (name -> (url, pid)),
    calling in loops; the servers take turns in `rounds` so that load hits both alike, each for
    `seconds` in all. Per server: calls/s, p50/p99 per call, server CPU per call."""
    name, args = READ
    async with contextlib.AsyncExitStack() as stack:
        groups: dict[str, list[Any]] = {}
        for side, (url, _) in servers.items():
            groups[side] = [await stack.enter_async_context(http_session(url)) for _ in range(sessions)]
            for session in groups[side]:
                await checked(lambda s=session: s.call_tool(name, args))()
        latencies: dict[str, list[float]] = {side: [] for side in servers}
        wall = dict.fromkeys(servers, 0.0)
        cpu = dict.fromkeys(servers, 0.0)
        for _ in range(rounds):
            for side, group in groups.items():
                stop = time.perf_counter() + seconds / rounds
                out = latencies[side]

                async def loop(session: Any, stop: float = stop, out: list[float] = out) -> None:
                    while time.perf_counter() < stop:
                        t0 = time.perf_counter_ns()
                        result = await session.call_tool(name, args)
                        out.append((time.perf_counter_ns() - t0) / 1000)
                        assert not result.is_error

                c0, t0 = cpu_seconds(servers[side][1]), time.perf_counter()
                await asyncio.gather(*(loop(session) for session in group))
                wall[side] += time.perf_counter() - t0
                cpu[side] += cpu_seconds(servers[side][1]) - c0
    return {
        side: {
            "sessions": sessions,
            "calls": len(latencies[side]),
            "calls_per_s": round(len(latencies[side]) / max(wall[side], 1e-9), 1),
            "p50_us": round(median(latencies[side]), 1),
            "p99_us": round(quantile(latencies[side], 0.99), 1),
            "server_cpu_per_call_us": round(cpu[side] / max(len(latencies[side]), 1) * 1e6, 1),
        }
        for side in servers
    }


async def memory_per_session(url: str, pid: int, sessions: int) -> dict[str, Any]:
    """Resident memory of the server per live HTTP session (sessions kept open)."""
    name, args = READ
    async with contextlib.AsyncExitStack() as stack:
        warm = await stack.enter_async_context(http_session(url))
        await warm.call_tool(name, args)
        await asyncio.sleep(0.3)
        before = rss_bytes(pid)
        for _ in range(sessions):
            session = await stack.enter_async_context(http_session(url))
            result = await session.call_tool(name, args)
            assert not result.is_error
        await asyncio.sleep(0.3)
        after = rss_bytes(pid)
    return {
        "sessions": sessions,
        "rss_before": before,
        "rss_after": after,
        "per_session": (after - before) / sessions,
    }


# ---------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="write the report here")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (smoke test)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument(
        "--only",
        metavar="SECTIONS",
        help=f"comma-separated sections to run (default all): {', '.join(SECTIONS)}",
    )
    opts = parser.parse_args()
    only = set(SECTIONS) if not opts.only else {x.strip() for x in opts.only.split(",")}
    if only - set(SECTIONS):
        parser.error(
            f"unknown section(s) {', '.join(sorted(only - set(SECTIONS)))}: use {', '.join(SECTIONS)}"
        )

    from simulator import load_domain

    domain = load_domain(DOMAIN)
    db_size = len(domain.snapshot())
    rows = domain.row_count()
    reps = 400 if opts.quick else 3000  # in memory
    wire_reps = 200 if opts.quick else 1000  # stdio and HTTP
    first_reps = 20 if opts.quick else 100
    seconds = 3.0 if opts.quick else 12.0  # of calls per server, in 4 alternating rounds
    mem_sessions = 16 if opts.quick else 64
    results: list[dict[str, Any]] = []
    bare_name = "bare fastmcp, same tools as no-ops"

    def add(name: str, timing: dict[str, list[float]]) -> None:
        results.append(result_row(name, rows, median(timing["ours"]), bare_name, median(timing["bare"])))

    throughput_rows: list[dict[str, Any]] = []
    memory: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory(prefix="toolgym-bench-mcp-") as tmp:
        runs = Path(tmp) / "runs"
        if "call_memory" in only:
            add("call_memory", asyncio.run(call_memory(domain, runs, reps)))
        if "call_stdio" in only:
            add("call_stdio", asyncio.run(call_stdio(runs, wire_reps)))
        if "first_call_memory" in only:
            first_mem = asyncio.run(first_call_memory(domain, runs, first_reps))
            add("first_call_memory", first_mem)
            extra = median(first_mem["ours"]) - median(first_mem["bare"])
            results.append(result_row("first_call_memory_extra", rows, extra))
        if "http" in only:
            with both_http(runs, "--idle-timeout", "600") as (ours_port, bare_port, ours_pid, bare_pid):
                ours_url, bare_url = f"http://127.0.0.1:{ours_port}/mcp", f"http://127.0.0.1:{bare_port}/mcp"
                add("call_http", asyncio.run(call_http(ours_url, bare_url, wire_reps)))
                first_http = asyncio.run(first_call_http(ours_url, bare_url, first_reps))
                add("first_call_http", first_http)
                extra = median(first_http["ours"]) - median(first_http["bare"])
                results.append(result_row("first_call_http_extra", rows, extra))
                for n in (1, 8, 32):
                    servers = {"ours": (ours_url, ours_pid), "bare": (bare_url, bare_pid)}
                    both = asyncio.run(throughput(servers, n, seconds))
                    mine, base = both["ours"], both["bare"]
                    throughput_rows.append({**mine, "baseline": base})
                    results.append(
                        result_row(f"http_throughput_{n}", rows, mine["p50_us"], bare_name, base["p50_us"])
                    )
        if "memory" in only:  # on fresh processes: freed sessions of the runs above would hide the growth
            with both_http(runs, "--idle-timeout", "600") as (ours_port, bare_port, ours_pid, bare_pid):
                ours_url, bare_url = f"http://127.0.0.1:{ours_port}/mcp", f"http://127.0.0.1:{bare_port}/mcp"
                memory = asyncio.run(memory_per_session(ours_url, ours_pid, mem_sessions))
                memory["baseline_per_session"] = asyncio.run(
                    memory_per_session(bare_url, bare_pid, mem_sessions)
                )["per_session"]

    limit = db_size + 1024 * 1024
    ran = {r["name"] for r in results}
    report = build_report(
        "mcp",
        results,
        tuple(t for t in TARGETS if t.name in ran),
        domain=domain.ref,
        database_bytes=db_size,
        quick=opts.quick,
        reps=reps,
        cpus=os.cpu_count(),
    )
    report["load"] = [round(x, 2) for x in os.getloadavg()]
    report["throughput"] = throughput_rows
    if memory is not None:
        report["memory"] = {**memory, "database_bytes": db_size, "limit": limit}
        report["targets"].append(
            {
                "name": "memory_per_session",
                "rows": rows,
                "metric": "bytes",
                "limit": limit,
                "value": round(memory["per_session"]),
                "ok": memory["per_session"] <= limit,
            }
        )
    print_results(report, title=f"benchmark suite: mcp ({domain.ref}, {rows:,} seed rows)")
    print_extra(report)
    if opts.json:
        write_report(report, opts.json)
    if opts.check and not all(t["ok"] for t in report["targets"]):
        return 1
    return 0


def print_extra(report: dict[str, Any]) -> None:
    from rich.console import Console

    console = Console()
    console.print(f"load average at the end: {report['load']}")
    if report["throughput"]:
        print_throughput(console, report["throughput"])
    mem = report.get("memory")
    if mem is not None:
        console.print(
            f"memory per live HTTP session: {mem['per_session'] / 1024:,.0f} KiB over {mem['sessions']} "
            f"sessions (bare server {mem['baseline_per_session'] / 1024:,.0f} KiB; database "
            f"{mem['database_bytes'] / 1024:,.0f} KiB; limit {mem['limit'] / 1024:,.0f} KiB)"
        )


def print_throughput(console: Any, rows: list[dict[str, Any]]) -> None:
    from rich.table import Table

    table = Table(title="HTTP throughput (concurrent sessions)", title_justify="left")
    for header in (
        "sessions",
        "calls/s",
        "p50 us",
        "p99 us",
        "CPU us/call",
        "bare calls/s",
        "bare p50 us",
        "bare p99 us",
        "bare CPU us/call",
    ):
        table.add_column(header, justify="right")
    for row in rows:
        base = row["baseline"]
        table.add_row(
            str(row["sessions"]),
            f"{row['calls_per_s']:,.0f}",
            f"{row['p50_us']:,.0f}",
            f"{row['p99_us']:,.0f}",
            f"{row['server_cpu_per_call_us']:,.0f}",
            f"{base['calls_per_s']:,.0f}",
            f"{base['p50_us']:,.0f}",
            f"{base['p99_us']:,.0f}",
            f"{base['server_cpu_per_call_us']:,.0f}",
        )
    console.print(table)


if __name__ == "__main__":
    sys.exit(main())
