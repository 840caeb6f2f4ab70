"""examples/quality_loop.py runs the whole loop on a bundled domain, end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_quality_loop_example_runs(tmp_path: Path) -> None:
    out = tmp_path / "loop"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "quality_loop.py"),
            "--tasks",
            "bank-007,bank-002",
            "--k",
            "1",
            "--out",
            str(out),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    for step in ("validate", "rollout", "score", "quality", "curate", "report"):
        assert f"$ toolgym {step} " in proc.stdout
    rows = [json.loads(x) for x in (out / "runs" / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2 * 4 and {r["reward"] for r in rows if r["policy"] == "gold"} == {1.0}
    scored = [json.loads(x) for x in (out / "scored.jsonl").read_text().splitlines()]
    by_transcript = {Path(s["transcript"]).name: s["reward"] for s in scored}
    assert all(by_transcript[Path(r["transcript"]).name] == r["reward"] for r in rows)
    (kept,) = (out / "kept").glob("*.manifest.json")
    quality = proc.stdout[proc.stdout.index("$ toolgym quality") :]
    assert json.loads(kept.read_text())["valid_tasks"] == ["bank-002", "bank-007"], quality
    assert "<svg" in (out / "quality.html").read_text()
    mixture = json.loads((out / "mixture.json").read_text())
    assert mixture["size"] == 2 and all(t["samples"] == 1 for t in mixture["tasks"])  # one policy's rollouts
