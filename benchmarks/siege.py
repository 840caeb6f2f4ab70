"""The siege: every attack at once against one live server beside honest sessions.

    python benchmarks/attack.py --only siege --check         # exit 1 when a goal is missed
    python benchmarks/attack.py --only siege --attacks growth,half-sent   # some attacks only

(`benchmarks/attack.py` is the command line; this module is the siege it runs, and the server and
core helpers the scenarios there share.)

One `toolgym serve bank --transport http` with its caps set (`--max-sessions`,
`--max-sessions-per-client`, `--max-connections`; handshake, header and body timeouts short enough
to act within the run) holds N honest sessions, each repeating a support agent's cheap reads about
one customer at a steady pace. Phase 1: the honest sessions alone. Phase 2: the same sessions while
every attack below runs at once, from one attacking process on core 0, each attack from its own
client address (127.0.x.y: the server counts one client per address), each a loop bounded in count
and in time:

| attack | what it sends | what the server should do |
|---|---|---|
| bare handshakes | `initialize` on (per-client cap + 8) connections from each of several addresses, then nothing; again on the same connections every handshake timeout | 503 past the per-client and the global cap, and close the connection; free the slots after `--handshake-timeout` |
| half-sent | part of the headers, or the headers and part of the body, then nothing | close the connection at `--header-timeout` / `--body-timeout` |
| big text | `get_customer` with a 0.9 MB id; a 900 KB unknown tool name | a tool error (maxLength; unknown tool), the text not echoed back |
| growth | `update_contact` with a 10,000-character address, then `replace_card` again and again (each new card copies the address) | a tool error at the 16 MiB growth cap |
| deep nesting | arguments nested 3,000 deep (lists; objects) | refuse it unparsed (400) |
| malformed | to the fast path: a lone-surrogate id (escaped; raw bytes), UTF-16 (with and without BOM), a UTF-8 BOM, two Content-Types; then a valid call | refuse each (400; two Content-Types: the SDK's reading); the session still works |
| costly reads | bank's broadest legal reads, back to back | answer them (bank has no costly call: attack.py's scenarios keep the costliest legal calls) |

Reported: the honest calls' p50/p99 alone and under attack (goal: p99 under attack <= 2x alone),
their slowest calls, how many were slow in each second of the attack, and a timeline of the
attacks' events to line them up with; the server's CPU time and its wait for a CPU in each phase
(the machine is shared); the server's RSS (VmRSS, VmHWM) and open files (all; sockets) at the
start, after phase 1, at the peak of each phase (sampled by a thread every 0.25 s) and after the
attack, against bounds (memory: the phase-1 RSS + every free session slot at an honest session's
measured cost + the growth sessions at the 16 MiB cap + 4x a maximal body per attacking session;
sockets: max connections + 50; files: a socket and a transcript per session + 50); what the server
answered each attack; whether a new honest session gets in under attack and after it; the
tracebacks the server logged.

The attackers run on core 0, the server and the honest clients on core 1, as if the attackers
were on another machine. All traffic goes to 127.0.0.1; loops are bounded in count and time.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import multiprocessing
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# `import mcp` must find the SDK, not benchmarks/mcp.py
_HERE = str(Path(__file__).resolve().parent)
sys.path[:] = [p for p in sys.path if p not in ("", _HERE)] + [_HERE]

from mcpclient import HANDSHAKE_VERSION, McpHttp, McpHttpError  # noqa: E402

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
HOST = "127.0.0.1"
GROWTH_CAP = 16 * 2**20  # simulator.runtime.budget.Budget.growth_bytes
MAX_BODY = 2**20  # --max-body-bytes
STALL_S = 30.0  # an attack request unanswered this long counts as a stall
CONNECTION_MARGIN = 32  # simulator.serve.serving.CONNECTION_MARGIN: --max-connections is --max-sessions + 32


@dataclass(frozen=True)
class Sizes:
    honest: int  # honest sessions
    period: float  # seconds between one honest session's calls
    alone_s: float  # phase 1
    attack_s: float  # phase 2
    max_sessions: int
    per_client: int
    handshake_timeout: float
    header_timeout: float
    body_timeout: float
    bare_clients: int  # addresses sending bare handshakes
    half_open: int  # half-sent connections per wave
    big_calls: int
    growth_sessions: int
    growth_calls: int
    deep_calls: int
    malformed_rounds: int
    costly_calls: int

    @property
    def max_connections(self) -> int:
        """The server's cap on open connections (`--max-connections`): its default for `max_sessions`."""
        return self.max_sessions + CONNECTION_MARGIN


FULL = Sizes(256, 2.0, 30.0, 40.0, 512, 64, 10.0, 5.0, 10.0, 5, 64, 400, 2, 2500, 400, 60, 4000)
QUICK = Sizes(64, 1.0, 8.0, 12.0, 128, 24, 4.0, 2.0, 3.0, 3, 16, 100, 1, 2500, 100, 15, 1000)

JSON_HEADERS = [
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
    (b"mcp-protocol-version", HANDSHAKE_VERSION.encode()),
]


def rpc(method: str, params: dict[str, Any], rid: int = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


def call(name: str, arguments: Any) -> bytes:
    return rpc("tools/call", {"name": name, "arguments": arguments})


def targets() -> dict[str, Any]:
    """Who the honest sessions and the attacks ask about, from bank's seed database."""
    from simulator import load_domain

    tables = load_domain("bank").episode(seed=0).export()
    accounts: dict[str, list[dict[str, Any]]] = {}
    for a in tables["accounts"]:
        accounts.setdefault(a["customer_id"], []).append(a)
    scripts = []
    for c in tables["customers"]:
        if not accounts.get(c["customer_id"]):
            continue
        cid, acc = c["customer_id"], accounts[c["customer_id"]][0]["account_id"]
        scripts.append(
            [
                ("find_customers", {"email": c["email"]}),
                ("get_customer", {"customer_id": cid}),
                ("list_accounts", {"customer_id": cid}),
                ("get_account", {"customer_id": cid, "account_id": acc}),
                ("list_cards", {"customer_id": cid}),
                ("list_account_transfers", {"customer_id": cid, "account_id": acc}),
                ("list_beneficiaries", {"customer_id": cid}),
                ("list_disputes", {"customer_id": cid}),
            ]
        )
    status = {a["account_id"]: a["status"] for a in tables["accounts"]}
    cards = [c for c in tables["cards"] if c["status"] == "active" and status[c["account_id"]] == "open"]
    spend = Counter(t["card_id"] for t in tables["card_transactions"])
    busiest = max(tables["cards"], key=lambda c: spend[c["card_id"]])
    return {
        "scripts": scripts,
        "growth": [(c["customer_id"], c["card_id"]) for c in cards],
        "costly": [
            ("find_customers", {"name": "a"}),
            ("find_customers", {"name": "%_" * 5000}),
            (
                "list_card_transactions",
                {"customer_id": busiest["customer_id"], "card_id": busiest["card_id"]},
            ),
            (
                "list_account_transfers",
                {"customer_id": busiest["customer_id"], "account_id": busiest["account_id"]},
            ),
        ],
        "probe": scripts[0][1],  # get_customer
    }


class Tally:
    """One attack's requests: how each was answered, how long it took, an example of each answer."""

    def __init__(self, name: str):
        self.name = name
        self.outcomes: Counter[str] = Counter()
        self.ms: list[float] = []
        self.examples: dict[str, str] = {}
        self.held = self.peak_held = 0
        self.extra: dict[str, Any] = {}
        self.events: list[tuple[str, float]] = []  # (what, wall-clock time): for the timeline

    def mark(self, what: str) -> None:
        self.events.append((what, time.time()))

    def add(self, outcome: str, ms: float, example: str = "") -> None:
        self.outcomes[outcome] += 1
        self.ms.append(ms)
        if example and outcome not in self.examples:
            self.examples[outcome] = example[:160]

    def hold(self, n: int) -> None:
        self.held += n
        self.peak_held = max(self.peak_held, self.held)

    def report(self) -> dict[str, Any]:
        return {
            "attack": self.name,
            "requests": sum(self.outcomes.values()),
            "outcomes": dict(self.outcomes.most_common()),
            "median_ms": round(statistics.median(self.ms), 2) if self.ms else None,
            "max_ms": round(max(self.ms), 2) if self.ms else None,
            "peak_connections": self.peak_held,
            "examples": self.examples,
            "events": self.events,
            **self.extra,
        }


def answered(status: int, payload: bytes) -> tuple[str, str, dict[str, Any] | None]:
    """(outcome, example text, JSON-RPC message) of an HTTP answer."""
    if status >= 400:
        return f"refused {status}", payload[:200].decode("utf-8", "replace"), None
    message = None
    try:
        if payload.lstrip().startswith(b"{"):
            message = json.loads(payload)
        else:  # an event stream: its last data line
            for line in payload.splitlines():
                if line.startswith(b"data:"):
                    message = json.loads(line[5:])
    except ValueError:
        return f"unreadable {status}", payload[:200].decode("utf-8", "replace"), None
    if not isinstance(message, dict):
        return f"empty {status}", "", None
    if "error" in message:
        return "JSON-RPC error", json.dumps(message["error"])[:200], message
    result = message.get("result") or {}
    if result.get("isError"):
        text = (result.get("content") or [{}])[0].get("text", "")
        return ("refused (capacity label)" if "kind=capacity" in text else "tool error"), text, message
    return "ok", "", message


async def exchange(
    client: McpHttp, body: bytes, headers: list[tuple[bytes, bytes]] = JSON_HEADERS
) -> tuple[int, dict[bytes, bytes], bytes] | str:
    """The server's answer to `body` posted as it is, or why there is none ("stalled", "closed")."""
    try:
        return await asyncio.wait_for(client.post(body, headers), STALL_S)
    except TimeoutError:
        return "stalled"
    except (asyncio.IncompleteReadError, ConnectionError):
        return "closed"


async def send(
    t: Tally, client: McpHttp, body: bytes, headers: list[tuple[bytes, bytes]] = JSON_HEADERS, label: str = ""
) -> tuple[str, dict[str, Any] | None]:
    """Post `body` as it is on `client`'s connection; counted in `t` (outcome prefixed by `label`)."""
    t0 = time.perf_counter()
    answer = await exchange(client, body, headers)
    outcome, example, message = (
        (answer, "", None) if isinstance(answer, str) else answered(answer[0], answer[2])
    )
    if not isinstance(answer, str):
        t.extra["largest_answer_bytes"] = max(t.extra.get("largest_answer_bytes", 0), len(answer[2]))
    t.add(label + outcome, (time.perf_counter() - t0) * 1000, example)
    return outcome, message


async def open_session(port: int, source: str, first: tuple[str, dict[str, Any]]) -> McpHttp:
    """An initialized session that has made one call (so no handshake timeout closes it)."""
    client = await McpHttp.connect(HOST, port, "/mcp", source=source)
    try:
        await asyncio.wait_for(client.initialize(), STALL_S)
        await asyncio.wait_for(client.call_tool(*first), STALL_S)
    except BaseException:
        await client.close()
        raise
    return client


class Stop:
    """The attack's end: the shared event, or its own deadline."""

    def __init__(self, event: Any, seconds: float):
        self.event = event
        self.deadline = time.monotonic() + seconds

    def __bool__(self) -> bool:
        return self.event.is_set() or time.monotonic() > self.deadline

    async def pause(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self and time.monotonic() < end:
            await asyncio.sleep(min(0.1, end - time.monotonic()))


INITIALIZE = rpc(
    "initialize",
    {
        "protocolVersion": HANDSHAKE_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "bare", "version": "1"},
    },
)


def _refused(status: int, text: str) -> str:
    if "This client already holds" in text:
        return f"refused {status} (per-client cap)"
    return f"refused {status} (server limit)" if "at its limit" in text else f"refused {status}"


async def bare_handshakes(t: Tally, port: int, sizes: Sizes, stop: Stop) -> None:
    """`initialize` and nothing else, on per-client cap + 8 connections from each of `bare_clients`
    addresses; a wave later (past the handshake timeout), ask each admitted one whether its
    session still lives (ping), then handshake again on every connection. Refused connections are
    kept open too; one the server closed is opened again."""
    addresses = [f"127.0.2.{k + 1}" for k in range(sizes.bare_clients)]
    interval = sizes.handshake_timeout * 1.3 + 0.5  # the reaper runs every timeout / 4
    gate = asyncio.Semaphore(32)
    conns: list[McpHttp] = []
    admitted: list[int] = []

    async def connect(source: str) -> None:
        async with gate:
            with contextlib.suppress(OSError):
                conns.append(await McpHttp.connect(HOST, port, "/mcp", source=source))
                t.hold(1)

    def drop(c: McpHttp, outcome: str, t0: float) -> bool:
        t.add(outcome, (time.perf_counter() - t0) * 1000)
        conns.remove(c)
        c.writer.close()
        t.hold(-1)
        return False

    async def handshake(c: McpHttp) -> bool:
        async with gate:
            t0 = time.perf_counter()
            if c.session_id is not None:  # admitted a wave ago: does its session still live?
                answer = await exchange(c, rpc("ping", {}, 2))
                if isinstance(answer, str):
                    return drop(c, f"a wave later: {answer}", t0)
                verdict = "closed by the server" if answer[0] == 404 else f"still open ({answer[0]})"
                t.add(f"a wave later: {verdict}", (time.perf_counter() - t0) * 1000)
                c.session_id, t0 = None, time.perf_counter()
            answer = await exchange(c, INITIALIZE)
            if isinstance(answer, str):
                return drop(c, answer, t0)
            status, headers, payload = answer
            ms = (time.perf_counter() - t0) * 1000
            if status == 200 and b"mcp-session-id" in headers:
                t.add("admitted", ms)
                c.session_id = headers[b"mcp-session-id"].decode()
                await exchange(c, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
                return True
            text = payload[:300].decode("utf-8", "replace")
            t.add(_refused(status, text), ms, text)
            return False

    for wave in range(int(sizes.attack_s / interval) + 2):
        if stop:
            break
        t.mark(f"handshake wave {wave + 1}")
        per = sizes.per_client + 8
        missing = [a for a in addresses for _ in range(per - sum(c.source == a for c in conns))]
        await asyncio.gather(*(connect(a) for a in missing))
        admitted.append(sum(await asyncio.gather(*(handshake(c) for c in list(conns)))))
        await stop.pause(interval)
    t.extra["admitted_per_wave"] = admitted
    for c in conns:
        c.session_id = None  # (no DELETE: the attacker just leaves)
        await c.close()


async def half_sent(t: Tally, port: int, sizes: Sizes, stop: Stop) -> None:
    """`half_open` connections per wave: half send part of the headers, half the headers and part
    of the body; then nothing until the server closes them (or the wait ends)."""
    head = b"POST /mcp HTTP/1.1\r\nhost: %s:%d\r\n" % (HOST.encode(), port)
    full = head + b"".join(k + b": " + v + b"\r\n" for k, v in JSON_HEADERS) + b"content-length: 1000\r\n\r\n"
    sends = {"headers": head + b"content-", "body": full + b'{"jsonrpc":"2.0","id":1,'}
    wait = sizes.header_timeout + sizes.body_timeout + 5

    async def one(kind: str) -> None:
        try:
            reader, writer = await asyncio.open_connection(HOST, port, local_addr=("127.0.3.1", 0))
        except OSError as exc:
            t.add(f"connect failed ({type(exc).__name__})", 0.0)
            return
        t.hold(1)
        t0 = time.perf_counter()
        writer.write(sends[kind])
        try:
            data = await asyncio.wait_for(reader.read(), wait)
            answer = (
                f" after answering {data.split(b' ', 2)[1].decode()}" if data.startswith(b"HTTP/") else ""
            )
            t.add(f"partial {kind}: closed by the server{answer}", (time.perf_counter() - t0) * 1000)
        except TimeoutError:
            t.add(f"partial {kind}: still open after {wait:g} s", (time.perf_counter() - t0) * 1000)
        except ConnectionError:
            t.add(f"partial {kind}: reset by the server", (time.perf_counter() - t0) * 1000)
        writer.close()
        t.hold(-1)

    for wave in range(int(sizes.attack_s / (sizes.header_timeout + 1)) + 2):
        if stop:
            break
        t.mark(f"half-sent wave {wave + 1}")
        await asyncio.gather(*(one(("headers", "body")[i % 2]) for i in range(sizes.half_open)))


async def in_session(
    t: Tally,
    port: int,
    source: str,
    first: tuple[str, dict[str, Any]],
    bodies: list[tuple[str, bytes, Any]],
    bound: int,
    stop: Stop,
) -> None:
    """`bound` requests from `bodies` (label, body, headers) in turn, back to back, on one session
    of the client `source`; a new session when the server closes the connection (at most 5)."""
    client = None
    opened = 0
    for i in range(bound):
        if stop:
            break
        if client is None:
            if opened == 5:
                break
            opened += 1
            try:
                client = await open_session(port, source, first)
            except (McpHttpError, OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
                t.add("no session (refused)", 0.0, str(exc))
                await stop.pause(1.0)
                continue
            t.hold(1)
        label, body, headers = bodies[i % len(bodies)]
        outcome, _ = await send(t, client, body, headers or JSON_HEADERS, label)
        if outcome in ("closed", "stalled"):
            await client.close()
            client = None
            t.hold(-1)
    if client is not None:
        await client.close()
        t.hold(-1)


async def growth(t: Tally, port: int, source: str, card: tuple[str, str], sizes: Sizes, stop: Stop) -> None:
    """A 10,000-character address, then `replace_card` on the newest card until refused (5 times)."""
    customer, card_id = card
    try:
        client = await open_session(port, source, ("get_customer", {"customer_id": customer}))
    except (McpHttpError, OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
        t.add("no session (refused)", 0.0, str(exc))
        return
    t.hold(1)
    await send(
        t,
        client,
        call("update_contact", {"customer_id": customer, "address": "A" * 10_000}),
        label="update_contact: ",
    )
    written = refused = 0
    for _ in range(sizes.growth_calls):
        if stop or refused == 5:
            break
        args = {"customer_id": customer, "card_id": card_id, "reason": "damaged"}
        outcome, message = await send(t, client, call("replace_card", args), label="replace_card: ")
        if outcome == "ok" and message is not None:
            card_id = message["result"]["structuredContent"]["new_card"]["card_id"]
            written += 1
        elif outcome in ("closed", "stalled"):
            break
        else:
            refused += 1
    t.mark("a grown session ends")
    t.extra.setdefault("cards_written_per_session", []).append(written)
    t.extra.setdefault("refused_at_cap", []).append(refused > 0)
    await client.close()
    t.hold(-1)


def malformed_bodies(valid: bytes) -> list[tuple[str, bytes, Any]]:
    """The malformed requests: (label, body, headers); then the valid call itself."""
    text = valid.decode()
    plain = [(b"content-type", b"text/plain")]
    return [
        ("surrogate id (escaped): ", valid.replace(b'"id": 1', b'"id": "\\ud800"'), None),
        ("surrogate id (raw bytes): ", valid.replace(b'"id": 1', b'"id": "\xed\xa0\x80"'), None),
        ("UTF-16 body: ", text.encode("utf-16-le"), None),
        ("UTF-16 body with BOM: ", text.encode("utf-16"), None),
        ("UTF-8 BOM: ", b"\xef\xbb\xbf" + valid, None),
        ("two Content-Types, JSON first: ", valid, [JSON_HEADERS[0], *plain, *JSON_HEADERS[1:]]),
        ("two Content-Types, text first: ", valid, [*plain, *JSON_HEADERS]),
        ("valid call after them: ", valid, None),
    ]


ATTACKS = ("bare handshakes", "half-sent", "big text", "growth", "deep nesting", "malformed", "costly reads")
#: the client address of each attack that runs in one session (the server counts one client per address)
SOURCES = {
    "big text": "127.0.4.1",
    "deep nesting": "127.0.6.1",
    "malformed": "127.0.7.1",
    "costly reads": "127.0.8.1",
}


def _nested(arguments: bytes) -> bytes:
    head = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_customer","arguments":'
    return head + arguments + b"}}"


async def run_attacks(
    port: int, sizes: Sizes, aims: dict[str, Any], chosen: list[str], event: Any, ready: Any
) -> list[dict[str, Any]]:
    """The `chosen` attacks at once; `ready` is set once they are under way. Their reports."""
    stop = Stop(event, sizes.attack_s + 60)
    t = {name: Tally(name) for name in chosen}
    first = aims["probe"]  # a cheap read: the first call that makes an attacking session live
    bodies = {
        "big text": [
            ("0.9 MB argument: ", call("get_customer", {"customer_id": "x" * 900_000}), None),
            ("900 KB tool name: ", call("x" * 900_000, {}), None),
        ],
        "deep nesting": [
            ("lists 3,000 deep: ", _nested(b'{"customer_id":' + b"[" * 3000 + b"]" * 3000 + b"}"), None),
            ("objects 3,000 deep: ", _nested(b'{"a":' * 3000 + b"1" + b"}" * 3000), None),
        ],
        "malformed": malformed_bodies(call(*first)),
        "costly reads": [("", call(*c), None) for c in aims["costly"]],
    }
    bound = {
        "big text": sizes.big_calls,
        "deep nesting": sizes.deep_calls,
        "malformed": sizes.malformed_rounds * 8,
        "costly reads": sizes.costly_calls,
    }
    jobs = [in_session(t[n], port, SOURCES[n], first, bodies[n], bound[n], stop) for n in SOURCES if n in t]
    if "growth" in t:
        cards = aims["growth"][: sizes.growth_sessions]
        jobs += [growth(t["growth"], port, "127.0.5.1", card, sizes, stop) for card in cards]
    tasks = [asyncio.ensure_future(job) for job in jobs]
    await asyncio.sleep(1.0)  # their sessions open before the bare handshakes take the free slots
    ready.set()
    if "bare handshakes" in t:
        tasks.append(asyncio.ensure_future(bare_handshakes(t["bare handshakes"], port, sizes, stop)))
    if "half-sent" in t:
        tasks.append(asyncio.ensure_future(half_sent(t["half-sent"], port, sizes, stop)))
    await asyncio.gather(*tasks)
    return [t[name].report() for name in chosen]


def _siege_process(
    port: int, sizes: Sizes, aims: dict[str, Any], chosen: list[str], stop: Any, ready: Any, out: Any
) -> None:
    """The attacking clients, in a process of their own on a core of their own."""
    pin(ATTACKER_CPUS)
    out.put(asyncio.run(run_attacks(port, sizes, aims, chosen, stop, ready)))


def server_stats(pid: int) -> dict[str, int]:
    """The server's resident memory now and at its peak (VmRSS, VmHWM), its open files and sockets."""
    stats = {"rss": 0, "hwm": 0, "files": 0, "sockets": 0}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                stats["rss" if line.startswith("VmRSS") else "hwm"] = int(line.split()[1]) * 1024
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                stats["files"] += 1
                stats["sockets"] += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
    return stats


def cpu_and_wait(pid: int) -> tuple[float, float]:
    """Seconds the server's threads have run on a CPU, and waited for one (runnable, not running:
    the shared machine's contention), from /proc/PID/task/*/schedstat."""
    run = wait = 0
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError):
                fields = Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()
                run, wait = run + int(fields[0]), wait + int(fields[1])
    return run / 1e9, wait / 1e9


class Honest:
    """The honest sessions: paced calls, their latencies by phase ("alone", "attack"), failures."""

    def __init__(self, sizes: Sizes, scripts: list[list[tuple[str, dict[str, Any]]]]):
        self.sizes = sizes
        self.scripts = scripts
        self.phase: str | None = None  # calls are timed only within a phase
        self.ms: dict[str, list[float]] = {"alone": [], "attack": []}
        self.at: dict[str, list[float]] = {"alone": [], "attack": []}  # when each call was sent
        self.since = 0.0  # the phase's start
        self.began: dict[str, float] = {}  # each phase's start, wall-clock time
        self.failures: Counter[str] = Counter()
        self.clients: list[McpHttp] = []

    def enter(self, phase: str | None) -> None:
        self.phase, self.since = phase, time.perf_counter()
        if phase is not None:
            self.began[phase] = time.time()

    def slow_per_second(self, phase: str, above_ms: float) -> dict[int, int]:
        """How many of the phase's calls took longer than `above_ms`, by the second they were sent in."""
        slow = Counter(
            int(at) for ms, at in zip(self.ms[phase], self.at[phase], strict=True) if ms > above_ms
        )
        return dict(sorted(slow.items()))

    def slowest(self, phase: str, n: int = 5) -> list[tuple[float, float]]:
        """The phase's n slowest calls: (ms, seconds into the phase)."""
        worst = sorted(zip(self.ms[phase], self.at[phase], strict=True), reverse=True)[:n]
        return [(round(ms, 1), round(at, 1)) for ms, at in worst]

    async def open(self, port: int) -> None:
        """N sessions from addresses holding half the per-client cap each (in batches of 32)."""
        per_address = max(1, self.sizes.per_client // 2)

        async def one(i: int) -> McpHttp:
            source = f"127.0.1.{i // per_address + 1}"
            return await open_session(port, source, self.scripts[i % len(self.scripts)][0])

        for start in range(0, self.sizes.honest, 32):
            batch = range(start, min(self.sizes.honest, start + 32))
            self.clients += await asyncio.gather(*(one(i) for i in batch))

    async def run(self, until: float) -> None:
        """Every session calls every `period` s (staggered), through its script in turn."""
        n, period, start = len(self.clients), self.sizes.period, time.perf_counter()

        async def paced(k: int, client: McpHttp) -> None:
            script = self.scripts[k % len(self.scripts)]
            due, i = start + period * k / n, 1
            while due < until:
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
                due += period
                phase = self.phase
                t0 = time.perf_counter()
                try:
                    result = await asyncio.wait_for(client.call_tool(*script[i % len(script)]), STALL_S)
                except (McpHttpError, OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
                    self.failures[f"{type(exc).__name__}: {str(exc)[:80]}"] += 1
                    return  # a session lost
                if phase is not None and phase == self.phase:
                    self.ms[phase].append((time.perf_counter() - t0) * 1000)
                    self.at[phase].append(t0 - self.since)
                if result.get("isError"):
                    self.failures[f"tool error: {result['content'][0]['text'][:80]}"] += 1
                i += 1

        await asyncio.gather(*(paced(k, c) for k, c in enumerate(self.clients)))

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.clients), return_exceptions=True)


async def newcomer(port: int, first: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """Whether a new honest session gets in now (from an honest address with room under its cap)."""
    t0 = time.perf_counter()
    try:
        client = await open_session(port, "127.0.1.1", first)
    except (McpHttpError, OSError, asyncio.IncompleteReadError, TimeoutError) as exc:
        return {
            "admitted": False,
            "ms": round((time.perf_counter() - t0) * 1000, 1),
            "answer": str(exc)[:160],
        }
    await client.close()
    return {"admitted": True, "ms": round((time.perf_counter() - t0) * 1000, 1)}


class Sampler(threading.Thread):
    """The server's figures every `every` s while a phase runs, in a thread (so that sampling
    costs the honest clients' event loop nothing, and the same in every phase): the peak per phase."""

    def __init__(self, pid: int, every: float = 0.25):
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.phase: str | None = None
        self.peaks: dict[str, dict[str, int]] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(self.every):
            if (phase := self.phase) is not None:
                peak = self.peaks.setdefault(phase, {})
                for k, v in server_stats(self.pid).items():
                    peak[k] = max(v, peak.get(k, 0))


async def siege_phases(
    port: int, pid: int, sizes: Sizes, aims: dict[str, Any], chosen: list[str]
) -> dict[str, Any]:
    """Honest sessions alone, then under the `chosen` attacks at once; what the server held."""
    stats = {"start": server_stats(pid)}
    honest = Honest(sizes, aims["scripts"])
    await honest.open(port)
    ramp = 30.0  # at most this long for the attackers' sessions to open
    sampler = Sampler(pid)
    sampler.start()

    sched: dict[str, list[float]] = {}

    def enter(phase: str | None) -> None:
        if sampler.phase is not None:  # the phase that ends: the server's CPU, and its wait for one
            cpu, wait = cpu_and_wait(pid)
            sched[sampler.phase] = [
                round(cpu - sched[sampler.phase][0], 2),
                round(wait - sched[sampler.phase][1], 2),
            ]
        if phase is not None:
            sched[phase] = list(cpu_and_wait(pid))
        honest.enter(phase)
        sampler.phase = phase

    ctx = multiprocessing.get_context("spawn")
    stop, ready, out = ctx.Event(), ctx.Event(), ctx.Queue()
    attackers = ctx.Process(target=_siege_process, args=(port, sizes, aims, chosen, stop, ready, out))
    gc.collect()
    gc.freeze()  # the client's own collector stays out of the figures (sessions.py does the same)
    gc.disable()
    try:
        running = asyncio.ensure_future(
            honest.run(time.perf_counter() + sizes.alone_s + ramp + sizes.attack_s + 2)
        )
        await asyncio.sleep(sizes.period)  # every session has called once
        enter("alone")
        await asyncio.sleep(sizes.alone_s)
        enter(None)
        stats["honest only"] = server_stats(pid)
        attackers.start()
        end = time.monotonic() + ramp
        while not ready.is_set() and time.monotonic() < end:
            await asyncio.sleep(0.1)
        enter("attack")
        await asyncio.sleep(sizes.attack_s / 2)
        probe = await newcomer(port, aims["scripts"][0][0])
        await asyncio.sleep(sizes.attack_s / 2)
        enter(None)
        sched["attackers (whole run)"] = [round(x, 2) for x in cpu_and_wait(attackers.pid or 0)]
        stop.set()
        report = await asyncio.get_running_loop().run_in_executor(None, out.get, True, sizes.attack_s + 90)
        attackers.join(timeout=30)
    finally:
        stop.set()
        if attackers.is_alive():  # (only when something above failed)
            attackers.terminate()
            attackers.join(timeout=10)
        sampler.done.set()
        gc.enable()
        gc.unfreeze()
    stats["honest only (peak)"] = sampler.peaks.get("alone", {})
    stats["under attack (peak)"] = sampler.peaks.get("attack", {})
    stats["after the attack"] = server_stats(pid)
    after = await newcomer(port, aims["scripts"][0][0])
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    await honest.close()
    return {
        "honest": honest,
        "stats": stats,
        "cpu_and_wait_s": sched,
        "attacks": report,
        "newcomer": {"under attack": probe, "after": after},
    }


def run_siege(sizes: Sizes, tmp: Path, chosen: list[str]) -> dict[str, Any]:
    aims = targets()
    extra = [
        "--max-sessions",
        str(sizes.max_sessions),
        "--max-sessions-per-client",
        str(sizes.per_client),
        "--max-connections",
        str(sizes.max_connections),
        "--handshake-timeout",
        str(sizes.handshake_timeout),
        "--header-timeout",
        str(sizes.header_timeout),
        "--body-timeout",
        str(sizes.body_timeout),
    ]
    log = tmp / "siege-server.log"
    with server("bank", tmp / "runs-siege", *extra, log=log) as (url, proc):
        port = int(url.split(":")[2].split("/")[0])
        got = asyncio.run(siege_phases(port, proc.pid, sizes, aims, chosen))
        alive = proc.poll() is None
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    honest, stats = got["honest"], got["stats"]
    alone, attacked = honest.ms["alone"], honest.ms["attack"]
    start, base, peak = stats["start"], stats["honest only"], stats["under attack (peak)"]
    per_session = max(0, base["rss"] - start["rss"]) / sizes.honest
    bounds = {
        # what the caps let the attack hold: every free session slot (at an honest session's cost),
        # the growth sessions' databases at the cap, and a maximal body in flight per attacking session
        "rss": base["rss"]
        + (sizes.max_sessions - sizes.honest) * per_session
        + sizes.growth_sessions * GROWTH_CAP
        + (sizes.growth_sessions + 4) * MAX_BODY * 4,
        "sockets": sizes.max_connections + 50,  # the connections the server's cap allows, + 50
        "files": sizes.max_connections + sizes.max_sessions + 50,  # those, each session's transcript, + 50
    }
    ratio = pct(attacked, 0.99) / pct(alone, 0.99) if alone and attacked else float("inf")
    goals = {
        "p99 under attack <= 2x alone": ratio <= 2.0,
        "RSS peak within bound": max(peak.get("rss", 0), peak.get("hwm", 0)) <= bounds["rss"],
        "sockets within max connections + 50": peak.get("sockets", 0) <= bounds["sockets"],
        "files within max connections + max sessions + 50": peak.get("files", 0) <= bounds["files"],
        "no honest call failed": not honest.failures,
        "no attack request stalled": all("stalled" not in o for a in got["attacks"] for o in a["outcomes"]),
        "the server stayed up": alive,
    }
    return {
        "domain": "bank",
        "sizes": {**asdict(sizes), "max_connections": sizes.max_connections},
        "honest": {
            "sessions": sizes.honest,
            "alone": {"calls": len(alone), "p50_ms": _ms(alone, 0.5), "p99_ms": _ms(alone, 0.99)},
            "attack": {"calls": len(attacked), "p50_ms": _ms(attacked, 0.5), "p99_ms": _ms(attacked, 0.99)},
            "p99_ratio": round(ratio, 3),
            "slowest_ms_and_second": {phase: honest.slowest(phase) for phase in honest.ms},
            # how many calls took more than twice the p99 alone, in each second of the attack
            "slow_per_second": honest.slow_per_second("attack", 2 * pct(alone, 0.99) if alone else 0.0),
            # seconds on a CPU and waiting for one: the server in each phase, the attacking process
            "cpu_and_wait_s": got["cpu_and_wait_s"],
            "failures": dict(honest.failures),
        },
        "server": {
            "stats": stats,
            "bounds": {k: int(v) for k, v in bounds.items()},
            "per_session_bytes": int(per_session),
        },
        "attacks": got["attacks"],
        "timeline": timeline(got["attacks"], honest.began.get("attack", 0.0)),
        "attack_began": honest.began.get("attack"),  # wall-clock time (to line up with server logs)
        "newcomer": got["newcomer"],
        "server_log": {"lines": len(lines), "tracebacks": tracebacks(lines)},
        "goals": goals,
    }


def timeline(attacks: list[dict[str, Any]], began: float) -> list[tuple[float, str]]:
    """The attacks' events, in seconds into the attack phase (to line up with slow honest calls)."""
    events = [(round(at - began, 1), what) for a in attacks for what, at in a.pop("events")]
    return sorted(events)


def tracebacks(lines: list[str]) -> dict[str, int]:
    """How many tracebacks the server logged, by the exception that ended each."""
    kinds: Counter[str] = Counter()
    for i, line in enumerate(lines):
        if line.startswith("Traceback"):
            end = next((x for x in lines[i + 1 :] if x and not x.startswith(" ")), "?")
            kinds[end.split(":")[0]] += 1
    return dict(kinds)


def _ms(values: list[float], q: float) -> float | None:
    return round(pct(values, q), 2) if values else None


def print_siege(s: dict[str, Any]) -> None:
    z, h = s["sizes"], s["honest"]
    print(
        f"siege: bank, {z['honest']} honest sessions (a call every {z['period']:g} s each); caps: "
        f"{z['max_sessions']} sessions, {z['per_client']} per client, {z['max_connections']} connections; "
        f"timeouts: handshake "
        f"{z['handshake_timeout']:g} s, header {z['header_timeout']:g} s, body {z['body_timeout']:g} s"
    )
    for phase in ("alone", "attack"):
        p = h[phase]
        print(f"  honest calls {phase:<7} p50 {p['p50_ms']} ms  p99 {p['p99_ms']} ms  ({p['calls']} calls)")
    print(f"  p99 under attack / alone: {h['p99_ratio']:.2f}   honest failures: {h['failures'] or 'none'}")
    for phase, (cpu, wait) in h["cpu_and_wait_s"].items():
        who = "the attacking process" if phase.startswith("attackers") else f"the server, phase {phase}"
        print(f"  {who}: {cpu:g} s on a CPU, {wait:g} s waiting for one")
    for phase, worst in h["slowest_ms_and_second"].items():
        print(f"  slowest {phase}: " + ", ".join(f"{ms:g} ms at {at:g} s" for ms, at in worst))
    slow = ", ".join(f"{n} at {at} s" for at, n in h["slow_per_second"].items()) or "none"
    print(f"  calls over 2x the p99 alone, by second of the attack: {slow}")
    print(f"  {'server':<22}{'RSS MiB':>9}{'VmHWM MiB':>11}{'files':>7}{'sockets':>9}")
    rows = {**s["server"]["stats"], "bound": {**s["server"]["bounds"], "hwm": s["server"]["bounds"]["rss"]}}
    for name, st in rows.items():
        print(
            f"  {name:<22}{st.get('rss', 0) / 2**20:>9.1f}{st.get('hwm', 0) / 2**20:>11.1f}"
            f"{st.get('files', 0):>7}{st.get('sockets', 0):>9}"
        )
    print(f"  {'attack':<17}{'requests':>9}{'median/max ms':>16}{'conns':>7}  answered")
    for a in s["attacks"]:
        times = f"{a['median_ms']}/{a['max_ms']}"
        print(
            f"  {a['attack']:<17}{a['requests']:>9} {times:>15}{a['peak_connections']:>7}  "
            + "; ".join(f"{k} x{v}" for k, v in a["outcomes"].items())
        )
    print("  timeline (s into the attack): " + ", ".join(f"{at:g} {what}" for at, what in s["timeline"]))
    for when, n in s["newcomer"].items():
        print(
            f"  a new honest session {when}: {'admitted' if n.get('admitted') else 'refused'} ({n.get('ms')} ms)"
        )
    log = s["server_log"]
    print(f"  server log: {log['lines']} lines; tracebacks: {log['tracebacks'] or 'none'}")
    for goal, ok in s["goals"].items():
        print(f"  goal: {goal}: {'yes' if ok else 'NO'}")


# -- the server and the cores (the scenarios in attack.py use them too) ---------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def server(domain: str, runs: Path, *extra: str, log: Path | None = None) -> Iterator[tuple[str, Any]]:
    """`toolgym serve DOMAIN --transport http` on a free port, pinned to the server's core:
    (its URL, its process); its stderr goes to `log`."""
    port = free_port()
    args = [*SERVE, domain, "--transport", "http", "--port", str(port), "--runs", str(runs), *extra]
    with (log or Path(os.devnull)).open("wb") as err:
        proc = subprocess.Popen(
            args,
            cwd=ROOT,
            env=ENV,
            stdout=subprocess.DEVNULL,
            stderr=err,
            preexec_fn=lambda: pin(SERVER_CPUS),
        )
        try:
            deadline = time.monotonic() + 60
            while True:
                if proc.poll() is not None:
                    raise SystemExit(f"the server for {domain} exited with {proc.returncode}")
                with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.2):
                    break
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not start")
                time.sleep(0.05)
            yield f"http://{HOST}:{port}/mcp", proc
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def pin(cpus: set[int]) -> None:
    """Run this process on `cpus` (where the machine has them)."""
    available = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    wanted = cpus & available
    if wanted and len(available) > 1:
        os.sched_setaffinity(0, wanted)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
