"""Tasks for a generated domain: walks on its tool graph, run on the simulator, kept only when valid.

    kept, rejected = make_tasks(builder, folder, schema, toolset, seed=0)

`walks` proposes candidates of each kind (single, chain, double, errand, batch, every, sweep,
changes, read, survey, roundup, compare, refusal); each is checked as a person would read it (`checks`), then validated like `toolgym
validate` does for one task. Each kept task has a tier 0-4 from its structure (`tier`); each tier
is kept up to its share (`TIER_SHARES`) of `MAX_TASKS`. Deterministic from `seed` and the name.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scoring.calls import run_calls
from scoring.errors import CallReferenceError
from scoring.tasks import Task, load_domain
from scoring.validation.validate import check_loaded_task, domain_ids
from simulator import Domain
from simulator.builders import DomainBuilder, dump_jsonl
from toolgen.model import Operation
from toolgen.naming import plural_phrase, singular, words
from toolgen.pure import path_params, verb_of

from . import instructions as say
from .checks import instruction_problems
from .lexicon import ONLY_QUALIFIERS, ONLY_VERBS, said_as_a_thing
from .lookups import World
from .schema import DomainSchema
from .tools import Toolset
from .walks import Candidate, propose

__all__ = [
    "MAX_TASKS",
    "MIN_KEPT",
    "TIER_SHARES",
    "call_results",
    "make_tasks",
    "tier",
    "validate_candidates",
]

#: most tasks kept per domain
MAX_TASKS = 20
#: the share of a domain's tasks each tier 0-4 holds at most before long ones fill the rest (of 20:
#: one single call, two of 2-3 calls, three of 4-6, five of 7-10, nine of 11 or more)
TIER_SHARES = (0.05, 0.10, 0.15, 0.25, 0.45)
#: a domain keeps short tasks (1-2 calls) only up to a third of its long ones, or up to this many in all
MIN_KEPT = 5
#: why a candidate is left out that works on a table the spec never names as a thing
UNSAID = "names a thing its spec never says"


def _stream(seed: int, name: str) -> int:
    return int.from_bytes(hashlib.sha256(f"tasks:{seed}:{name}".encode()).digest()[:8], "big")


def _raw(task_id: str, c: Candidate) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "id": task_id,
        "instruction": c.instruction,
        "calls": c.calls,
        "answer_facts": c.answer_facts,
        "difficulty": _difficulty(c),
        "tags": ["generated", f"tier-{tier(c)}", c.kind],
    }
    return Task.model_validate(raw).model_dump(mode="json", exclude_defaults=True) | {"id": task_id}


def tier(c: Candidate) -> int:
    """0-4 from the task's structure: its gold calls (1; 2-3; 4-6; 7-10; 11 or more), one tier
    up for a refusal the agent must recognise, at most 4."""
    n = len(c.calls)
    base = 0 if n <= 1 else 1 if n <= 3 else 2 if n <= 6 else 3 if n <= 10 else 4
    return min(4, base + (c.kind == "refusal"))


def _difficulty(c: Candidate) -> str:
    return ("easy", "easy", "medium", "hard", "hard")[tier(c)]


def call_results(domain: Domain, task: Task) -> list[str]:
    """The text of each gold call's result (a failed call's error), up to the first bad reference."""
    episode = domain.episode(seed=task.seed or 0)
    texts: list[str] = []
    try:
        for outcome in run_calls(episode, task.calls, task.id):
            value = outcome.result if outcome.error is None else str(outcome.error)
            texts.append(json.dumps(value, ensure_ascii=False, default=str))
    except CallReferenceError:
        pass  # (validation says why)
    finally:
        episode.close()
    return texts


def _machine_keys(domain: Domain) -> frozenset[str]:
    """The seed's keys of eight or more letters and digits that a pattern drew (`XXXXXXXX` →
    `KPXXUEFP`): no person quotes one (a six-character booking code, `4WQ150`, one does)."""
    drawn = {
        name: table.primary_key
        for name, table in domain.spec.tables.items()
        if table.ids is not None and table.ids.scheme == "pattern" and isinstance(table.primary_key, str)
    }
    if not drawn:
        return frozenset()
    episode = domain.episode(seed=0)
    try:
        rows = episode.export()
    finally:
        episode.close()
    keys = (
        str(row[key]) for name, key in drawn.items() for row in rows.get(name, []) if row.get(key) is not None
    )
    return frozenset(k for k in keys if len(k) >= 8 and k.isalnum())


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*[A-Za-z0-9]")


def validate_candidates(
    domain: Domain, candidates: Sequence[Candidate], *, limit: int = MAX_TASKS
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Each candidate through `check_loaded_task` (`check_task`'s checks on the loaded domain,
    which is not loaded again per candidate), in order, until `limit` are valid: (the valid tasks
    as written, {status: number rejected})."""
    name = domain.spec.name
    texts = [tool.spec.description or "" for tool in domain.tools.values()]
    names = say.capitals(texts) | say.compounds(texts, list(domain.spec.tables))
    for c in candidates:
        c.instruction = say.as_written(say.refer_once(c.instruction), names)
    raws = [_raw(f"{name}-{i + 1:03d}", c) for i, c in enumerate(candidates)]
    kept: list[tuple[int, dict[str, Any]]] = []
    rejected: dict[str, int] = {}
    tiers = [tier(c) for c in candidates]
    quota = [max(1, round(limit * share)) for share in TIER_SHARES]
    held = [0] * len(TIER_SHARES)
    # the longest first, each tier up to its share; then long ones (short ones only up to
    # MIN_KEPT in all) fill what is left
    # within a tier, the first of each kind before the second of any (a tier of one kind teaches less)
    nth: dict[str, int] = {}
    rank = []
    for c in candidates:
        nth[c.kind] = nth.get(c.kind, -1) + 1
        rank.append(nth[c.kind])
    # the few refusals (a rule the domain enforces) first of all
    order = sorted(
        range(len(raws)),
        key=lambda i: (
            candidates[i].kind != "refusal",
            -tiers[i],
            rank[i],
            not candidates[i].long,
            -len(candidates[i].calls),
        ),
    )
    tried: set[int] = set()
    ids = domain_ids(domain)
    schemas = {name: tool.spec.input_schema for name, tool in domain.tools.items()}
    machine = _machine_keys(domain)
    for fill, i in [(False, i) for i in order] + [(True, i) for i in order]:
        if i in tried or len(kept) >= limit:
            continue
        if not fill and held[tiers[i]] >= quota[tiers[i]]:
            continue
        if fill and (tiers[i] < 3 or not candidates[i].long) and len(kept) >= MIN_KEPT:
            continue  # beyond its share, a short task only keeps a small domain
        tried.add(i)
        task = Task.model_validate(raws[i])
        results = call_results(domain, task)
        problems = instruction_problems(candidates[i].instruction, candidates[i].calls, schemas, results)
        if not problems and (said := machine.intersection(_TOKEN.findall(candidates[i].instruction))):
            problems = [("opaque id", min(said))]  # (a key drawn from a pattern: `KPXXUEFP`)
        if problems:
            reason = f"instruction: {problems[0][0]}"
            rejected[reason] = rejected.get(reason, 0) + 1
            continue
        verdict = check_loaded_task(domain, task, ids=ids)
        if verdict.valid:
            kept.append((i, raws[i]))
            held[tiers[i]] += 1
        else:
            rejected[verdict.status] = rejected.get(verdict.status, 0) + 1
    return [raw for _, raw in sorted(kept, key=lambda k: k[0])], rejected


def _tools_on_unsaid_things(schema: DomainSchema, toolset: Toolset) -> set[str]:
    """The tools on a table named from names alone (no operation on it declares a record) that
    no description of those operations says as a thing (`lexicon.said_as_a_thing`): a task about
    its rows would name something the API never calls a thing (`the tirtos`, `the airs`); and
    the tools on a table whose name ends in a word that only qualifies (`daily`, `airing today`)
    or starts with a verb that is no noun (`get membership`)."""
    tools_of: dict[str, list[tuple[str, Operation]]] = {}
    for tool in toolset.tools:
        op = schema.operations.get(tool.op_id)
        if op is not None and tool.op_id not in schema.tableless and op.entity in schema.by_entity:
            tools_of.setdefault(schema.table_of(op).name, []).append((tool.name, op))
    unsaid: set[str] = set()
    texts = [op.description for op in schema.operations.values()]
    for table, tools in tools_of.items():
        noun = schema.tables[table].entity.replace("_", " ")
        said = noun.split() or [""]
        if said[-1] in ONLY_QUALIFIERS or said[0] in ONLY_VERBS:  # (`the daily`, `the get membership`)
            unsaid.update(name for name, _ in tools)
        elif all(_named_after_api(op) for _, op in tools):  # (`find` of the Gorilla file system)
            unsaid.update(name for name, _ in tools)
        elif _mass_noun(noun, texts):
            unsaid.update(name for name, _ in tools)  # (`the messagings whose friendly names are`)
        elif any(op.record_schema for _, op in tools):
            continue
        elif not said_as_a_thing(noun, [op.description for _, op in tools]):
            unsaid.update(name for name, _ in tools)
    return unsaid


#: verbs that join a row to another (`attach the knowledge base to the agent`)
_LINK_VERBS = frozenset("attach detach link unlink connect disconnect associate dissociate".split())


def _links_in_place(schema: DomainSchema, toolset: Toolset) -> set[str]:
    """Tools that join a row to another named in the path (`POST /agents/{agent}/knowledge_bases/{kb}`)
    compiled as an event on a row already under that parent: `attach the knowledge base ...` would
    say no more than the row it is already attached to."""
    found = set()
    for tool in toolset.tools:
        op = schema.operations.get(tool.op_id)
        if op is None or tool.compiled_as != "event" or verb_of(op) not in _LINK_VERBS:
            continue
        scope = path_params(op)
        if any(b.role == "parent" and b.param in scope for b in schema.bindings.get(op.id, [])):
            found.add(tool.name)
    return found


def _named_after_api(op: Operation) -> bool:
    """Whether the operation's entity is its api's name, which its own name does not say: the
    record it acts on is unknown (`find` of `gorilla_file_system`), not the api itself."""
    own = op.entity.split("_")
    return words(op.api) == tuple(own) and not set(own) <= {singular(w) for w in words(op.name)}


def _mass_noun(noun: str, texts: list[str]) -> bool:
    """A noun in `-ing` that names an activity (`messaging`, `billing`), not a thing counted: no
    text says it in the plural or after `a`/`an`/`each`/`every`."""
    head = noun.split()[-1] if noun.split() else ""
    if len(head) <= 5 or not head.endswith("ing"):
        return False
    word = re.escape(head)
    counted = re.compile(rf"\b(?:{word}s|(?:a|an|each|every|one) (?:\w+ )?{word})\b", re.IGNORECASE)
    return not any(counted.search(text) for text in texts)


def _unsaid_owners(schema: DomainSchema) -> re.Pattern[str] | None:
    """The nouns of tables no tool acts on (made for an id argument, `vec_id`) whose last word
    no path, description or argument description of the domain's operations holds: a task naming
    one names what the API never calls a thing (`the archival memory of the vec 16`), as a
    pattern over instructions."""
    acted = {schema.table_of(op).name for op in schema.operations.values() if op.entity in schema.by_entity}
    texts = [op.description + " " + op.pointer.replace("~1", "/") for op in schema.operations.values()] + [
        str(p.get("description") or "")
        for op in schema.operations.values()
        for p in (op.input_schema.get("properties") or {}).values()
        if isinstance(p, dict)
    ]
    spoken = {w for text in texts for w in words(text)}
    nouns = [
        table.entity.replace("_", " ")
        for name, table in schema.tables.items()
        if name not in acted and not {(head := table.entity.split("_")[-1]), plural_phrase(head)} & spoken
    ]
    if not nouns:
        return None
    forms = sorted({f for n in nouns for f in (n, plural_phrase(n))}, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(f) for f in forms) + r")\b", re.IGNORECASE)


def make_tasks(
    builder: DomainBuilder,
    folder: Path,
    schema: DomainSchema,
    toolset: Toolset,
    *,
    seed: int = 0,
    domain: Domain | None = None,
) -> tuple[int, dict[str, int]]:
    """Tasks for the checked domain in `folder` (`domain`: it loaded, when the caller has it):
    proposed, validated, the valid ones added to `builder` and written to `folder/tasks.jsonl`.
    Returns (kept, {status: rejected})."""
    folder = Path(folder)
    domain = load_domain(folder) if domain is None else domain
    world = World(domain, schema, toolset, builder.rows)
    try:
        candidates = propose(world, random.Random(_stream(seed, domain.spec.name)))
    finally:
        world.close()
    unsaid = _tools_on_unsaid_things(schema, toolset) | _links_in_place(schema, toolset)
    owners = _unsaid_owners(schema)
    said = [
        c
        for c in candidates
        if not unsaid.intersection(call["name"] for call in c.calls)
        and not (owners and owners.search(c.instruction))
    ]
    kept, rejected = validate_candidates(domain, said)
    if len(said) < len(candidates):
        rejected[UNSAID] = len(candidates) - len(said)
    for raw in kept:
        body = {k: v for k, v in raw.items() if k not in ("id", "instruction", "calls")}
        builder.task(raw["id"], raw["instruction"], raw["calls"], **body)
    if builder.tasks:
        (folder / "tasks.jsonl").write_text(dump_jsonl(builder.tasks), encoding="utf-8")
    return len(kept), rejected
