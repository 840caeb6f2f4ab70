"""The serving process: its garbage collector (`simulator.serve._heap`) and its HTTP connections.

The tail these settings remove is measured by `benchmarks/sessions.py` (tests never time things);
here: the start-up heap is frozen, young collections are rarer and middle-generation ones smaller
(full ones as rare as before), new cyclic garbage is still freed, the CLI's server process asks
for it, an in-process server leaves its host's collector alone, and idle HTTP connections are
kept for `KEEP_ALIVE_S`.
"""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys
from typing import Any

import pytest
import uvicorn
from typer.testing import CliRunner

import simulator.serve.server
from scoring import load_domain
from simulator.serve._heap import MIDDLE_THRESHOLD, OLD_THRESHOLD, YOUNG_THRESHOLD
from simulator.serve.server import KEEP_ALIVE_S, DomainServer
from toolgym.cli import app

PROBE = """
import gc, json
from simulator import load_domain
from simulator.serve._heap import settle_heap
load_domain("bank")
before = gc.get_threshold()
settle_heap()
settle_heap()
class Node: pass
a, b = Node(), Node()
a.other, b.other = b, a   # a cycle made after start-up
del a, b
print(json.dumps({"before": before, "after": gc.get_threshold(), "frozen": gc.get_freeze_count(),
                  "freed": gc.collect()}))
"""


def test_settle_heap_freezes_start_up_and_still_frees_new_cycles() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    got = json.loads(out.stdout)
    assert got["frozen"] > 10_000  # modules, the loaded domain: never walked again
    assert got["after"] == [max(got["before"][0], YOUNG_THRESHOLD), MIDDLE_THRESHOLD, OLD_THRESHOLD]
    # the middle generation collected in smaller steps, full collections considered as rarely as
    # CPython's defaults (10 x 10 young collections) would
    assert MIDDLE_THRESHOLD < 10 and abs(MIDDLE_THRESHOLD * OLD_THRESHOLD - 100) <= MIDDLE_THRESHOLD
    assert got["freed"] >= 2  # garbage made after start-up is still collected


def test_the_serve_command_settles_its_own_process_and_nothing_else_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(DomainServer, "run", lambda self, *args, **kwargs: seen.append(kwargs))
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    result = CliRunner().invoke(app, ["serve", "bank"])
    assert result.exit_code == 0, result.output
    assert seen and seen[0]["own_process"] is True
    DomainServer(load_domain("bank"))  # an in-process server: the host's collector is left alone
    assert (gc.get_threshold(), gc.get_freeze_count()) == (threshold, frozen)


@pytest.mark.parametrize("own_process", [True, False])
def test_http_keeps_idle_connections_and_settles_only_its_own_process(
    monkeypatch: pytest.MonkeyPatch, own_process: bool
) -> None:
    configs: list[uvicorn.Config] = []
    settled: list[bool] = []

    async def serve(self: uvicorn.Server) -> None:
        configs.append(self.config)

    monkeypatch.setattr(uvicorn.Server, "serve", serve)
    monkeypatch.setattr(simulator.serve.server, "settle_heap", lambda: settled.append(True))
    server = DomainServer(load_domain("bank"))
    asyncio.run(server.run_async("http", port=0, own_process=own_process))
    assert configs[0].timeout_keep_alive == KEEP_ALIVE_S > 60  # an agent's turn is longer than 5 s
    assert settled == ([True] if own_process else [])
