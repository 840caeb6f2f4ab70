"""A small agent loop over MCP: connect to `toolgym serve`, read the task, make the calls.

    python examples/mcp_agent.py                     # starts `toolgym serve bank --transport http`
    python examples/mcp_agent.py --transport stdio   # the same over stdio
    python examples/mcp_agent.py --url http://127.0.0.1:8000/mcp   # a server you started yourself

The "agent" is scripted: it reads the task instruction from the server (the `task://instruction`
resource; the server instructions carry the policy and the same task), pulls the customer's
e-mail and card digits out of it, and makes the calls a good agent would make for bank-007
("freeze my Visa ending 8852"): verify the customer, find the card, freeze it. Every call and
its result is printed, and at the end the path of the session's transcript, which holds every
call (append-only, flushed per call), the answer the agent handed in through `submit_answer` (the
server's answer channel, which ends the session) and the final state digest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import mcp
from mcp import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
TASK = "bank-007"
SERVE = [sys.executable, "-c", "from toolgym.cli import main; main()", "serve", "bank"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "FASTMCP_CHECK_FOR_UPDATES": "off"}


async def call(client: Any, tool: str, arguments: dict[str, Any]) -> Any:
    """One tool call, printed; returns the parsed result, or raises with the tool's error.

    The call carries its own `_meta["toolgym/call-id"]`: a client that resends it (after a lost
    answer) repeats that id and gets the first answer; the call is not run twice."""
    print(f"-> {tool}({json.dumps(arguments)})")
    result = await client.call_tool(tool, arguments, meta={"toolgym/call-id": uuid.uuid4().hex})
    text = "".join(getattr(c, "text", "") for c in result.content)
    if result.is_error:
        print(f"   error: {text}")
        raise RuntimeError(text)
    value = json.loads(text)
    print(f"   {json.dumps(value)[:160]}")
    return value


async def agent(client: Any) -> None:
    """The scripted policy: identify and verify the caller, find the card, freeze it."""
    instruction = (await client.read_resource("task://instruction")).contents[0].text
    print(f"task: {instruction}\n")
    email = re.search(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", instruction)
    last4 = re.search(r"ending (\d{4})", instruction)
    name = re.match(r"\s*(?:I'm |This is )?([A-Z][\w'-]+(?: [A-Z][\w'-]+)+)", instruction)
    assert email and last4 and name, "the script only understands card-freeze requests"

    (customer,) = await call(client, "find_customers", {"email": email.group(0)})
    if customer["name"].lower() != name.group(1).lower():  # policy: the name must match the record
        print("could not verify the caller; stopping")
        return
    cards = await call(
        client, "list_cards", {"customer_id": customer["customer_id"], "last4": last4.group(1)}
    )
    card = cards[0]
    await call(
        client,
        "freeze_card",
        {"customer_id": customer["customer_id"], "card_id": card["card_id"], "reason": "customer_request"},
    )
    answer = f"Your card ending {card['last4']} is now frozen."
    await call(client, "submit_answer", {"answer": answer})  # the answer channel; ends the session
    print(f"\nassistant: {answer}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def over_http(url: str, runs: Path | None) -> None:
    parts = urlsplit(url)
    query = urlencode({"task": TASK, **dict(parse_qsl(parts.query))})
    before = set(runs.glob("*.jsonl")) if runs is not None else set()
    # a plain client: the server steers it into the handshake era, one episode for the connection
    async with mcp.Client(urlunsplit(parts._replace(query=query))) as client:
        print(f"connected over HTTP (protocol {client.protocol_version})")
        await agent(client)
    if runs is None:
        print("transcript: in the server's --runs folder")
        return
    (transcript,) = set(runs.glob("*.jsonl")) - before
    print(f"transcript: {transcript}")


async def over_stdio(runs: Path) -> None:
    params = StdioServerParameters(
        command=SERVE[0], args=[*SERVE[1:], "--task", TASK, "--runs", str(runs)], env=ENV, cwd=str(ROOT)
    )
    before = set(runs.glob("*.jsonl"))
    async with mcp.Client(params) as client:
        print(f"connected over stdio (protocol {client.protocol_version})")
        await agent(client)
    (transcript,) = set(runs.glob("*.jsonl")) - before  # one stdio process = one session
    print(f"transcript: {transcript}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", choices=("http", "stdio"), default="http")
    parser.add_argument("--url", help="connect to this running server instead of starting one")
    parser.add_argument(
        "--runs", type=Path, help="transcript folder of the started server (default: a temp dir)"
    )
    opts = parser.parse_args()
    runs = (opts.runs or Path(tempfile.mkdtemp(prefix="toolgym-runs-"))).resolve()
    runs.mkdir(parents=True, exist_ok=True)

    if opts.url:
        asyncio.run(over_http(opts.url, None))
        return
    if opts.transport == "stdio":
        asyncio.run(over_stdio(runs))
        return
    port = free_port()
    server = subprocess.Popen(
        [*SERVE, "--transport", "http", "--port", str(port), "--runs", str(runs)], cwd=ROOT, env=ENV
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.05)
        asyncio.run(over_http(f"http://127.0.0.1:{port}/mcp", runs))
    finally:
        server.terminate()  # the session's transcript gets its end record (final digest) now
        server.wait(timeout=15)


if __name__ == "__main__":
    main()
