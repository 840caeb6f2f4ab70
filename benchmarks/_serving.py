"""What the MCP benchmarks share: the bare fastmcp baseline, server subprocesses, and what they cost.

- `bare_server(domain)`: a fastmcp server listing the domain's tools as no-ops (the floor of any
  MCP tool call); `python benchmarks/_serving.py bare stdio|http PORT` runs it.
- `http_process(argv, port)`: a server subprocess, waited for and stopped; `toolgym_http(...)` and
  `bare_http(...)` start the two servers side by side on free ports.
- `cpu_seconds(pid)` and `rss_bytes(pid)`: summed over the process and all its descendants (a
  server with worker processes is measured whole).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# This folder holds mcp.py: it must come after site-packages, or `import mcp` finds that script.
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if p not in ("", _HERE)] + [_HERE]

from _common import ROOT  # noqa: E402

DOMAIN = "bank"
ENV = {
    **os.environ,
    "PYTHONPATH": str(ROOT),
    "FASTMCP_CHECK_FOR_UPDATES": "off",
    "FASTMCP_LOG_LEVEL": "WARNING",
}
TOOLGYM = [sys.executable, "-c", "from toolgym.cli import main; main()"]
BARE = [sys.executable, str(Path(__file__).resolve()), "bare"]
_TICK = os.sysconf("SC_CLK_TCK")


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

    from simulator.serve.server import KEEP_ALIVE_S

    config = uvicorn.Config(
        server.http_app(path="/mcp"),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        backlog=4096,
        timeout_keep_alive=KEEP_ALIVE_S,  # the transport settings of `toolgym serve`
    )
    asyncio.run(uvicorn.Server(config).serve())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def http_process(argv: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    """A server subprocess listening on 127.0.0.1:port; stopped (SIGTERM, then SIGKILL) on exit."""
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


def toolgym_argv(port: int, runs: Path, *extra: str) -> list[str]:
    return [
        *TOOLGYM,
        "serve",
        DOMAIN,
        "--transport",
        "http",
        "--port",
        str(port),
        "--runs",
        str(runs),
        *extra,
    ]


@contextlib.contextmanager
def both_http(runs: Path, *extra: str) -> Iterator[tuple[int, int, int, int]]:
    """(toolgym port, bare port, toolgym pid, bare pid): the two HTTP servers, side by side."""
    p1, p2 = free_port(), free_port()
    with (
        http_process(toolgym_argv(p1, runs, *extra), p1) as mine,
        http_process([*BARE, "http", str(p2)], p2) as theirs,
    ):
        yield p1, p2, mine.pid, theirs.pid


def _tree(pid: int) -> list[int]:
    """`pid` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of the process and its descendants so far."""
    total = 0
    for p in _tree(pid):
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total / _TICK


def rss_bytes(pid: int) -> int:
    """Resident memory of the process and its descendants."""
    total = 0
    for p in _tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
    return total


def quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


if __name__ == "__main__":  # python benchmarks/_serving.py bare stdio|http [PORT]
    run_bare(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0)
