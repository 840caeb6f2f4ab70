"""The whole loop on a bundled domain: validate, roll out baselines, score, curate, measure quality.

    python examples/quality_loop.py                         # bank, every validated task, k=2
    python examples/quality_loop.py --tasks bank-007,bank-013 --out /tmp/loop

Each step is a `toolgym` command, printed as you would type it and run in this process:

1. `validate` checks every task and writes a manifest of the valid ones;
2. `rollout` runs the baselines (gold, gold-corrupt:1, random, noop) k times on each valid task —
   through the same MCP server agents use — writing signed transcripts and one results line each;
3. `score` re-scores the transcripts from scratch (the rewards agree with the results lines);
4. `quality` ranks the policies, flags trivial / broken / non-discriminating domains, writes an
   HTML page with charts and a manifest of the kept tasks (which `serve --manifest` takes);
5. `curate` turns the results of the policy being trained (here gold-corrupt stands in) on the
   kept tasks into a seeded training mixture;
6. `report` shows the environment's serving health from the transcripts.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # runnable from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))

from toolgym.cli import app  # noqa: E402

POLICIES = ["gold", "gold-corrupt:1", "random", "noop"]


def toolgym(*args: str) -> None:
    """Run one toolgym command in this process, printed first."""
    print(f"\n$ toolgym {shlex.join(args)}", flush=True)
    code = app(list(args), standalone_mode=False)
    if code not in (None, 0):
        raise SystemExit(f"toolgym {args[0]} exited with {code}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--domain", default="bank")
    parser.add_argument("--tasks", help="only these task ids (comma-separated)")
    parser.add_argument("--k", default="2", help="rollouts per task and policy")
    parser.add_argument("--out", default="loop", help="the folder everything goes to")
    args = parser.parse_args(argv)
    out = Path(args.out)
    runs, manifests = out / "runs", out / "manifests"

    toolgym("validate", args.domain, "--fuzz", "0", "--reruns", "1", "--manifest-dir", str(manifests))
    (manifest,) = manifests.glob("*.manifest.json")
    only = ["--tasks", args.tasks] if args.tasks else []
    policies = [arg for p in POLICIES for arg in ("--policy", p)]
    toolgym(
        "rollout",
        args.domain,
        *policies,
        "--k",
        args.k,
        "--manifest",
        str(manifest),
        *only,
        "--out",
        str(runs),
    )
    toolgym("score", "--runs", str(runs / "transcripts"), "--out", str(out / "scored.jsonl"))
    toolgym("quality", str(runs), "--html", str(out / "quality.html"), "--manifest-dir", str(out / "kept"))
    (kept,) = (out / "kept").glob("*.manifest.json")  # no flag: the domain and its kept tasks
    # a mixture from the rollouts of the policy being trained (gold-corrupt stands in), kept tasks only
    toolgym(
        "curate",
        str(runs / "results.jsonl"),
        "--policy",
        "gold-corrupt:1",
        "--manifest",
        str(kept),
        "--min-pass",
        "0",
        "--max-pass",
        "1",
        "--out",
        str(out / "mixture.json"),
    )
    toolgym(
        "report",
        str(runs / "transcripts"),
        "--results",
        str(runs / "results.jsonl"),
        "--html",
        str(out / "health.html"),
    )
    print(
        f"\nquality page: {out / 'quality.html'}; kept tasks: {', '.join(str(p) for p in (out / 'kept').glob('*'))}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
