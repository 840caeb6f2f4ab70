"""The MCP serving benchmark: per-call overhead, first-call latency, HTTP throughput, memory.

    python benchmarks/mcp.py --json mcp.json           # a few minutes
    python benchmarks/mcp.py --quick --json mcp.json   # fewer repetitions (smoke test, ~1 min)

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
| http_throughput_N      | N concurrent HTTP sessions calling in loops: p50 per call | the same load on the bare server |

(The bare server lists the domain's tools because the official client fetches `tools/list`
before its first call to check results; tool count does not change the per-call time.)
The throughput section also reports calls/s and p99 for both servers; the memory section reports
resident memory per live HTTP session (N sessions opened and kept open on a fresh server, RSS
from /proc), for both servers. Targets: call ratio <= 1.2x on each transport; a first call
<= 10 ms over the bare first call; memory per session <= the domain's database size + 1 MB.

Subprocess servers bind 127.0.0.1 on free ports and are stopped before the script exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

# This file is named mcp.py: its folder must come after site-packages, or `import mcp` finds it.
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if p not in ("", _HERE)] + [_HERE]

from _common import ROOT, Target, build_report, print_results, result_row, write_report  # noqa: E402

DOMAIN = "bank"
READ = ("get_customer", {"customer_id": "CUS-090075c2"})
ENV = {
    **os.environ,
    "PYTHONPATH": str(ROOT),
    "FASTMCP_CHECK_FOR_UPDATES": "off",
    "FASTMCP_LOG_LEVEL": "WARNING",
}
TOOLGYM = [sys.executable, "-c", "from toolgym.cli import main; main()"]
BARE = [sys.executable, str(Path(__file__).resolve())]

TARGETS = (
    Target("call_memory", "ratio", 1.2, "in-memory call <= 1.2x a bare fastmcp no-op tool"),
    Target("call_stdio", "ratio", 1.2, "stdio call <= 1.2x a bare fastmcp no-op tool"),
    Target("call_http", "ratio", 1.2, "HTTP call <= 1.2x a bare fastmcp no-op tool"),
    Target("first_call_memory_extra", "median_us", 10_000.0, "first call <= 10 ms over the bare one"),
    Target("first_call_http_extra", "median_us", 10_000.0, "first call <= 10 ms over the bare one"),
)


# ---------------------------------------------------------------------------------------------
# the bare baseline server


def bare_server(domain: str | None = DOMAIN) -> Any:
    """A fastmcp server whose tools do nothing: the floor of any MCP tool call.

    With `domain`, it lists that domain's tools (names, descriptions, schemas) and instructions
    as no-ops, so that what a client does per tool (e.g. the official client's `tools/list` on
    its first call) costs the same on both sides; every call returns `{"ok": true}`.
    """
    from fastmcp import FastMCP
    from fastmcp.tools import Tool
    from fastmcp.tools.base import ToolResult

    class Noop(Tool):
        async def run(self, arguments: dict[str, Any]) -> ToolResult:
            return self.convert_result({"ok": True})

    if domain is None:
        server = FastMCP("bare", mask_error_details=True)
        server.add_tool(
            Noop(name="noop", description="Does nothing.", parameters={"type": "object", "properties": {}})
        )
        return server
    from simulator import load_domain

    d = load_domain(domain)
    server = FastMCP(d.name, instructions=d.policy, mask_error_details=True, dereference_schemas=False)
    for spec in d.tool_specs():
        server.add_tool(Noop(name=spec.name, description=spec.description, parameters=spec.input_schema))
    return server


def run_bare(transport: str, port: int) -> None:
    server = bare_server()
    if transport == "stdio":
        server.run(transport="stdio", show_banner=False)
        return
    import uvicorn

    config = uvicorn.Config(
        server.http_app(path="/mcp"), host="127.0.0.1", port=port, log_level="warning", access_log=False
    )
    asyncio.run(uvicorn.Server(config).serve())


# ---------------------------------------------------------------------------------------------
# helpers: subprocess servers, clients, timing


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def http_process(argv: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(argv, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}: {' '.join(argv)}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.05)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def both_http(runs: Path, *extra: str) -> Iterator[tuple[str, str, int, int]]:
    """(toolgym url, bare url, toolgym pid, bare pid) for two HTTP servers on free ports."""
    p1, p2 = free_port(), free_port()
    ours = [*TOOLGYM, "serve", DOMAIN, "--transport", "http", "--port", str(p1), "--runs", str(runs), *extra]
    bare = [*BARE, "--bare-server", "http", "--port", str(p2)]
    with http_process(ours, p1) as mine, http_process(bare, p2) as theirs:
        yield f"http://127.0.0.1:{p1}/mcp", f"http://127.0.0.1:{p2}/mcp", mine.pid, theirs.pid


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


def quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


# ---------------------------------------------------------------------------------------------
# the measurements


async def call_memory(domain: Any, runs: Path, reps: int) -> dict[str, list[float]]:
    from fastmcp import Client

    from simulator.server import DomainServer

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
    async with stdio_session(ours) as a, stdio_session([*BARE, "--bare-server", "stdio"]) as b:
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

    from simulator.server import DomainServer

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
    url: str, tool: str, arguments: dict[str, Any], sessions: int, seconds: float
) -> dict[str, Any]:
    """`sessions` concurrent HTTP sessions calling in a loop for `seconds`."""
    latencies: list[float] = []
    ready = asyncio.Event()
    stop_at = [0.0]

    async def worker(started: list[int]) -> None:
        async with http_session(url) as session:
            await session.call_tool(tool, arguments)
            started.append(1)
            if len(started) == sessions:
                stop_at[0] = time.perf_counter() + seconds
                ready.set()
            await ready.wait()
            while time.perf_counter() < stop_at[0]:
                t0 = time.perf_counter_ns()
                result = await session.call_tool(tool, arguments)
                latencies.append((time.perf_counter_ns() - t0) / 1000)
                assert not result.is_error

    started: list[int] = []
    await asyncio.gather(*(worker(started) for _ in range(sessions)))
    elapsed = time.perf_counter() - (stop_at[0] - seconds)
    return {
        "sessions": sessions,
        "calls": len(latencies),
        "calls_per_s": round(len(latencies) / max(elapsed, 1e-9), 1),
        "p50_us": round(median(latencies), 1),
        "p99_us": round(quantile(latencies, 0.99), 1),
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
    parser.add_argument("--bare-server", choices=("stdio", "http"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.bare_server:
        run_bare(opts.bare_server, opts.port)
        return 0

    from simulator import load_domain

    domain = load_domain(DOMAIN)
    db_size = len(domain.snapshot())
    rows = domain.row_count()
    reps = 400 if opts.quick else 3000  # in memory
    wire_reps = 200 if opts.quick else 1000  # stdio and HTTP
    first_reps = 20 if opts.quick else 100
    seconds = 1.0 if opts.quick else 4.0
    mem_sessions = 16 if opts.quick else 64
    results: list[dict[str, Any]] = []
    bare_name = "bare fastmcp, same tools as no-ops"

    def add(name: str, timing: dict[str, list[float]]) -> None:
        results.append(result_row(name, rows, median(timing["ours"]), bare_name, median(timing["bare"])))

    with tempfile.TemporaryDirectory(prefix="toolgym-bench-mcp-") as tmp:
        runs = Path(tmp) / "runs"
        add("call_memory", asyncio.run(call_memory(domain, runs, reps)))
        add("call_stdio", asyncio.run(call_stdio(runs, wire_reps)))
        first_mem = asyncio.run(first_call_memory(domain, runs, first_reps))
        add("first_call_memory", first_mem)
        results.append(
            result_row("first_call_memory_extra", rows, median(first_mem["ours"]) - median(first_mem["bare"]))
        )
        throughput_rows = []
        with both_http(runs, "--idle-timeout", "600") as (ours_url, bare_url, _, _):
            add("call_http", asyncio.run(call_http(ours_url, bare_url, wire_reps)))
            first_http = asyncio.run(first_call_http(ours_url, bare_url, first_reps))
            add("first_call_http", first_http)
            results.append(
                result_row(
                    "first_call_http_extra", rows, median(first_http["ours"]) - median(first_http["bare"])
                )
            )
            for n in (1, 8, 32):
                mine = asyncio.run(throughput(ours_url, *READ, n, seconds))
                base = asyncio.run(throughput(bare_url, *READ, n, seconds))
                throughput_rows.append({**mine, "baseline": base})
                results.append(
                    result_row(f"http_throughput_{n}", rows, mine["p50_us"], bare_name, base["p50_us"])
                )
        # memory on fresh processes: freed sessions of the runs above would hide the growth
        with both_http(runs, "--idle-timeout", "600") as (ours_url, bare_url, ours_pid, bare_pid):
            memory = asyncio.run(memory_per_session(ours_url, ours_pid, mem_sessions))
            memory["baseline_per_session"] = asyncio.run(
                memory_per_session(bare_url, bare_pid, mem_sessions)
            )["per_session"]

    limit = db_size + 1024 * 1024
    report = build_report(
        "mcp",
        results,
        TARGETS,
        domain=domain.ref,
        database_bytes=db_size,
        quick=opts.quick,
        reps=reps,
        cpus=os.cpu_count(),
    )
    report["throughput"] = throughput_rows
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
    from rich.table import Table

    console = Console()
    table = Table(title="HTTP throughput (concurrent sessions)", title_justify="left")
    for header in ("sessions", "calls/s", "p50 us", "p99 us", "bare calls/s", "bare p50 us", "bare p99 us"):
        table.add_column(header, justify="right")
    for row in report["throughput"]:
        base = row["baseline"]
        table.add_row(
            str(row["sessions"]),
            f"{row['calls_per_s']:,.0f}",
            f"{row['p50_us']:,.0f}",
            f"{row['p99_us']:,.0f}",
            f"{base['calls_per_s']:,.0f}",
            f"{base['p50_us']:,.0f}",
            f"{base['p99_us']:,.0f}",
        )
    console.print(table)
    mem = report["memory"]
    console.print(
        f"memory per live HTTP session: {mem['per_session'] / 1024:,.0f} KiB over {mem['sessions']} sessions "
        f"(bare server {mem['baseline_per_session'] / 1024:,.0f} KiB; database "
        f"{mem['database_bytes'] / 1024:,.0f} KiB; limit {mem['limit'] / 1024:,.0f} KiB)"
    )


if __name__ == "__main__":
    sys.exit(main())
