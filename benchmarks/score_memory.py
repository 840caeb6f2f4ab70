"""Peak memory of `toolgym score` on a long transcript vs a short one: scoring is bounded in memory.

    python benchmarks/score_memory.py                      # 100 calls vs 33,000 calls, toolgym JSONL
    python benchmarks/score_memory.py --formats toolgym,anthropic --calls 33000 --json

A transcript of N cheap reads (`get_customer`, about 470 bytes a call: 33,000 calls make ~15 MiB)
is written on the bundled `bank` domain, task bank-001, the way the server writes one (an episode
with a file sink, then the agent's message and the end record); `--formats anthropic` also writes
the same calls as an Anthropic message log, one message a line. Each file is scored by a fresh
child process, `toolgym score FILE --json`, and its peak RSS is the kernel's (`os.wait4`'s
`ru_maxrss`). Goal: the long transcript's peak within `--slack` MiB (default 8) of the short
one's, whatever N; exit 1 if it is not. The load average is printed beside the figures (the
machine is shared; memory, unlike time, hardly depends on it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # runnable from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))

TOOLGYM = [sys.executable, "-c", "from toolgym.cli import main; main()"]
DOMAIN, TASK, TOOL, ARGUMENTS = "bank", "bank-001", "get_customer", {"customer_id": "CUS-090075c2"}


def write_toolgym(path: Path, calls: int) -> None:
    """A toolgym JSONL transcript of `calls` reads, as the server writes one."""
    from scoring import load_domain
    from simulator.runtime.transcript import FileSink

    sink = FileSink(path)
    episode = load_domain(DOMAIN).episode(seed=0, task=TASK, transcript=sink)
    try:
        for _ in range(calls):
            episode.call(TOOL, ARGUMENTS)
        episode.say("Done.")
        episode.end()
    finally:
        episode.close()
        sink.close()


def write_anthropic(source: Path, path: Path) -> None:
    """The calls of a toolgym transcript as an Anthropic message log, one message a line."""
    with source.open(encoding="utf-8") as records, path.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"domain": DOMAIN, "task": TASK, "seed": 0}) + "\n")
        for line in records:
            record = json.loads(line)
            if record["type"] == "call":
                use = {"type": "tool_use", "id": f"t{record['index']}", "name": record["tool"]}
                answer = {"type": "tool_result", "tool_use_id": use["id"], "is_error": not record["ok"]}
                answer["content"] = [{"type": "text", "text": json.dumps(record["result"])}]
                out.write(
                    json.dumps({"role": "assistant", "content": [{**use, "input": record["arguments"]}]})
                )
                out.write("\n" + json.dumps({"role": "user", "content": [answer]}) + "\n")
            elif record["type"] == "message":
                out.write(json.dumps({"role": "assistant", "content": record["content"]}) + "\n")


def peak(path: Path) -> dict[str, Any]:
    """Score one file in a fresh process: its peak RSS (MiB), wall seconds and result."""
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        child = subprocess.Popen(
            [*TOOLGYM, "score", str(path), "--json"], cwd=ROOT, stdout=stdout, stderr=stderr
        )
        _, status, usage = os.wait4(child.pid, 0)  # this child's own usage, reaped here
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        if child.returncode != 0:
            raise SystemExit(f"toolgym score {path} failed: {stderr.read().decode(errors='replace')}")
        report = json.loads(stdout.read())
    return {
        "file_mib": round(path.stat().st_size / 2**20, 2),
        "calls": report["calls"],
        "reward": report["reward"],
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),  # KiB on Linux
        "seconds": round(seconds, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=33_000, help="calls of the long transcript")
    parser.add_argument("--small", type=int, default=100, help="calls of the short transcript")
    parser.add_argument("--formats", default="toolgym", help="comma-separated: toolgym, anthropic")
    parser.add_argument(
        "--slack", type=float, default=8.0, help="MiB the long one may peak above the short one"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="score-memory-") as tmp:
        for calls in (args.small, args.calls):
            base = Path(tmp) / f"toolgym-{calls}.jsonl"
            write_toolgym(base, calls)
            for fmt in formats:
                path = base if fmt == "toolgym" else Path(tmp) / f"{fmt}-{calls}.jsonl"
                if fmt == "anthropic":
                    write_anthropic(base, path)
                elif fmt != "toolgym":
                    raise SystemExit(f"unknown format {fmt!r} (toolgym, anthropic)")
                rows.append({"format": fmt, **peak(path)})
    verdicts = []
    for fmt in formats:
        short, long = (r for r in rows if r["format"] == fmt)
        extra = round(long["peak_rss_mib"] - short["peak_rss_mib"], 1)
        verdicts.append(
            {
                "format": fmt,
                "ratio": round(long["peak_rss_mib"] / short["peak_rss_mib"], 3),
                "extra_mib": extra,
                "ok": extra <= args.slack,
            }
        )
    uptime = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    result = {
        "suite": "score_memory",
        "load_average_1m": round(os.getloadavg()[0], 2),
        "uptime": uptime,
        "slack_mib": args.slack,
        "results": rows,
        "verdicts": verdicts,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{'format':<10} {'calls':>7} {'file MiB':>9} {'peak RSS MiB':>13} {'seconds':>8}")
        for r in rows:
            print(
                f"{r['format']:<10} {r['calls']:>7} {r['file_mib']:>9} {r['peak_rss_mib']:>13} {r['seconds']:>8}"
            )
        for v in verdicts:
            print(
                f"{v['format']}: long / short peak RSS = {v['ratio']} ({v['extra_mib']:+} MiB; goal "
                f"<= +{args.slack} MiB): {'ok' if v['ok'] else 'OVER'}"
            )
        print(f"uptime: {uptime}")
    return 0 if all(v["ok"] for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
