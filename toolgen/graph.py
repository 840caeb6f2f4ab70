"""The graph clustering works on: the entity graph of a group of operations, and the link weights.

The entity graph has a node per entity an operation acts on, consumes or produces, and an edge
between an operation's entity and each entity whose id it consumes or produces. A domain's
entity graph must be connected. Operations that name no record are left out (`anchored`).
`Weights` says how much what two groups share counts when clustering joins them.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import networkx as nx

from .model import Operation
from .pure import free


@dataclass(frozen=True)
class Weights:
    """What two groups of operations share, weighted (summed when they share several things)."""

    entity: float = 3.0  # both act on the same entity
    id_link: float = 2.0  # one consumes or produces the id of the other's entity
    shared_id: float = 1.0  # both consume or produce the id of a third entity
    path_prefix: float = 1.0  # the same leading static path segments


def entity_nodes(op: Operation) -> list[str]:
    """The entities an operation touches: its own first, then the ids it consumes and produces."""
    return list(dict.fromkeys([op.entity, *op.consumes, *op.produces]))


def anchored(ops: Iterable[Operation]) -> list[Operation]:
    """The operations of a group that name a record (`toolgen.pure.free`: a computation taking
    no id names none), or all of them when none does."""
    ops = list(ops)
    return [op for op in ops if not free(op)] or ops


def entity_graph(ops: Iterable[Operation]) -> nx.Graph:
    """The entity graph of a group of operations (see the module docstring), over those that
    name a record (`anchored`)."""
    graph = nx.Graph()
    for op in anchored(ops):
        graph.add_node(op.entity)
        for other in (*op.consumes, *op.produces):
            if other != op.entity:
                graph.add_edge(op.entity, other)
    return graph


def is_connected(ops: Sequence[Operation]) -> bool:
    """Whether the entity graph of `ops` (`anchored`) is connected (an empty group is not)."""
    return len(components(anchored(ops))) == 1


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
