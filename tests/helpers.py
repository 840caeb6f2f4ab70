"""Helpers the server tests share: a transcript's records, an MCP result's text, a replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from simulator import Domain, ToolError


def records(path: Path) -> list[dict[str, Any]]:
    """A transcript's records (blank lines, as while a server is still writing, are skipped)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def calls_of(path: Path) -> list[dict[str, Any]]:
    return [r for r in records(path) if r["type"] == "call"]


def text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def replay(domain: Domain, path: Path) -> str:
    """Replay one transcript alone on a fresh episode (injected faults skipped); check each call.

    Every call must succeed or fail as recorded, with the recorded error and result; returns the
    final digest.
    """
    header, *rest = records(path)
    with domain.episode(seed=header["seed"]) as ep:
        for call in (r for r in rest if r["type"] == "call"):
            if call["error_kind"] == "injected":
                continue
            try:
                result, ok, error = ep.call(call["tool"], call["arguments"]), True, None
            except ToolError as exc:
                result, ok, error = None, False, str(exc)
            assert (ok, error) == (call["ok"], call["error"])
            assert json.loads(json.dumps(result)) == call["result"]
        return ep.digest()
