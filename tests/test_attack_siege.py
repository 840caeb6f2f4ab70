"""Smoke test of the siege in benchmarks/attack.py: every attack at once against one live server.

It runs in quick mode, every attack is answered within the server's limits (never a stall, never
an oversized or malformed request carried out), and the report has the documented shape. Timings
and the memory and file bounds are not asserted here: the suite's own `--check` flag does that.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ATTACKS = ["bare handshakes", "half-sent", "big text", "growth", "deep nesting", "malformed", "costly reads"]


def test_siege_answers_every_attack_within_the_limits(tmp_path: Path) -> None:
    out = tmp_path / "attack.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "attack.py"),
            "--quick",
            "--only",
            "siege",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "goal: p99 under attack" in proc.stdout  # the table was printed
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["suite"] == "attack" and report["results"] == []
    siege = report["siege"]
    assert siege["goals"]["the server stayed up"] and siege["goals"]["no attack request stalled"]

    honest = siege["honest"]
    assert honest["alone"]["calls"] > 0 and honest["attack"]["calls"] > 0 and honest["p99_ratio"] > 0
    stats = siege["server"]["stats"]
    assert set(stats) == {
        "start",
        "honest only",
        "honest only (peak)",
        "under attack (peak)",
        "after the attack",
    }
    assert all(s["rss"] > 0 and s["files"] > 0 for s in stats.values())
    assert set(siege["server"]["bounds"]) == {"rss", "sockets", "files"}

    attacks = {a["attack"]: a for a in siege["attacks"]}
    assert list(attacks) == ATTACKS
    assert all(a["requests"] > 0 for a in attacks.values())
    out_of = {name: a["outcomes"] for name, a in attacks.items()}
    assert any(k.startswith("refused 503") for k in out_of["bare handshakes"])  # past the caps
    # within the timeouts: closed (or, on a loaded machine, reset) by the server, never left open
    assert all("by the server" in k for k in out_of["half-sent"]), out_of["half-sent"]
    assert set(out_of["big text"]) <= {"0.9 MB argument: tool error", "900 KB tool name: tool error"}
    assert attacks["big text"]["largest_answer_bytes"] < 10_000  # the text is not echoed back
    assert all(attacks["growth"]["refused_at_cap"]) and "size limit" in json.dumps(
        attacks["growth"]["examples"]
    )
    assert all(k.endswith("refused 400") for k in out_of["deep nesting"])
    malformed = out_of["malformed"]
    assert malformed["valid call after them: ok"] == siege["sizes"]["malformed_rounds"]  # the session works
    for variant in ("surrogate id (escaped)", "surrogate id (raw bytes)", "UTF-16 body", "UTF-8 BOM"):
        assert f"{variant}: ok" not in malformed
    assert set(out_of["costly reads"]) == {"ok"}
