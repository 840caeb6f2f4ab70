"""Effects a language model proposes for what the rules left "not modelled" (`generate --data --llm`).

    generate_domain(spec, data, out, refine=proposer(LLMOptions(url)))   # `generate --data --llm`
    counts = propose_effects(model, builder, result, records, ops)   # {"accepted": n, "<why not>": n}

For each tool with "not modelled" sentences the model may reply with a new step list. It replaces
the tool's steps only when the domain still loads, the tool keeps its kind, and on calls drawn from
the records it keeps every check of the compiled tool, never fails inside, accepts what the
compiled tool accepted and does something differently; else the reason is counted.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from simulator import Domain, ToolError
from simulator.builders import DomainBuilder
from toolgen.model import Operation

from .fromdata import Bound, FromData, Records, Refine, one_of

if TYPE_CHECKING:
    from toolgen.synth.llm import ChatModel, LLMOptions

__all__ = ["effect_prompt", "parse_steps", "propose_effects", "proposer", "sample_arguments"]

#: calls drawn from the records to try a proposal on
SAMPLES = 8
#: the longest reply read as a proposal
MAX_REPLY = 20_000
#: the longest reply asked for, in tokens: a tool's steps in JSON (longer than a sentence)
PROPOSAL_TOKENS = 4096
#: the steps of the language, as the prompt states them (docs/domain-format.md has the whole)
LANGUAGE = """\
Steps run in order in one transaction; any failure rolls the call back. A step may bind a name with
"as"; later steps read it as "$name" or "$name.column". "$args.NAME" is an argument, "$now" the clock.
- {"get": TABLE, "key": {COL: EXPR}, "as": N, "error": TEXT} one row (missing: the call fails with TEXT)
- {"list": TABLE, "where": [{"column": COL, "op": "eq", "value": EXPR}], "internal": true, "as": N}
- {"create": TABLE, "values": {COL: EXPR}, "as": N}
- {"update": TABLE, "key": {COL: EXPR}, "set": {COL: EXPR}, "as": N}   ("$row" is the row before)
- {"delete": TABLE, "key": {COL: EXPR}}
- {"require": COND, "error": TEXT}   {"fail": TEXT, "when": COND}   {"let": N, "value": EXPR}
- {"for_each": EXPR, "as": N, "index": I, "steps": [...]}   {"return": EXPR}
- {"use": FRAGMENT, "with": {PARAM: EXPR}, "as": N} runs a shared step list of the domain
Any step may have "when": COND. An expression is a literal, a "$" reference, a list, or a one-key
object: add sub mul div neg abs round min max sum len eq ne lt le gt ge and or not in not_in
contains if coalesce is_null append concat object pick at filter map exists unique flatten.
A list of rows read with "$name.column" is the list of that column."""


def effect_prompt(
    op: Operation, bound: Bound, records: Records, examples: dict[str, list[dict[str, Any]]]
) -> list[dict[str, str]]:
    """The messages asking for the steps of `op` that also do what `bound.not_modelled` says."""
    system = (
        "You extend one tool of a simulated API whose state is a set of database tables. A tool is a "
        "JSON list of steps:\n" + LANGUAGE + "\n\nReply with one JSON object and nothing else: "
        '{"steps": [...]}, the tool\'s whole new step list, keeping what its current steps do and '
        "adding what the sentences under 'Not modelled' say it does to the tables; or "
        '{"steps": null} when those sentences change nothing in the tables. Use only the tables, '
        "columns and arguments given."
    )
    lines = [
        f"Tool `{op.name}` ({bound.kind}): {op.description}",
        "Arguments (JSON Schema): " + json.dumps(op.input_schema, ensure_ascii=False)[:3000],
        "Not modelled:",
        *(f"- {s}" for s in bound.not_modelled),
        "Tables:",
        *_tables(records),
        "Current steps: " + json.dumps(bound.steps, ensure_ascii=False),
    ]
    for name, steps in examples.items():
        lines.append(f"Steps of the tool `{name}`, as an example: " + json.dumps(steps, ensure_ascii=False))
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]


def _tables(records: Records) -> list[str]:
    out = []
    for name, table in records.tables.items():
        states = records.states(name)
        columns = ", ".join(
            f"{c} {col.type}" + (f" ({', '.join(states[c])})" if c in states else "")
            for c, col in table.columns.items()
        )
        link = records.links.get(name)
        under = f", rows of a {link.parent} by {link.by}" if link else ""
        out.append(f"- {name} (key {records.key(name)}{under}): {columns}")
        rows = records.snap.rows[name]
        if rows:
            out.append("  example row: " + json.dumps(rows[0], ensure_ascii=False, default=str)[:400])
    return out


def parse_steps(reply: str) -> list[dict[str, Any]] | str:
    """The step list of a reply, or why there is none (`declined` for `{"steps": null}`)."""
    text = reply.strip()
    if len(text) > MAX_REPLY:
        return "too long"
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fenced:
        text = fenced.group(1).strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return "not JSON"
    try:
        data = json.loads(text[start : end + 1])
    except (ValueError, RecursionError):
        return "not JSON"
    if not isinstance(data, dict) or "steps" not in data:
        return "no steps"
    steps = data["steps"]
    if steps is None:
        return "declined"
    if not isinstance(steps, list) or not steps or not all(isinstance(s, dict) for s in steps):
        return "no steps"
    return steps


# -- calls to try a proposal on ------------------------------------------------------------------


def sample_arguments(records: Records, op: Operation, count: int = SAMPLES) -> list[dict[str, Any]]:
    """Arguments drawn from the records: the row an id argument names (rows in each state first),
    the other arguments from that row, its child rows, rows of its parent, or the values of a
    column of that name; else the schema's enum, default or a value of its type."""
    props = {k: v for k, v in (op.input_schema.get("properties") or {}).items() if isinstance(v, dict)}
    main_arg = next(
        (a for a, s in props.items() if s.get("type") != "array" and records.keyed_table(a) is not None), None
    )
    table = records.keyed_table(main_arg) if main_arg else None
    rows = _spread(records, table, count) if table else [{} for _ in range(count)]
    out = []
    for i, row in enumerate(rows):
        args: dict[str, Any] = {}
        for a, schema in props.items():
            if a == main_arg and table is not None:
                args[a] = row[records.key(table)]
            else:
                args[a] = _value(records, a, schema, table, row, i)
        out.append(args)
    return out


def _spread(records: Records, table: str, count: int) -> list[dict[str, Any]]:
    """Up to `count` rows, taking turns over the groups of rows in each state."""
    rows = records.snap.rows[table]
    states = list(records.states(table))
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(str(row.get(c)) for c in states), []).append(row)
    queues = [groups[k] for k in sorted(groups)]
    out: list[dict[str, Any]] = []
    depth = 0
    while len(out) < count and any(depth < len(q) for q in queues):
        out += [q[depth] for q in queues if depth < len(q)][: count - len(out)]
        depth += 1
    return out


def _value(
    records: Records, arg: str, schema: dict[str, Any], table: str | None, row: dict[str, Any], i: int
) -> Any:
    if schema.get("type") == "array":
        one = one_of(arg)
        base = one[4:] if one.startswith("new_") else one
        other = records.keyed_table(base)
        for child, link in records.links.items():
            if table is not None and link.parent == table and base in records.tables[child].columns:
                mine = [r for r in records.snap.rows[child] if r.get(link.by) == row.get(records.key(table))]
                if mine and base == one:
                    return [mine[0][base]]
                if mine and other is not None:
                    return [_replacement(records, child, mine[0], base, other, i)]
        if other is not None and records.snap.rows[other]:
            keys = [r[records.key(other)] for r in records.snap.rows[other]]
            return [keys[i % len(keys)]]
        return []
    if arg in row and row[arg] is not None:
        return row[arg]
    other = records.keyed_table(arg)
    if other is not None:
        candidates = records.snap.rows[other]
        owner = records.links.get(other)
        if owner is not None and owner.by in row:
            candidates = [r for r in candidates if r.get(owner.by) == row[owner.by]] or candidates
        if candidates:
            return candidates[i % len(candidates)][records.key(other)]
    for name, rows in records.snap.rows.items():
        if arg in records.tables[name].columns:
            seen = [r[arg] for r in rows if r.get(arg) is not None]
            if seen:
                return seen[i % len(seen)]
    if schema.get("enum"):
        return schema["enum"][i % len(schema["enum"])]
    if "default" in schema:
        return schema["default"]
    return {"integer": 1, "number": 1.0, "boolean": True, "object": {}}.get(str(schema.get("type")), "x")


def _replacement(records: Records, child: str, old: dict[str, Any], column: str, other: str, i: int) -> Any:
    """A key of `other` for a `new_` list: another row that names what the old element names
    (another variant of the same product), else any row."""
    refs = [
        c for c, col in records.tables[child].columns.items()
        if col.references and c != column and c in records.tables[other].columns
    ]  # fmt: skip
    key = records.key(other)
    rows = [r for r in records.snap.rows[other] if r[key] != old[column]]
    alike = [r for r in rows if all(r.get(c) == old.get(c) for c in refs)] or rows
    return alike[i % len(alike)][key] if alike else old[column]


def _outcomes(domain: Domain, tool: str, samples: Sequence[dict[str, Any]]) -> list[tuple[bool, str]]:
    """Per sample call on a fresh episode: (accepted, what it returned or refused and the state's digest)."""
    out = []
    for args in samples:
        with domain.episode(seed=0) as ep:
            try:
                value, ok = json.dumps(ep.call(tool, args), sort_keys=True, default=str), True
            except ToolError as exc:
                value, ok = str(exc), False
            out.append((ok, value + "\n" + ep.digest()))
    return out


# -- the whole domain ----------------------------------------------------------------------------


def proposer(options: LLMOptions) -> Refine:
    """The `refine` hook of `generate_domain` that asks the model at `options` (`propose_effects`)."""
    from toolgen.synth.llm import ChatModel

    model = ChatModel(options)

    def refine(
        builder: DomainBuilder, result: FromData, records: Records, ops: list[Operation]
    ) -> dict[str, int]:
        return propose_effects(model, builder, result, records, ops)

    return refine


def propose_effects(
    model: ChatModel, builder: DomainBuilder, result: FromData, records: Records, ops: Sequence[Operation]
) -> dict[str, int]:
    """Ask for the steps of each tool with "not modelled" sentences; keep those that pass (see the
    module docstring) in `builder` and `result` (their sentences move to `proposed`)."""
    counts: Counter[str] = Counter()
    by_name = {op.name: op for op in ops}
    raws = {raw["name"]: raw for raw in builder.tools}
    examples = _examples(result)
    compiled: Domain | None = None
    for name, bound in result.tools.items():
        if not bound.not_modelled or name not in raws:
            continue
        op = by_name[name]
        reply = model.chat(
            effect_prompt(op, bound, records, {k: v for k, v in examples.items() if k != name}),
            max_tokens=PROPOSAL_TOKENS,
        )
        if reply is None:
            counts["endpoint error"] += 1
            continue
        steps = parse_steps(reply)
        if isinstance(steps, str):
            counts[steps] += 1
            continue
        if compiled is None:
            compiled = builder.load()
        why = _try(builder, raws[name], steps, compiled, sample_arguments(records, op))
        if why is not None:
            counts[why] += 1
            continue
        compiled = None
        bound.steps = steps
        bound.proposed += bound.not_modelled
        bound.does = ["runs steps a model proposed for what its description says (checked on sample calls)"]
        bound.not_modelled = []
        counts["accepted"] += 1
    return dict(counts)


def _checks(steps: Any) -> set[str]:
    """Every `require` and `fail` step in `steps`, loops included, as canonical JSON."""
    found: set[str] = set()
    for step in steps if isinstance(steps, list) else [steps]:
        if isinstance(step, dict):
            if "require" in step or "fail" in step:
                found.add(json.dumps(step, sort_keys=True))
            found |= _checks(step.get("steps") or [])
    return found


def _examples(result: FromData) -> dict[str, list[dict[str, Any]]]:
    """Two writes whose steps do the most, shown to the model as the language in use."""
    writes = [(len(json.dumps(b.steps)), n) for n, b in result.tools.items() if b.kind == "write"]
    return {n: result.tools[n].steps for _, n in sorted(writes, reverse=True)[:2]}


def _try(
    builder: DomainBuilder, raw: dict[str, Any], steps: list[dict[str, Any]], compiled: Domain,
    samples: list[dict[str, Any]],
) -> str | None:  # fmt: skip
    """Why `steps` may not replace the tool's (None: they replace them in `raw`)."""
    before = raw["operation"]
    if not _checks(before) <= _checks(steps):
        return "drops a check"
    raw["operation"] = steps
    try:
        report = builder.check()
    except Exception:  # noqa: BLE001 - a reply is untrusted: whatever breaks loading rejects it
        report = None
    if report is None or report.domain is None:
        raw["operation"] = before
        return "does not load"
    name = raw["name"]
    try:
        new = _outcomes(report.domain, name, samples)
    except Exception:  # noqa: BLE001 - any failure inside the tool rejects the proposal
        raw["operation"] = before
        return "fails inside"
    old = _outcomes(compiled, name, samples)
    problem = None
    if any(ok for ok, _ in old) and not any(ok for ok, _ in new):
        problem = "refuses every call"
    elif new == old:
        problem = "changes nothing"
    if problem is not None:
        raw["operation"] = before
    return problem
