"""Operations → a `Plan`: domains of a bounded size whose entity graphs are connected.

    cluster(ops, min_tools=5, max_tools=40, seed=0) -> Plan

Each api's operations are cut into connected parts; a part over `max_tools` is cut where its links
are weakest; pieces under `min_tools` merge into their nearest neighbour sharing an entity (of the
same api, where either is a service big enough for domains of its own), or are skipped with the
reason; the domains are then named. Every step runs in a fixed order, so the
same operations and seed give a byte-identical plan whatever order they come in.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from .graph import Weights, components, entity_graph, entity_nodes
from .model import Operation, Plan, PlannedDomain, SkippedOperation
from .naming import clip, unique_name
from .pure import free

#: Weakest link two clusters are joined by, per operation of the smaller one (with the default
#: `Weights`, an id link is 2: about half the smaller cluster's operations hold the other's ids).
JOIN = 1.0
#: Live candidates a small piece looks at per shared entity (the first ones, in a fixed order).
CANDIDATES_PER_ENTITY = 64
#: Affinity of two pieces drawn from the same api (on top of their shared entities).
SAME_API = 2.0
#: Formats whose api is one service: its records are its own (Slicebox's logs are no Kubernetes
#: pod's), unlike a list of functions gathered from many sources
_SERVICES = frozenset(("openapi-3.0", "openapi-3.1", "swagger-2.0", "mcp-tools"))


@dataclass
class _Piece:
    index: int
    ops: list[Operation]
    entities: set[str] = field(default_factory=set)
    apis: Counter[str] = field(default_factory=Counter)
    prefixes: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    alive: bool = True

    @classmethod
    def of(cls, index: int, ops: list[Operation]) -> _Piece:
        piece = cls(index, [])
        piece.add(ops)
        return piece

    def add(self, ops: list[Operation]) -> None:
        self.ops.extend(ops)
        for op in ops:
            if not free(op):  # (one naming no record links to nothing: `toolgen.pure.free`)
                self.entities.update(entity_nodes(op))
            self.apis[op.api] += 1
            self.names.add(op.name)
            if op.path_prefix:
                self.prefixes.add(op.path_prefix)


def cluster(
    ops: Sequence[Operation],
    *,
    min_tools: int = 5,
    max_tools: int = 40,
    seed: int = 0,
    weights: Weights | None = None,
) -> Plan:
    """Cluster `ops` into domains (see the module docstring). Raises ValueError on bad bounds or ids."""
    if min_tools < 1 or max_tools < min_tools:
        raise ValueError(
            f"need 1 <= min_tools <= max_tools, got min_tools {min_tools}, max_tools {max_tools}"
        )
    weights = weights or Weights()
    ordered = sorted(ops, key=lambda op: op.id)
    for a, b in zip(ordered, ordered[1:], strict=False):
        if a.id == b.id:
            raise ValueError(f"operation id {a.id!r} appears twice ({a.source} and {b.source})")
    by_api: dict[str, list[Operation]] = {}
    for op in ordered:
        by_api.setdefault(op.api, []).append(op)
    parts: list[list[Operation]] = []
    for api in sorted(by_api):
        parts.extend(_split_api(by_api[api], max_tools, weights))
    pieces = [_Piece.of(i, part) for i, part in enumerate(parts)]
    # a service with room for a domain of its own shares no domain with another api
    fenced = frozenset(a for a, o in by_api.items() if len(o) >= min_tools and o[0].format in _SERVICES)
    _merge_small(pieces, min_tools, max_tools, weights, fenced)
    domains: list[list[Operation]] = []
    skipped: list[SkippedOperation] = []
    for piece in pieces:
        if not piece.alive:
            continue
        if len(piece.ops) >= min_tools:
            domains.append(sorted(piece.ops, key=lambda op: op.id))
            continue
        entities = ", ".join(sorted(piece.entities))
        reason = (
            f"too small and unrelated: its group of {len(piece.ops)} operation(s) on {entities} "
            f"shares no entity with a domain that has room and may take it (a service big enough "
            f"for domains of its own shares none with another api), and min_tools is {min_tools}"
        )
        skipped.extend(SkippedOperation(id=op.id, reason=reason) for op in piece.ops)
    return Plan(
        domains=_named(domains),
        skipped=sorted(skipped, key=lambda s: s.id),
        seed=seed,
        min_tools=min_tools,
        max_tools=max_tools,
    )


# ---------------------------------------------------------------------------------------------
# 1–2: one api into connected parts of at most max_tools


def _split_api(ops: list[Operation], max_tools: int, weights: Weights) -> list[list[Operation]]:
    """An api's operations into connected parts of at most max_tools (`_bound` where one is
    larger); an operation that names no record (`toolgen.pure.free`) joins the largest part with
    room (it needs no entity in common)."""
    parts = [
        bounded
        for part in components([op for op in ops if not free(op)])
        for bounded in _bound(part, max_tools, weights)
    ]
    left: list[Operation] = []
    for op in (op for op in ops if free(op)):
        room = [part for part in parts if len(part) < max_tools]
        if room:
            max(room, key=len).append(op)
        else:
            left.append(op)
    return parts + components(left)


def _bound(part: list[Operation], max_tools: int, weights: Weights) -> list[list[Operation]]:
    """A connected part split into connected parts of at most max_tools operations: each entity's
    own operations a unit (grown into even chunks when it alone is too large), then the units
    joined along their strongest links while the result fits, so that the cuts fall on the
    weakest links (`_join`)."""
    if len(part) <= max_tools:
        return [part]
    by_entity: dict[str, list[Operation]] = {}
    for op in part:
        by_entity.setdefault(op.entity, []).append(op)
    units: list[list[Operation]] = []
    for entity in sorted(by_entity):
        own = by_entity[entity]
        units.extend(_grow(own, max_tools) if len(own) > max_tools else [own])
    joined = _join(units, max_tools, weights)
    return [piece for cluster in joined for piece in components(cluster)]


@dataclass
class _Cluster:
    """Units joined so far: their operations, the entities they act on, how many of their
    operations touch each entity, their path prefixes."""

    ops: list[Operation]
    own: set[str]
    touches: Counter[str]
    prefixes: set[str]
    version: int = 0

    @classmethod
    def of(cls, ops: list[Operation]) -> _Cluster:
        touches: Counter[str] = Counter()
        for op in ops:
            touches.update(entity_nodes(op))
        return cls(
            list(ops), {op.entity for op in ops}, touches, {op.path_prefix for op in ops if op.path_prefix}
        )

    def absorb(self, other: _Cluster) -> None:
        self.ops.extend(other.ops)
        self.own |= other.own
        self.touches.update(other.touches)
        self.prefixes |= other.prefixes
        self.version += 1


def _link(a: _Cluster, b: _Cluster, weights: Weights) -> float:
    """How strongly two clusters hold together: operations of one that act on or take the id of
    an entity the other acts on (the id links, `weights.id_link` each), entities neither acts on
    whose ids both take (`weights.shared_id` each), shared path prefixes (`weights.path_prefix`)."""
    links = sum(a.touches[e] for e in b.own) + sum(b.touches[e] for e in a.own)
    third = (a.touches.keys() & b.touches.keys()) - a.own - b.own
    return (
        weights.id_link * links
        + weights.shared_id * len(third)
        + weights.path_prefix * len(a.prefixes & b.prefixes)
    )


def _join(units: list[list[Operation]], max_tools: int, weights: Weights) -> list[list[Operation]]:
    """Units joined pairwise, the most strongly linked pair that fits first (then the smaller,
    then the first by operation id), while the link per operation of the smaller side is at
    least `JOIN`; clusters in order of first id."""
    clusters = [_Cluster.of(sorted(u, key=lambda op: op.id)) for u in units if u]
    clusters.sort(key=lambda c: c.ops[0].id)
    alive = set(range(len(clusters)))
    by_entity: dict[str, set[int]] = {}
    for i, c in enumerate(clusters):
        for entity in c.touches:
            by_entity.setdefault(entity, set()).add(i)
    heap: list[tuple[float, int, int, int, int, int]] = []

    def push(i: int) -> None:
        near = sorted({j for e in clusters[i].touches for j in by_entity.get(e, ()) if j != i and j in alive})
        for j in near:
            size = len(clusters[i].ops) + len(clusters[j].ops)
            weight = _link(clusters[i], clusters[j], weights) / min(
                len(clusters[i].ops), len(clusters[j].ops)
            )
            if size <= max_tools and weight >= JOIN:
                a, b = min(i, j), max(i, j)
                heapq.heappush(heap, (-weight, size, a, b, clusters[a].version, clusters[b].version))

    for i in range(len(clusters)):
        push(i)
    while heap:
        _, _, a, b, va, vb = heapq.heappop(heap)
        if a not in alive or b not in alive or clusters[a].version != va or clusters[b].version != vb:
            continue
        clusters[a].absorb(clusters[b])
        alive.discard(b)
        for entity in clusters[b].touches:
            by_entity[entity].discard(b)
            by_entity[entity].add(a)
        push(a)
    kept = [sorted(clusters[i].ops, key=lambda op: op.id) for i in sorted(alive)]
    return sorted(kept, key=lambda c: c[0].id)


def _grow(part: list[Operation], max_tools: int) -> list[list[Operation]]:
    """Connected chunks of even size (≤ max_tools) grown breadth-first over the entities."""
    target = math.ceil(len(part) / math.ceil(len(part) / max_tools))
    by_entity: dict[str, list[Operation]] = {}
    for op in part:
        for entity in entity_nodes(op):
            by_entity.setdefault(entity, []).append(op)
    taken: set[str] = set()
    chunks: list[list[Operation]] = []
    for start in part:
        if start.id in taken:
            continue
        chunk: list[Operation] = []
        queue = deque([start])
        seen_entities: set[str] = set()
        while queue and len(chunk) < target:
            op = queue.popleft()
            if op.id in taken:
                continue
            taken.add(op.id)
            chunk.append(op)
            for entity in entity_nodes(op):
                if entity not in seen_entities:
                    seen_entities.add(entity)
                    queue.extend(o for o in by_entity[entity] if o.id not in taken)
        chunks.append(chunk)
    return [c for chunk in chunks for c in components(chunk)]


# ---------------------------------------------------------------------------------------------
# 3: small pieces into their nearest neighbours


def _affinity(a: _Piece, b: _Piece, weights: Weights) -> float:
    shared_api = SAME_API if a.apis.keys() & b.apis.keys() else 0.0
    return (
        weights.entity * len(a.entities & b.entities)
        + shared_api
        + weights.path_prefix * len(a.prefixes & b.prefixes)
    )


def _merge_small(
    pieces: list[_Piece], min_tools: int, max_tools: int, weights: Weights, fenced: frozenset[str]
) -> None:
    """Merge each piece smaller than min_tools into its nearest neighbour with room, smallest first;
    again while a pass merges anything (a piece may gain a neighbour from a later merge)."""
    by_entity: dict[str, list[int]] = {}
    for piece in pieces:
        for entity in sorted(piece.entities):
            by_entity.setdefault(entity, []).append(piece.index)
    merged = True
    while merged:
        merged = False
        heap = [(len(p.ops), p.index) for p in pieces if p.alive and len(p.ops) < min_tools]
        heapq.heapify(heap)
        while heap:
            size, index = heapq.heappop(heap)
            piece = pieces[index]
            if not piece.alive or len(piece.ops) != size:
                continue
            best = _nearest(piece, pieces, by_entity, max_tools, weights, fenced)
            if best is None:
                continue
            for entity in sorted(piece.entities - best.entities):  # best now holds them too
                by_entity[entity].append(best.index)
            best.add(piece.ops)
            piece.alive = False
            merged = True
            if len(best.ops) < min_tools:
                heapq.heappush(heap, (len(best.ops), best.index))


def _nearest(
    piece: _Piece,
    pieces: list[_Piece],
    by_entity: dict[str, list[int]],
    max_tools: int,
    weights: Weights,
    fenced: frozenset[str],
) -> _Piece | None:
    room = max_tools - len(piece.ops)
    own_fenced = not fenced.isdisjoint(piece.apis)
    best: tuple[bool, float, int, int] | None = None
    for entity in sorted(piece.entities):
        members = by_entity[entity]
        live = [i for i in members if pieces[i].alive and len(pieces[i].ops) < max_tools]
        by_entity[entity] = live  # drop the dead and the full for good: pieces only grow
        looked = 0
        for i in live:
            if i == piece.index or len(pieces[i].ops) > room:
                continue
            other = pieces[i]
            if piece.apis.keys().isdisjoint(other.apis) and (own_fenced or not fenced.isdisjoint(other.apis)):
                continue  # (no Slicebox log tools in a Kubernetes domain)
            distinct = piece.names.isdisjoint(pieces[i].names)  # better no two tools of one name
            key = (distinct, _affinity(piece, pieces[i], weights), -len(pieces[i].ops), -i)
            if best is None or key > best:
                best = key
            looked += 1
            if looked >= CANDIDATES_PER_ENTITY:
                break
    return None if best is None else pieces[-best[3]]


# ---------------------------------------------------------------------------------------------
# 4: names


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40].strip("-") or "api"


def tool_names(ops: list[Operation]) -> dict[str, str]:
    """Each operation's tool name in one domain, unique within it.

    A name is unique within its api already; where two apis of the domain share one, every holder
    but the domain's dominant api's gets its api's slug in front (`stripe_list_customers`), and
    `naming.unique_name` settles what is left. Deterministic: by api, then operation id.
    """
    apis = Counter(op.api for op in ops)
    counts = Counter(op.name for op in ops)
    order = sorted(ops, key=lambda op: (-apis[op.api], op.api, op.id))
    used: set[str] = set()
    names: dict[str, str] = {}
    for op in order:
        base = op.name
        if counts[op.name] > 1 and base in used:
            base = clip(f"{_slug(op.api).replace('-', '_')}_{op.name}")
        names[op.id] = unique_name(base, used, op.id)
    return dict(sorted(names.items()))


def _named(domains: list[list[Operation]]) -> list[PlannedDomain]:
    """PlannedDomains named `api-entity-entity`, de-duplicated with -2, -3…, sorted by name."""
    drafts = []
    for ops in domains:
        apis = Counter(op.api for op in ops)
        api = min(apis, key=lambda a: (-apis[a], a))
        entities = Counter(op.entity for op in ops)
        top = sorted(entities, key=lambda e: (-entities[e], e))[:2]
        base = "-".join([_slug(api), *(_slug(e) for e in top)])
        drafts.append((base, ops[0].id, ops))
    drafts.sort(key=lambda d: (d[0], d[1]))
    taken = {base for base, _, _ in drafts}
    used: set[str] = set()
    suffix: Counter[str] = Counter()
    named = []
    for base, _, ops in drafts:
        name = base
        if name in used:
            suffix[base] = max(suffix[base], 1)
            while name in used or name in taken:
                suffix[base] += 1
                name = f"{base}-{suffix[base]}"
        used.add(name)
        named.append(
            PlannedDomain(
                name=name,
                operations=[op.id for op in ops],
                apis=sorted({op.api for op in ops}),
                entities=sorted(entity_graph(ops).nodes),
                tools=tool_names(ops),
            )
        )
    return sorted(named, key=lambda d: d.name)
