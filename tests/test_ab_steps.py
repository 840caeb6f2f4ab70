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
    for side in ("a", "b"):  # every engine file is the side's own, and each step's class comes from it
        engine = report["engine"][side]
        assert engine["files"] == ["runsteps", "readsteps", "writesteps"]
        assert engine["classes"]["GetRun"] == "readsteps" and engine["classes"]["UpdateRun"] == "writesteps"
        assert engine["classes"]["ForEachRun"] == "runsteps"


SIDES = r"""
import sys
sys.path.insert(0, "benchmarks")
import ab_steps
from simulator.plan import runsteps as steps
base = "class Run:\n    pass\ndef compile_steps(s, whole=False):\n    return Run\n"
reads = "from .runsteps import (\n    Run,\n)\nfrom ._query import Query\nclass GetRun(Run):\n    pass\n"
writes = "from .readsteps import GetRun\nfrom .runsteps import Run\nclass UpdateRun(GetRun):\n    pass\n"
split = ab_steps.engine_modules({"writesteps": writes, "readsteps": reads, "runsteps": base}, "x")
old = ab_steps.engine_modules({"runsteps": base + "class GetRun(Run):\n    pass\n"}, "y")
print(list(split), list(old))
print(split["writesteps"].UpdateRun.__mro__[1] is split["readsteps"].GetRun)
print(split["readsteps"].GetRun.__mro__[1] is split["runsteps"].Run is not steps.Run)
print(split["readsteps"].Query.__module__, old["runsteps"].GetRun.__mro__[1] is old["runsteps"].Run)
"""


def test_each_side_loads_its_own_engine_files_importing_each_other() -> None:
    """The side's files are run after those they import, their imports of each other resolved to the
    side's modules (any other import to the working tree's package); a side with only `runsteps.py` (a
    revision before the split) loads alone."""
    proc = subprocess.run([sys.executable, "-c", SIDES], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:4] == [
        "['runsteps', 'readsteps', 'writesteps'] ['runsteps']",
        "True",
        "True",
        "simulator.plan._query True",
    ]


def test_ab_steps_unknown_revision_is_one_error_line() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "no-such-revision"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: cannot read simulator/plan/runsteps.py at 'no-such-revision'")
    assert proc.stderr.count("\n") == 1
