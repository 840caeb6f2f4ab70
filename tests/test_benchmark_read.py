"""Smoke test of benchmarks/profile_read.py: it runs, checks its hand-written read against the tool
for every order, and reports the call and its parts (timings are never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_profile_read_quick_reports_the_parts(tmp_path: Path) -> None:
    out = tmp_path / "read.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "profile_read.py"), "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["suite"] == "profile_read"
    medians = {r["name"]: r["median_us"] for r in report["results"]}
    assert set(medians) == {"call", "execute", "sql", "sql_decoded", "expression", "by_hand"}
    assert all(us > 0 for us in medians.values())
    parts = report["meta"]["parts_us"]
    assert len(parts) == 5 and abs(sum(parts.values()) - medians["call"]) < 0.1
    assert "call overhead" in proc.stdout
