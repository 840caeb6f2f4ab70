"""Which operations of a domain's APIs share a table: an entity name two unrelated APIs share.

    ops = apart(ops)      # religion_history_info's `history` -> `religion_history`

Clustering joins APIs through a shared noun; Xero's invoice `history` and a quiz's religion
history are not one kind of record, two versions of one API's `album` are.
"""

from __future__ import annotations

from toolgen.entities import is_verb
from toolgen.model import Operation
from toolgen.naming import snake, words

from .columns import record_props

__all__ = ["apart"]


def apart(ops: list[Operation]) -> list[Operation]:
    """Operations of different APIs that share an entity name but not its fields (Xero's
    `history` of an invoice, a quiz's `religion_history_info`) each keep a table of their own:
    the API with the most operations on it keeps the name, another's becomes the word its
    operation names put before it (`religion history`); with no such word they stay together."""
    by_entity: dict[str, dict[str, list[Operation]]] = {}
    for op in ops:
        by_entity.setdefault(op.entity, {}).setdefault(op.api, []).append(op)
    renamed: dict[tuple[str, str], str] = {}
    taken = set(by_entity)
    others_words = {w for entity in by_entity for w in words(entity)}
    for entity, groups in by_entity.items():
        if len(groups) < 2:
            continue
        main, *others = sorted(groups, key=lambda api: (-len(groups[api]), api))
        fields = _fields(groups[main])
        for api in others:
            if len(fields & _fields(groups[api])) >= _SHARED_FIELDS:
                continue  # (two versions of one API: the same records)
            new = _qualified(entity, groups[api], taken, others_words)
            if new is not None:
                renamed[(api, entity)] = new
                taken.add(new)
    if not renamed:
        return ops
    return [
        op.model_copy(update={"entity": renamed[(op.api, op.entity)]})
        if (op.api, op.entity) in renamed
        else op
        for op in ops
    ]


#: fields two APIs' records of one name share when they are the same kind of record
_SHARED_FIELDS = 2
#: words a record's fields share with any other's: no sign that two records are alike
_ANY_RECORD = frozenset("id name type description created updated status key value url".split())


def _fields(ops: list[Operation]) -> set[str]:
    """The telling field names of the records (else the arguments) of `ops`."""
    out: set[str] = set()
    for op in ops:
        props = record_props(op.record_schema)[0] or (op.input_schema.get("properties") or {})
        out.update(snake(str(k)) for k in props)
    return {f for f in out if not _ANY_RECORD.issuperset(f.split("_"))}


def _qualified(entity: str, ops: list[Operation], taken: set[str], entity_words: set[str]) -> str | None:
    """`religion_history` for `religion_history_info` on `history`: the word an operation's name
    puts before the entity (no verb, no `specific`, no word of the domain's entities); None when
    no name qualifies it (the records stay in one table)."""
    ws = tuple(words(entity))
    for op in sorted(ops, key=lambda o: o.name):
        name = tuple(w.lower() for w in words(op.name))
        for i in range(1, len(name) - len(ws) + 1):
            before = name[i - 1]
            if name[i : i + len(ws)] != ws or not before.isalpha() or before in _NOT_QUALIFIERS:
                continue
            if not is_verb(before) and before not in entity_words:
                new = f"{before}_{entity}"
                if new not in taken:
                    return new
    return None


#: words before an entity in an operation's name that are no kind of it (`get_specific_user`)
_NOT_QUALIFIERS = frozenset(
    "all my the a an new by of for specific single given current recent random latest first last "
    "multiple other own public private default main full detailed info details".split()
)
