"""Fidelity against a real implementation: a domain replays the peer's gold calls, compared call by
call and record by record with the peer's own replay.

    python benchmarks/fidelity.py [--spec TOOLS] [--data DB] [--tasks TASKS] [--expected EXPECTED]
                                  [--domain PATH] [--stated STATED] [--only ID ...] [--json OUT]

Defaults: ../shared/peers/tau2/retail/ (tool_schemas.json, db.json, tasks.json, expected.jsonl;
../shared/peers/tau2/README.md gives the formats). Without --domain the domain is generated from
--spec and --data alone (`toolgen.fromdata.generate_domain`); --tasks and --expected reach only
the comparison. The domain needs a `snapshot:` layout (its state is compared in the data's shape).

Each task runs on a fresh episode (seed 0), its gold calls (tasks.json `evaluation_criteria.actions`)
in order, each compared with the peer's outcome (expected.jsonl `gold_calls`):

- errors: the call fails here iff it failed in the peer (`failing_agree`: of the peer's failing
  calls, the share that fail here; `succeeding_agree` likewise);
- reads: a successful call of a read tool (the spec's declared kind: `tool_type`, `mutates_state`,
  `readOnlyHint`; else the domain's `kind`) returns what the peer returned, both read as JSON where
  they parse (else as strings), null-valued keys as absent;
- changes: after the task, the records that differ from the seed (collection, key) and their
  top-level fields, in the data's shape, against the peer's `changes` (its final records; the peer's
  initial ones are --data). Recall and precision count the fields a sentence of the spec or the data
  states (--stated, default benchmarks/fidelity_stated/<folder>-<name>.json; without one every
  changed field counts); other changed fields are reported apart as unstated. A task is exact when
  its set of changed records and their stated fields (with their final values) are equal.

A call to a tool the domain lacks counts as a miss everywhere it is compared. Tasks whose peer
initial state was modified (`initial_state_modified`) are skipped and listed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # runnable from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))

from scoring import load_domain  # noqa: E402
from scoring.export import SnapshotDiff, layout_of  # noqa: E402
from simulator import Domain, ToolError  # noqa: E402
from toolgen.snapshot import load_collections  # noqa: E402

DEFAULT = ROOT.parent / "shared" / "peers" / "tau2" / "retail"
STATED = Path(__file__).resolve().parent / "fidelity_stated"
TOTALS = (
    "errors_agree",
    "failing_agree",
    "succeeding_agree",
    "reads_equal",
    "changed_records_exact",
    "field_recall",
    "field_precision",
)


# -- inputs ------------------------------------------------------------------------------------


def declared_reads(spec: Path) -> dict[str, bool | None]:
    """Tool name -> whether the spec declares it a read (None: it declares nothing). Takes a list of
    function-calling entries (`{"type": "function", "function": ...}`, tau2's `{"schema": ...,
    "tool_type", "mutates_state"}`), MCP tools (`annotations.readOnlyHint`), or an object of such lists."""
    raw = json.loads(spec.read_text(encoding="utf-8"))
    if isinstance(raw, dict):
        raw = (
            raw["tools"]
            if isinstance(raw.get("tools"), list)
            else [t for v in raw.values() if isinstance(v, list) for t in v]
        )
    out: dict[str, bool | None] = {}
    for entry in raw:
        fn = entry.get("schema", entry)
        fn = fn.get("function", fn)
        read: bool | None = None
        if entry.get("tool_type") in ("read", "write"):
            read = entry["tool_type"] == "read"
        elif isinstance(entry.get("mutates_state"), bool):
            read = not entry["mutates_state"]
        elif isinstance((entry.get("annotations") or {}).get("readOnlyHint"), bool):
            read = entry["annotations"]["readOnlyHint"]
        out[fn["name"]] = read
    return out


def load_tasks(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Task id -> its gold calls (tau2's tasks.json: `evaluation_criteria.actions`)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    tasks = raw["tasks"] if isinstance(raw, dict) else raw
    out = {}
    for task in tasks:
        actions = (task.get("evaluation_criteria") or {}).get("actions") or []
        out[str(task["id"])] = [{"name": a["name"], "arguments": a.get("arguments") or {}} for a in actions]
    return out


def load_expected(path: Path) -> dict[str, dict[str, Any]]:
    """Task id -> the peer's replay: `gold_calls` (with `error`, `output`) and `changes`."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            out[str(rec["task_id"])] = rec
    return out


def load_stated(path: Path | None) -> dict[str, set[tuple[str, str]]] | None:
    """Tool -> the (collection, field) changes its description or the data states; None: no file."""
    if path is None or not path.is_file():
        return None
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {tool: {(c["collection"], c["field"]) for c in entries} for tool, entries in raw["tools"].items()}


# -- comparison --------------------------------------------------------------------------------


def as_json(value: Any) -> Any:
    """A tool output as data: a string parsed as JSON where it parses, null-valued keys dropped."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return value
    return without_nulls(value)


def without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def same(a: Any, b: Any) -> bool:
    """JSON equality: booleans are not numbers, 1 == 1.0, objects ignore key order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def changed_fields(before: Any, after: Any) -> dict[str, Any]:
    """Top-level field -> final value (None: removed) of each field that differs, nulls as absent."""
    was, now = without_nulls(before or {}), without_nulls(after or {})
    return {
        f: now.get(f)
        for f in list(was) + [f for f in now if f not in was]
        if not same(was.get(f), now.get(f))
    }


@dataclass
class ToolStats:
    calls: int = 0
    missing: int = 0  # calls of a tool the domain lacks
    errors_agree: int = 0
    failing: int = 0  # calls that failed in the peer
    failing_agree: int = 0
    succeeding: int = 0
    succeeding_agree: int = 0
    reads: int = 0  # successful peer calls of read tools
    reads_equal: int = 0


@dataclass
class FieldStats:
    stated: bool
    peer: int = 0  # (record, field) changes the peer made
    ours: int = 0
    matched: int = 0  # made by both, to the same final value


@dataclass
class Fidelity:
    tools: dict[str, ToolStats] = field(default_factory=dict)
    fields: dict[str, FieldStats] = field(default_factory=dict)
    tasks: int = 0
    exact: int = 0
    skipped: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, Any]:
        t = ToolStats()
        for s in self.tools.values():
            for name in vars(t):
                setattr(t, name, getattr(t, name) + getattr(s, name))
        stated = [f for f in self.fields.values() if f.stated]
        peer, ours, matched = (sum(getattr(f, a) for f in stated) for a in ("peer", "ours", "matched"))
        rest = [f for f in self.fields.values() if not f.stated]

        def frac(n: int, d: int) -> float:
            return round(n / d, 4) if d else 1.0

        return {
            "errors_agree": frac(t.errors_agree, t.calls),
            "failing_agree": frac(t.failing_agree, t.failing),
            "succeeding_agree": frac(t.succeeding_agree, t.succeeding),
            "reads_equal": frac(t.reads_equal, t.reads),
            "changed_records_exact": frac(self.exact, self.tasks),
            "field_recall": frac(matched, peer),
            "field_precision": frac(matched, ours),
            "counts": {
                **vars(t),
                "tasks": self.tasks,
                "tasks_exact": self.exact,
                "tasks_skipped": len(self.skipped),
                "stated_changes": {"peer": peer, "ours": ours, "matched": matched},
                "unstated_changes": {
                    "peer": sum(f.peer for f in rest),
                    "ours": sum(f.ours for f in rest),
                    "matched": sum(f.matched for f in rest),
                },
            },
        }

    def report(self) -> dict[str, Any]:
        return {
            "suite": "fidelity",
            "totals": self.totals(),
            "tools": {name: vars(s) for name, s in sorted(self.tools.items())},
            "fields": {name: vars(f) for name, f in sorted(self.fields.items())},
            "skipped": self.skipped,
            "misses": self.misses,
        }


def measure(
    domain: Domain,
    reads: dict[str, bool | None],
    data: dict[str, Any],
    tasks: dict[str, list[dict[str, Any]]],
    expected: dict[str, dict[str, Any]],
    stated: dict[str, set[tuple[str, str]]] | None,
    only: list[str] | None = None,
) -> Fidelity:
    """Replay every task's gold calls on `domain` and compare with the peer's replay (see the docstring)."""
    layout_of(domain)  # (a clear error when the domain has no snapshot layout)
    with domain.episode(seed=0) as start:
        diff = SnapshotDiff(domain, start.export())
    kinds = {name: t.spec.kind for name, t in domain.tools.items()}
    result = Fidelity()
    for tid, calls in tasks.items():
        if only and tid not in only:
            continue
        peer = expected.get(tid)
        if peer is None:
            result.skipped.append(f"{tid}: not in the expected replay")
            continue
        if peer.get("initial_state_modified"):
            result.skipped.append(f"{tid}: the peer modified its initial state")
            continue
        result.tasks += 1
        with domain.episode(seed=0) as ep:
            for i, call in enumerate(calls):
                gold = peer["gold_calls"][i] if i < len(peer["gold_calls"]) else None
                _compare_call(result, ep, f"task {tid} call {i}", call, gold, reads, kinds)
            ours = diff.changed(ep)
        _compare_changes(result, tid, calls, peer.get("changes") or {}, ours, data, stated)
    return result


def _compare_call(
    result: Fidelity,
    ep: Any,
    where: str,
    call: dict[str, Any],
    gold: dict[str, Any] | None,
    reads: dict[str, bool | None],
    kinds: dict[str, str],
) -> None:
    name = call["name"]
    stats = result.tools.setdefault(name, ToolStats())
    stats.calls += 1
    if gold is None or gold["name"] != name:
        result.misses.append(f"{where} {name}: the expected replay has {gold and gold['name']} here")
        return
    peer_failed = bool(gold.get("error"))
    is_read = reads.get(name)
    if is_read is None:
        is_read = kinds.get(name) == "read"
    stats.failing += peer_failed
    stats.succeeding += not peer_failed
    stats.reads += is_read and not peer_failed
    if name not in kinds:
        stats.missing += 1
        result.misses.append(f"{where} {name}: the domain has no such tool")
        return
    try:
        output, failed, message = ep.call(name, call["arguments"]), False, ""
    except ToolError as exc:
        output, failed, message = None, True, str(exc)
    if failed == peer_failed:
        stats.errors_agree += 1
        stats.failing_agree += failed
        stats.succeeding_agree += not failed
    else:
        said = f"failed: {message[:100]}" if failed else "succeeded"
        result.misses.append(f"{where} {name}: peer error={peer_failed}, here {said}")
    if is_read and not peer_failed and not failed:
        if same(as_json(output), as_json(gold.get("output"))):
            stats.reads_equal += 1
        else:
            got = json.dumps(as_json(output), default=str)[:120]
            want = json.dumps(as_json(gold.get("output")))[:120]
            result.misses.append(f"{where} {name}: output differs: peer {want} here {got}")


def _compare_changes(
    result: Fidelity,
    tid: str,
    calls: list[dict[str, Any]],
    peer_changes: dict[str, dict[str, Any]],
    ours: dict[str, dict[str, tuple[Any, Any]]],
    data: dict[str, Any],
    stated: dict[str, set[tuple[str, str]]] | None,
) -> None:
    told = set().union(*(stated.get(c["name"], set()) for c in calls)) if stated is not None else None
    peer_fields: dict[tuple[str, str, str], Any] = {}
    for coll, records in peer_changes.items():
        initial = data.get(coll) or {}
        for key, final in records.items():
            was = initial.get(key) if isinstance(initial, dict) else None
            for f, value in changed_fields(was, final).items():
                peer_fields[(coll, key, f)] = value
    our_fields: dict[tuple[str, str, str], Any] = {}
    for coll, records in ours.items():
        for key, (before, after) in records.items():
            for f, value in changed_fields(before, after).items():
                our_fields[(coll, key, f)] = value
    exact = {(c, k) for c, recs in peer_changes.items() for k in recs} == {
        (c, k) for c, recs in ours.items() for k in recs
    }
    for spot in set(peer_fields) | set(our_fields):
        coll, key, f = spot
        is_stated = told is None or (coll, f) in told
        stats = result.fields.setdefault(
            f"{coll}.{f}" + ("" if is_stated else " (unstated)"), FieldStats(is_stated)
        )
        in_peer, in_ours = spot in peer_fields, spot in our_fields
        stats.peer += in_peer
        stats.ours += in_ours
        agree = in_peer and in_ours and same(peer_fields[spot], our_fields[spot])
        stats.matched += agree
        if is_stated and not agree:
            exact = False
        if not agree:
            side = (
                "both, to different values"
                if in_peer and in_ours
                else "the peer only"
                if in_peer
                else "here only"
            )
            result.misses.append(
                f"task {tid}: {coll}[{key!r}].{f}{'' if is_stated else ' (unstated)'} changed by {side}"
            )
    result.exact += exact


# -- command line ------------------------------------------------------------------------------


def _domain(args: argparse.Namespace, scratch: Path) -> Domain:
    if args.domain is not None:
        return load_domain(args.domain)
    from toolgen.fromdata import generate_domain

    return load_domain(generate_domain(args.spec, args.data, scratch / "generated").folder)


def print_report(result: Fidelity) -> None:
    print(
        f"{'tool':34} {'calls':>5} {'miss':>4} {'err-agree':>9} {'peer-fail':>9} {'fail-here':>9} {'reads':>5} {'equal':>5}"
    )
    for name, s in sorted(result.tools.items()):
        print(
            f"{name:34} {s.calls:5} {s.missing:4} {s.errors_agree:9} {s.failing:9} "
            f"{s.failing_agree:9} {s.reads:5} {s.reads_equal:5}"
        )
    print(f"\n{'changed field':48} {'stated':>6} {'peer':>5} {'ours':>5} {'match':>5}")
    for name, f in sorted(result.fields.items(), key=lambda kv: (not kv[1].stated, kv[0])):
        print(f"{name:48} {'yes' if f.stated else 'no':>6} {f.peer:5} {f.ours:5} {f.matched:5}")
    totals = result.totals()
    counts = totals["counts"]
    print()
    print(
        f"errors agree          {totals['errors_agree']:.4f}  ({counts['errors_agree']}/{counts['calls']} gold calls)"
    )
    print(
        f"peer's failing fail   {totals['failing_agree']:.4f}  ({counts['failing_agree']}/{counts['failing']})"
    )
    print(
        f"peer's succeeding ok  {totals['succeeding_agree']:.4f}  ({counts['succeeding_agree']}/{counts['succeeding']})"
    )
    print(f"read outputs equal    {totals['reads_equal']:.4f}  ({counts['reads_equal']}/{counts['reads']})")
    print(
        f"changed records exact {totals['changed_records_exact']:.4f}  ({counts['tasks_exact']}/{counts['tasks']} tasks)"
    )
    st, un = counts["stated_changes"], counts["unstated_changes"]
    print(f"stated field recall   {totals['field_recall']:.4f}  ({st['matched']}/{st['peer']} of the peer's)")
    print(f"stated field precision {totals['field_precision']:.4f} ({st['matched']}/{st['ours']} of ours)")
    print(f"unstated changes      peer {un['peer']}, ours {un['ours']}, matched {un['matched']}")
    if result.skipped:
        print(f"skipped: {', '.join(result.skipped)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spec", type=Path, default=DEFAULT / "tool_schemas.json", help="the tool list")
    parser.add_argument("--data", type=Path, default=DEFAULT / "db.json", help="the database (a snapshot)")
    parser.add_argument("--tasks", type=Path, default=DEFAULT / "tasks.json")
    parser.add_argument("--expected", type=Path, default=DEFAULT / "expected.jsonl")
    parser.add_argument("--domain", type=Path, help="measure this domain folder instead of generating one")
    parser.add_argument(
        "--stated", type=Path, help="the stated changes (default: fidelity_stated/<folder>-<name>.json)"
    )
    parser.add_argument("--only", nargs="*", help="only these task ids")
    parser.add_argument("--misses", action="store_true", help="print every miss")
    parser.add_argument("--json", type=Path, help="write the whole result as JSON here")
    args = parser.parse_args(argv)
    for option in ("spec", "data", "tasks", "expected"):
        if not getattr(args, option).exists():
            parser.error(f"--{option} {getattr(args, option)} does not exist")
    stated_file = args.stated or STATED / f"{args.data.parent.parent.name}-{args.data.parent.name}.json"
    stated = load_stated(stated_file)
    if stated is None:
        print(f"no stated changes at {stated_file}: every changed field counts as stated")
    with tempfile.TemporaryDirectory(prefix="toolgym-fidelity-") as scratch:
        domain = _domain(args, Path(scratch))
        result = measure(
            domain,
            declared_reads(args.spec),
            load_collections(args.data),
            load_tasks(args.tasks),
            load_expected(args.expected),
            stated,
            args.only,
        )
    if args.misses:
        print("\n".join(result.misses) + "\n")
    elif result.misses:
        print(f"{len(result.misses)} misses (--misses lists them); first: {result.misses[0]}\n")
    print_report(result)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result.report(), indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
