"""256 concurrent OpenEnv sessions on one toolgym server: isolation and call latency.

    python benchmarks/openenv_sessions.py --json openenv.json            # 256 sessions, 3 rounds
    python benchmarks/openenv_sessions.py --sessions 32 --rounds 1       # a quick look

The toolgym OpenEnv server (`python -m toolgym.adapters.openenv bank`) runs in a subprocess; a
client process opens N OpenEnv sessions at once (`GenericEnvClient`, WebSockets), and in each:
reset to bank-001, find the customer, write the session's own marker (`update_contact` with a
phone number only it uses), read it back, and make `--reads` more reads. Every session must read
back its own marker and nothing else (isolation). The peer is the same load on a bare
openenv-core server whose environment does no work (`--serve-bare`: reset and step answer at
once), run in the same way and interleaved round by round: the ratio is toolgym's cost per call
over OpenEnv's own floor. Reported: p50 / p99 of one step's round trip, seen by the client, with
the load average (2 shared cores: absolute times move with it, the ratio much less).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# `import mcp` (under openenv and toolgym) must find the SDK, not benchmarks/mcp.py
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if p not in ("", _HERE)] + [_HERE]
ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def serve_bare(port: int, max_sessions: int) -> None:
    """A bare openenv-core server whose environment does nothing (the peer)."""
    import uvicorn
    from openenv.core.env_server.http_server import create_fastapi_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation
    from openenv.core.env_server.types import Observation, State

    class Bare(Environment):  # type: ignore[misc]
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self._state = State(episode_id="bare", step_count=0)

        def reset(self, seed: Any = None, episode_id: Any = None, **kwargs: Any) -> Observation:
            return Observation()

        def step(self, action: Any, timeout_s: Any = None, **kwargs: Any) -> Observation:
            self._state.step_count += 1
            return CallToolObservation(tool_name=action.tool_name, result={"data": dict(action.arguments)})

        @property
        def state(self) -> State:
            return self._state

    app = create_fastapi_app(Bare, CallToolAction, CallToolObservation, max_concurrent_envs=max_sessions)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def start(argv: list[str], port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, *argv], cwd=ROOT)
    deadline = time.monotonic() + 60
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return proc
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"server {argv} did not start")
        time.sleep(0.1)


async def session(url: str, i: int, reads: int, bare: bool, times: list[float]) -> bool:
    """One session: its own marker written and read back; True when it saw exactly its own."""
    from openenv.core import GenericEnvClient

    marker = f"+1-555-{i:04d}-{os.getpid() % 10000:04d}"

    async def step(name: str, arguments: dict[str, Any]) -> Any:
        started = time.perf_counter()
        result = await client.step({"type": "call_tool", "tool_name": name, "arguments": arguments})
        times.append((time.perf_counter() - started) * 1e6)
        return result.observation["result"]["data"]

    async with GenericEnvClient(base_url=url, message_timeout_s=300) as client:
        await client.reset(task_id="bank-001")
        found = await step("find_customers", {"email": "maria.okafor@example.com"})
        cid = found["email"] if bare else found[0]["customer_id"]
        await step("update_contact", {"customer_id": cid, "phone": marker})
        for _ in range(reads):
            await step("get_customer", {"customer_id": cid})
        seen = await step(
            "get_customer", {"customer_id": cid, "phone": marker} if bare else {"customer_id": cid}
        )
        return bool(seen["phone"] == marker)


async def one_round(url: str, sessions: int, reads: int, bare: bool) -> tuple[list[float], int]:
    times: list[float] = []
    ok = await asyncio.gather(*(session(url, i, reads, bare, times) for i in range(sessions)))
    return times, sum(not o for o in ok)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reads", type=int, default=3, help="extra reads per session")
    parser.add_argument("--json", help="write the report here")
    parser.add_argument("--serve-bare", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    limit = args.sessions + 16
    if args.serve_bare:
        serve_bare(args.serve_bare, limit)
        return 0
    ports = {"toolgym": _free_port(), "bare": _free_port()}
    servers = [
        start(
            [
                "-m",
                "toolgym.adapters.openenv",
                "bank",
                "--port",
                str(ports["toolgym"]),
                "--max-sessions",
                str(limit),
            ],
            ports["toolgym"],
        ),
        start(
            [__file__, "--serve-bare", str(ports["bare"]), "--sessions", str(args.sessions)], ports["bare"]
        ),
    ]
    times: dict[str, list[float]] = {"toolgym": [], "bare": []}
    leaks = {"toolgym": 0, "bare": 0}
    try:
        for _ in range(args.rounds):
            for name in ("toolgym", "bare"):
                got, bad = asyncio.run(
                    one_round(f"http://127.0.0.1:{ports[name]}", args.sessions, args.reads, name == "bare")
                )
                times[name] += got
                leaks[name] += bad
    finally:
        for proc in servers:
            proc.terminate()
            proc.wait(10)
    rows = {
        name: {
            "calls": len(t),
            "p50_us": round(statistics.median(t), 1),
            "p99_us": round(quantile(t, 0.99), 1),
            "sessions_not_isolated": leaks[name],
        }
        for name, t in times.items()
    }
    report = {
        "suite": "openenv_sessions",
        "meta": {
            "sessions": args.sessions,
            "rounds": args.rounds,
            "reads": args.reads,
            "load_average_1m": round(os.getloadavg()[0], 2),
        },
        "results": rows,
        "ratio_p50": round(rows["toolgym"]["p50_us"] / rows["bare"]["p50_us"], 3),
        "ratio_p99": round(rows["toolgym"]["p99_us"] / rows["bare"]["p99_us"], 3),
    }
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if rows["toolgym"]["sessions_not_isolated"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
