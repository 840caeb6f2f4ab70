"""Toolbox domains: the plan's too-small, unrelated operations, grouped by where they come from.

    extra, still_skipped = toolbox_domains(plan, operations)

Operations clustering left out still make working tools, only not in a connected domain. They are
grouped by provenance, most specific first: the same api, then source file, then folder. A group
of at least `min_tools` operations becomes toolbox domains of at most `max_tools` tools, whose
entity graphs need not be connected; the rest stay skipped with the plan's reason.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Callable, Sequence

from toolgen.model import Operation, Plan, PlannedDomain, SkippedOperation
from toolgen.naming import clip, slug

__all__ = ["TOOLBOX", "toolbox_domains"]

#: the word a toolbox domain's name ends with
TOOLBOX = "toolbox"
_TOO_SMALL = "too small and unrelated"


def _folder(op: Operation) -> str:
    archive, sep, member = op.source.partition("!")
    return posixpath.dirname(member) if sep else posixpath.dirname(op.source)


def _file_stem(op: Operation) -> str:
    path = op.source.partition("!")[2] or op.source
    name = posixpath.basename(path)
    return name.rsplit(".", 1)[0] if "." in name else name


def _tools(ops: Sequence[Operation]) -> dict[str, str]:
    """op id → a tool name unique within the domain (the dominant api keeps its names)."""
    counts: dict[str, int] = {}
    for op in ops:
        counts[op.api] = counts.get(op.api, 0) + 1
    ordered = sorted(ops, key=lambda o: (-counts[o.api], o.api, o.id))
    used: set[str] = set()
    out: dict[str, str] = {}
    for op in ordered:
        name = op.name
        if name in used:
            name = clip(f"{slug(op.api).replace('-', '_')}_{op.name}", 64)
        base, n = name, 2
        while name in used:
            name, n = f"{clip(base, 60)}_{n}", n + 1
        used.add(name)
        out[op.id] = name
    return {op.id: out[op.id] for op in sorted(ops, key=lambda o: o.id)}


def _chunks(ops: list[Operation], max_tools: int) -> list[list[Operation]]:
    parts = math.ceil(len(ops) / max_tools)
    size, extra = divmod(len(ops), parts)
    out, start = [], 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        out.append(ops[start:end])
        start = end
    return out


def toolbox_domains(
    plan: Plan, operations: Sequence[Operation]
) -> tuple[list[PlannedDomain], list[SkippedOperation]]:
    """Toolbox domains of the plan's too-small operations (see the module doc), and what stays skipped."""
    by_id = {op.id: op for op in operations}
    left = [by_id[s.id] for s in plan.skipped if s.id in by_id and s.reason.startswith(_TOO_SMALL)]
    keep_skipped = {s.id: s for s in plan.skipped}
    taken = {d.name for d in plan.domains}
    domains: list[PlannedDomain] = []
    levels: list[tuple[Callable[[Operation], str], Callable[[Operation], str]]] = [
        (lambda o: f"api:{o.api}", lambda o: o.api),
        (lambda o: f"file:{o.source}", _file_stem),
        (lambda o: f"folder:{_folder(o)}", lambda o: posixpath.basename(_folder(o)) or "specs"),
    ]
    for key_of, label_of in levels:
        groups: dict[str, list[Operation]] = {}
        for op in left:
            groups.setdefault(key_of(op), []).append(op)
        placed: set[str] = set()
        for key in sorted(groups):
            group = sorted(groups[key], key=lambda o: o.id)
            if len(group) < plan.min_tools:
                continue
            for chunk in _chunks(group, plan.max_tools):
                name = _name(label_of(chunk[0]), taken)
                domains.append(
                    PlannedDomain(
                        name=name,
                        operations=[o.id for o in chunk],
                        apis=sorted({o.api for o in chunk}),
                        entities=sorted({o.entity for o in chunk}),
                        tools=_tools(chunk),
                    )
                )
                placed.update(o.id for o in chunk)
        left = [op for op in left if op.id not in placed]
        for op_id in placed:
            keep_skipped.pop(op_id, None)
    return domains, sorted(keep_skipped.values(), key=lambda s: s.id)


def _name(label: str, taken: set[str]) -> str:
    base = f"{slug(label, 40)}-{TOOLBOX}"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name
