"""Relations between the entities of one api that one operation alone cannot see.

    relate(ops) -> ops   (copies; `consumes` extended, nothing else changed)

Normalization works one operation at a time: it knows `order_id` names an order, but not whether
`thingName` names an entity of the api or `global_table_settings` belongs to a `global_table`.
Knowing every entity of the api, this step adds to an operation's `consumes`:

- **identifier arguments**: an input property named an entity of the same api followed by an
  identifier word (`thingName`, `securityProfileArn`, `EmployerKey`, `GroupIdentifier`,
  `order_number`): the operation takes that entity's identifier. Only the api's entities are
  matched (those its operations act on, consume or produce).
- **sub-entities**: the entity's name extends another entity of the api by whole words, at the
  front or the back (`global_table_settings` → `global_table`, `relational_database_event` →
  `relational_database`, `debit_reversal` → `reversal`): the sub-entity holds the other's id.
  Only the longest such entity is taken, and only names of at least `MIN_STEM` characters. An
  entity spelled in other words (`deliverystat`, `delivery_stat`) is the same table.

Both are the issue's "an id one entity holds of another", read from names. The result keeps the
order of `ops`; the same input gives the same output.
"""

from __future__ import annotations

from collections.abc import Sequence

from .model import Operation
from .naming import singular, words

#: The words that make a property an identifier of the entity named before them.
IDENTIFIER_WORDS = frozenset(
    {"id", "ids", "name", "names", "arn", "arns", "key", "keys", "code", "uuid", "url", "slug"}
)
#: The shortest entity name a sub-entity is matched against (`id`, `to` are too generic).
MIN_STEM = 3


def _argument_entities(op: Operation, entities: set[str]) -> list[str]:
    found: list[str] = []
    for prop in op.input_schema.get("properties") or {}:
        ws = words(prop)
        if len(ws) < 2 or ws[-1] not in IDENTIFIER_WORDS:
            continue
        stem = "_".join([*ws[:-2], singular(ws[-2])])
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
