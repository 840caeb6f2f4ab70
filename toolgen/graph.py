"""The graphs clustering works on: the entity graph of a group of operations, and the operation graph.

- The **entity graph** of a group of operations: a node per entity an operation acts on, consumes or
  produces; an edge between an operation's entity and each entity whose id it consumes or produces
  (an operation that uses both; `produces` holds the ids a result carries, so an id one entity holds
  of another joins them too). A domain's entity graph must be connected: its tools then act on
  shared tables. Two connected groups joined stay connected exactly when they share an entity.
- The **operation graph** of one api: a node per operation, edges weighted by what two operations
  share (`Weights`): the entity they act on, an id one consumes or produces of the other's entity
  (or of the same third entity), the leading static path segments. Edges come from buckets (the
  operations sharing a key), never from all pairs; a bucket larger than `BUCKET_LINKS` links each
  operation to its next `BUCKET_LINKS` bucket-mates in id order only, so a 2,000-operation api
  with one path prefix stays linear in size.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import networkx as nx

from .model import Operation

#: A bucket (operations sharing a key) larger than this links each member to this many next ones.
BUCKET_LINKS = 6


@dataclass(frozen=True)
class Weights:
    """Edge weights of the operation graph (summed when two operations share several things)."""

    entity: float = 3.0  # both act on the same entity
    id_link: float = 2.0  # one consumes or produces the id of the other's entity
    shared_id: float = 1.0  # both consume or produce the id of a third entity
    path_prefix: float = 1.0  # the same leading static path segments


def entity_nodes(op: Operation) -> list[str]:
    """The entities an operation touches: its own first, then the ids it consumes and produces."""
    return list(dict.fromkeys([op.entity, *op.consumes, *op.produces]))


def entity_graph(ops: Iterable[Operation]) -> nx.Graph:
    """The entity graph of a group of operations (see the module docstring)."""
    graph = nx.Graph()
    for op in ops:
        graph.add_node(op.entity)
        for other in (*op.consumes, *op.produces):
            if other != op.entity:
                graph.add_edge(op.entity, other)
    return graph


def is_connected(ops: Sequence[Operation]) -> bool:
    """Whether the entity graph of `ops` is connected (an empty group is not)."""
    return len(components(ops)) == 1


def components(ops: Sequence[Operation]) -> list[list[Operation]]:
    """`ops` split into groups whose entity graphs are connected (the groups in first-seen order)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    for op in ops:
        nodes = entity_nodes(op)
        first = find(nodes[0])
        for other in nodes[1:]:
            root = find(other)
            if root != first:
                parent[root] = first
    groups: dict[str, list[Operation]] = {}
    for op in ops:
        groups.setdefault(find(op.entity), []).append(op)
    return list(groups.values())


def _link(edges: dict[tuple[str, str], float], members: list[str], weight: float) -> None:
    for i, a in enumerate(members):
        for b in members[i + 1 : i + 1 + BUCKET_LINKS]:
            key = (a, b) if a < b else (b, a)
            edges[key] = edges.get(key, 0.0) + weight


def operation_graph(ops: Sequence[Operation], weights: Weights) -> nx.Graph:
    """The weighted operation graph of `ops` (sorted by id by the caller, for determinism)."""
    by_entity: dict[str, list[str]] = defaultdict(list)
    by_ref: dict[str, list[str]] = defaultdict(list)
    by_prefix: dict[str, list[str]] = defaultdict(list)
    for op in ops:
        by_entity[op.entity].append(op.id)
        for ref in dict.fromkeys((*op.consumes, *op.produces)):
            if ref != op.entity:
                by_ref[ref].append(op.id)
        if op.path_prefix:
            by_prefix[op.path_prefix].append(op.id)
    edges: dict[tuple[str, str], float] = {}
    for entity, members in by_entity.items():
        _link(edges, members, weights.entity)
        for a in members[:BUCKET_LINKS]:  # operations holding this entity's id, to ones acting on it
            for b in by_ref.get(entity, [])[:BUCKET_LINKS]:
                _link(edges, [a, b], weights.id_link)
    for members in by_ref.values():
        _link(edges, members, weights.shared_id)
    for members in by_prefix.values():
        if len(members) < len(ops):  # a prefix every operation shares says nothing
            _link(edges, members, weights.path_prefix)
    graph = nx.Graph()
    graph.add_nodes_from(op.id for op in ops)
    graph.add_weighted_edges_from((a, b, w) for (a, b), w in sorted(edges.items()))
    return graph
