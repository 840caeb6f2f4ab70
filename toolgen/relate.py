"""Relations between the entities of one api that one operation alone cannot see.

    relate(ops) -> ops   (copies; `consumes` extended, nothing else changed)

Knowing every entity of the api, this adds to an operation's `consumes` the entities its
identifier arguments name (`thingName`, `securityProfileArn`) and the entity a sub-entity extends
by whole words (`global_table_settings` → `global_table`). The result keeps the order of `ops`;
the same input gives the same output.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from .model import Operation
from .naming import singular, words

#: The words that make a property an identifier of the entity named before them.
IDENTIFIER_WORDS = frozenset(
    {"id", "ids", "name", "names", "arn", "arns", "key", "keys", "code", "uuid", "url", "slug"}
)
#: Things a name argument names in a record's schema, not a record (`column_name`, `field_name`).
SCHEMA_WORDS = frozenset({"column", "field", "attribute"})
#: The shortest entity name a sub-entity is matched against (`id`, `to` are too generic).
MIN_STEM = 3


def _argument_entities(op: Operation, entities: set[str]) -> list[str]:
    found: list[str] = []
    for prop in op.input_schema.get("properties") or {}:
        ws = words(prop)
        if len(ws) < 2 or ws[-1] not in IDENTIFIER_WORDS:
            continue
        stem = "_".join([*ws[:-2], singular(ws[-2])])
        if ws[-1] in ("name", "names") and stem in SCHEMA_WORDS:
            continue  # (Superset's `related/{column_name}`: a field of the dashboard)
        if stem in entities and stem != op.entity:
            found.append(stem)
    return found


def _parent_entity(entity: str, entities: set[str], spelled: dict[str, str]) -> str | None:
    twin = spelled.get(entity.replace("_", ""), entity)
    if twin != entity:  # the same name spelled in other words (`delivery_stat`, `deliverystat`)
        return twin
    parts = entity.split("_")
    candidates = []
    for k in range(1, len(parts)):
        for stem in ("_".join(parts[:k]), "_".join(parts[k:])):
            if stem in entities and len(stem) >= MIN_STEM:
                candidates.append(stem)
    return max(candidates, key=lambda s: (len(s), s)) if candidates else None


def relate(ops: Sequence[Operation]) -> list[Operation]:
    """`ops` with `consumes` extended by the api-level relations above (see the module docstring)."""
    entities: dict[str, set[str]] = {}
    for op in ops:  # every entity an operation of the api acts on, consumes or produces
        entities.setdefault(op.api, set()).update((op.entity, *op.consumes, *op.produces))
    spellings = {  # per api: an entity's letters -> the first of its spellings
        api: {e.replace("_", ""): e for e in sorted(known, reverse=True)} for api, known in entities.items()
    }
    related = []
    for op in ops:
        known = entities[op.api]
        extra = _argument_entities(op, known)
        parent = _parent_entity(op.entity, known, spellings[op.api])
        if parent is not None:
            extra.append(parent)
        consumes = list(dict.fromkeys([*op.consumes, *extra]))
        related.append(op if consumes == op.consumes else op.model_copy(update={"consumes": consumes}))
    return related
