"""benchmarks/ab_steps.py: both sides run the same calls on their own step classes and report
medians (a smoke run, a few calls); a revision that cannot be read is one clear error line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "ab_steps.py"


def test_ab_steps_reports_both_sides(tmp_path: Path) -> None:
    out = tmp_path / "ab.json"
    args = [sys.executable, str(SCRIPT), "--aa", "--rows", "1000", "--calls", "40", "--json", str(out)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert set(report["tools"]) == {"transfer_credit", "place_order"}
    for row in report["tools"].values():
        assert row["a_us"] > 0 and row["b_us"] > 0
        assert abs(row["diff_us"] - (row["b_us"] - row["a_us"])) <= 0.011
    assert "transfer_credit" in proc.stdout and "load" in proc.stdout


def test_ab_steps_unknown_revision_is_one_error_line() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "no-such-revision"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: cannot read simulator/steps.py at 'no-such-revision'")
    assert proc.stderr.count("\n") == 1
