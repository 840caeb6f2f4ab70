"""What a write does to the row it names beyond its arguments: its verb's state, or a reference.

    found = retarget(ops, entity_of)                    # the row each operation changes
    effects = decide(tables, by_entity, ops, bindings, found, add_column)

A state verb (`suspend`, `cancel`) sets a state of the row it changes; `change_plan` points it at
another row. An operation changes the row whose id it takes (state verbs, `change`, `switch` and
`set` have rules of their own), or the record a field names (`update_reservation_flights`).
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolgen.model import Operation
from toolgen.naming import singular, words
from toolgen.pure import path_params, verb_of

if TYPE_CHECKING:
    from .schema import Binding, TablePlan

__all__ = [
    "FINAL_STATES",
    "RESTORING",
    "STATE_VERBS",
    "Repoint",
    "Retargeted",
    "StateChange",
    "decide",
    "enum_value",
    "retarget",
]

#: verb -> (the state it leads to, the states it leaves (empty: any but a final one), the state
#: records are usually in when the verb is all a table has)
STATE_VERBS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "suspend": ("suspended", ("active",), "active"),
    "unsuspend": ("active", ("suspended",), "active"),
    "resume": ("active", ("suspended", "paused"), "active"),
    "pause": ("paused", ("active",), "active"),
    "unpause": ("active", ("paused",), "active"),
    "activate": ("active", ("inactive", "pending"), "inactive"),
    "reactivate": ("active", ("suspended", "inactive"), "active"),
    "deactivate": ("inactive", ("active",), "active"),
    "enable": ("enabled", ("disabled",), "disabled"),
    "disable": ("disabled", ("enabled",), "enabled"),
    "archive": ("archived", ("active",), "active"),
    "unarchive": ("active", ("archived",), "active"),
    "lock": ("locked", ("unlocked",), "unlocked"),
    "unlock": ("unlocked", ("locked",), "unlocked"),
    "block": ("blocked", ("active",), "active"),
    "unblock": ("active", ("blocked",), "active"),
    "ban": ("banned", ("active",), "active"),
    "unban": ("active", ("banned",), "active"),
    "freeze": ("frozen", ("active",), "active"),
    "unfreeze": ("active", ("frozen",), "active"),
    "close": ("closed", ("open",), "open"),
    "reopen": ("open", ("closed",), "open"),
    "publish": ("published", ("draft",), "draft"),
    "unpublish": ("draft", ("published",), "draft"),
    "approve": ("approved", ("pending",), "pending"),
    "reject": ("rejected", ("pending",), "pending"),
    "decline": ("declined", ("pending",), "pending"),
    "deny": ("denied", ("pending",), "pending"),
    "confirm": ("confirmed", ("pending",), "pending"),
    "hide": ("hidden", ("visible",), "visible"),
    "unhide": ("visible", ("hidden",), "visible"),
    "cancel": ("cancelled", (), "active"),
    "terminate": ("terminated", (), "active"),
    "revoke": ("revoked", (), "active"),
    "reinstate": ("active", (), "active"),
}
#: status values a record does not leave (but by a restoring verb such as `reopen`)
FINAL_STATES = frozenset(
    "cancelled canceled deleted closed completed complete delivered refunded rejected voided archived expired "
    "failed done finished declined terminated removed revoked denied".split()
)
#: verbs that bring a record back from a final state
RESTORING = frozenset(
    "reopen restore unarchive undelete reactivate recover resume reinstate unlock unsuspend unfreeze unban "
    "unblock unhide unpause undo".split()
)
#: the state's other spellings a spec's enum may use
_SPELLINGS: dict[str, tuple[str, ...]] = {
    "cancelled": ("canceled",),
    "active": ("activated",),
    "inactive": ("deactivated",),
    "draft": ("unpublished",),
    "open": ("opened", "reopened"),
}
#: per verb, what it leads to in enums the spec declares (first match wins)
_IRREGULAR = {
    "send": ("sent",),
    "pay": ("paid",),
    "resume": ("active", "running", "resumed"),
    "deactivate": ("inactive", "deactivated"),
    "unpublish": ("unpublished", "draft"),
    "unarchive": ("active",),
    "reopen": ("open", "reopened"),
    "restore": ("active", "restored"),
    "reactivate": ("active",),
    "open": ("open", "opened"),
    "begin": ("started", "in_progress", "running"),
    "run": ("running",),
    "finish": ("finished", "completed", "done"),
    "hold": ("on_hold", "held"),
    "buy": ("bought", "purchased"),
    "unsuspend": ("active",),
    "unfreeze": ("active",),
    "unban": ("active",),
    "unblock": ("active", "unblocked"),
    "unhide": ("visible",),
    "reinstate": ("active", "reinstated"),
}
#: the other state of a two-state flag (`disabled` is `enabled: false`)
_OPPOSITE = {
    "disabled": "enabled",
    "unlocked": "locked",
    "inactive": "active",
    "visible": "hidden",
    "draft": "published",
    "unpublished": "published",
}
#: `change_plan(line_id, plan_id)`: the noun is what the row is pointed at
_REPOINT_VERBS = frozenset("change switch swap set upgrade downgrade".split())
#: `assign_ticket(ticket_id, agent_id)`: the noun is the row, pointed at what its other ids name
MOVE_VERBS = frozenset("assign reassign move transfer relocate".split())
_QUOTED = re.compile(r"""['"`]([A-Za-z][A-Za-z0-9_ -]{0,30})['"`]""")


@dataclass(frozen=True)
class StateChange:
    """A state verb's effect: `column` of the row becomes `value`."""

    verb: str
    column: str
    value: Any
    #: states the verb may leave (empty: any but the value and a final one)
    sources: tuple[Any, ...] = ()
    #: states no verb but a restoring one leaves
    finals: tuple[Any, ...] = ()
    #: the part of the row whose state it is (`roaming`), "" for the row itself
    aspect: str = ""


@dataclass(frozen=True)
class Repoint:
    """A reference change: `column` of the row becomes the key `param` gives, a row of `table`."""

    param: str
    column: str
    table: str


@dataclass
class Retargeted:
    """The operations with their targets, and what was learnt on the way."""

    ops: list[Operation]
    #: op id -> the aspect of the row a state verb changes (`roaming`)
    aspects: dict[str, str] = field(default_factory=dict)
    #: op id -> the argument naming the row it points its target at
    repoints: dict[str, str] = field(default_factory=dict)


# -- targets ---------------------------------------------------------------------------------------


def retarget(ops: Sequence[Operation], entity_of: Callable[[Operation, str], str | None]) -> Retargeted:
    """Each operation acting on the row it changes (see the module docstring); `entity_of(op,
    argument)` is the entity whose key an argument carries, or None."""
    out = Retargeted([])
    for op in ops:
        props = op.input_schema.get("properties") or {}
        required = [p for p in op.input_schema.get("required") or [] if p in props]
        ids = [
            (p, e)
            for p in required
            if isinstance(props.get(p), dict)
            and props[p].get("type") not in ("array", "object")
            and (e := entity_of(op, p))
        ]
        verb = verb_of(op)
        own = [p for p, e in ids if e == op.entity]
        others = [(p, e) for p, e in ids if e != op.entity]
        if op.kind in ("read", "create", "delete") or not others:
            out.ops.append(op)
            continue
        if verb in STATE_VERBS and not own and not any(entity_of(op, p) == op.entity for p in props):
            out.aspects[op.id] = op.entity
            out.ops.append(op.model_copy(update={"entity": others[-1][1]}))
            continue
        if verb in _REPOINT_VERBS and own and ids[0][1] != op.entity:
            earlier = [(p, e) for p, e in ids[: ids.index((own[0], op.entity))] if e != op.entity]
            if earlier:
                out.repoints[op.id] = own[0]
                out.ops.append(op.model_copy(update={"entity": earlier[-1][1]}))
                continue
        owner = _owner_of_field(op, others, props) if op.kind == "update" and not own else None
        out.ops.append(op if owner is None else op.model_copy(update={"entity": owner}))
    return out


def _owner_of_field(op: Operation, others: Sequence[tuple[str, str]], props: Mapping[str, Any]) -> str | None:
    """`update_reservation_flights(reservation_id, flights)`: the entity is a record's entity and
    a field the call sets (`flights`), so the call updates that record, not a table of its own."""
    for param, entity in others:
        tail = words(op.entity)[len(words(entity)) :]
        if words(op.entity)[: len(words(entity))] != words(entity) or not tail:
            continue
        last = singular(tail[-1])
        if any(a != param and words(a) and singular(words(a)[-1]) == last for a in props):
            return entity
    return None


# -- effects ---------------------------------------------------------------------------------------


def enum_value(verbs: Sequence[str], values: Sequence[Any]) -> tuple[str, Any] | None:
    """(the verb, the value of `values` it leads to) for the first of `verbs` that names one
    (`cancel` → `cancelled`, `resume` → `active`), else None."""
    lowered = {v: "_".join(words(v)) for v in values if isinstance(v, str)}
    for verb in verbs:
        wanted = [*_IRREGULAR.get(verb, ())]
        if verb in STATE_VERBS:
            state = STATE_VERBS[verb][0]
            wanted += [state, *_SPELLINGS.get(state, ())]
        for want in wanted:
            for value, low in lowered.items():
                if low == want:
                    return verb, value
        stem = verb[:-1] if verb.endswith("e") and len(verb) > 4 else verb
        if len(stem) < 3:
            continue
        for value, low in lowered.items():
            first = low.split("_")[0] if low else ""
            if first.startswith(stem) and first not in ("in", "un", "not"):
                return verb, value
    return None


def _spec_states(table: TablePlan, column: str) -> list[Any] | None:
    """A state column's values as the spec gives them: its enum, or the values its description quotes."""
    col = table.columns[column]
    if col.enum:
        return list(col.enum)
    quoted = list(dict.fromkeys(m.strip() for m in _QUOTED.findall(col.description or "")))
    return quoted if len(quoted) >= 2 else None


def _flag(
    table: TablePlan, aspect: tuple[str, ...], state: str, leaves: tuple[str, ...] = ()
) -> tuple[str, bool] | None:
    """A boolean column that holds the state (`roaming_enabled`, `is_locked`: true), its opposite
    (`enabled` for `disabled`) or a state the verb leaves (`archived` for `unarchive`): false."""
    wanted = [(state, True), (_OPPOSITE.get(state, ""), False), *((s, False) for s in leaves[:1])]
    for name_word, value in wanted:
        if not name_word:
            continue
        for name, col in table.columns.items():
            if col.type == "boolean" and words(name) in ((*aspect, name_word), ("is", *aspect, name_word)):
                return name, value
    return None


@dataclass
class _Slot:
    """A state column the effects of several verbs share (to be made, or the spec's)."""

    table: TablePlan
    column: str
    flag: bool
    made: bool  # added (or given states) here
    aspect: tuple[str, ...] = ()
    verbs: list[tuple[str, str]] = field(default_factory=list)  # (op id, verb)
    states: list[Any] = field(default_factory=list)


def decide(
    tables: Mapping[str, TablePlan],
    by_entity: Mapping[str, str],
    ops: Sequence[Operation],
    bindings: Mapping[str, list[Binding]],
    found: Retargeted,
    add_column: Callable[[TablePlan, str, Mapping[str, Any]], str],
) -> dict[str, StateChange | Repoint]:
    """Each write's effect on its row, by op id (columns and states added to `tables` as needed)."""
    effects: dict[str, StateChange | Repoint] = {}
    slots: dict[tuple[str, str], _Slot] = {}
    for op in ops:
        binds = bindings[op.id]
        keyed = any(b.role == "key" for b in binds)
        fields = [b for b in binds if b.role in ("field", "in")]
        if not keyed or op.kind not in ("action", "update"):
            continue
        table = tables[by_entity[op.entity]]
        verb = verb_of(op)
        if op.kind == "action" and verb in STATE_VERBS:
            _slot(slots, table, op, verb, found.aspects.get(op.id, ""))
            continue
        if fields and op.kind == "update":
            continue
        point = _repoint(op, table, binds, found.repoints.get(op.id), verb, tables)
        if point is not None:
            effects[op.id] = point
    for slot in slots.values():
        _settle(slot, add_column)
        for op_id, verb in slot.verbs:
            change = _change(slot, verb)
            if change is not None:
                effects[op_id] = change
    return effects


def _slot(
    slots: dict[tuple[str, str], _Slot], table: TablePlan, op: Operation, verb: str, aspect: str
) -> None:
    """The state column `verb` changes on `table` (the spec's, or one to be made), with `verb` in it."""
    state = STATE_VERBS[verb][0]
    aspect_words = words(aspect) if aspect and aspect != table.entity else ()
    prefix = "_".join(aspect_words)
    flagged = _flag(table, aspect_words, state, STATE_VERBS[verb][1])
    key: tuple[str, str] | None = None
    if flagged is not None:
        key = (table.name, flagged[0])
        slots.setdefault(key, _Slot(table, flagged[0], True, False, aspect_words))
    if key is None:
        wanted = (f"{prefix}_status", f"{prefix}_state") if prefix else ("status", "state")
        for name, col in table.columns.items():
            if "_".join(words(name)) in wanted and col.type == "string":
                key = (table.name, name)
                slots.setdefault(key, _Slot(table, name, False, not _spec_states(table, name), aspect_words))
                break
    if key is None and not prefix and table.status is not None:  # the spec's `order_status` enum
        key = (table.name, table.status)
        slots.setdefault(key, _Slot(table, table.status, False, False))
    if key is None:
        flag = bool(prefix) and verb in ("enable", "disable")
        kind = "boolean" if flag else "string"
        names = (
            [f"{prefix}_enabled"]
            if flag
            else ([f"{prefix}_status", f"{prefix}_state"] if prefix else ["status", "state"])
        )
        # a name the spec gives a column of another type (an integer `status`) is not the state's
        free = [n for n in names if n not in table.columns or table.columns[n].type == kind]
        name = free[0] if free else f"{names[-1]}_{len(table.columns)}"
        key = (table.name, name)
        slots.setdefault(key, _Slot(table, name, flag, True, aspect_words))
    slots[key].verbs.append((op.id, verb))


def _settle(slot: _Slot, add_column: Callable[[TablePlan, str, Mapping[str, Any]], str]) -> None:
    """The slot's states: the spec's, else made from its verbs (and its column added or given them)."""
    table = slot.table
    if slot.flag:
        slot.states = [True, False]
        if slot.column not in table.columns:
            slot.column = add_column(table, slot.column, {"type": "boolean", "default": False})
            table.columns[slot.column].state = True
        return
    if not slot.made:
        slot.states = _spec_states(table, slot.column) or []
        col = table.columns[slot.column]
        if not col.enum and slot.states:  # the values its description quotes: the column's enum
            col.enum, col.state = list(slot.states), True
        return
    verbs = [v for _, v in slot.verbs]
    states = [STATE_VERBS[v][2] for v in verbs] + [STATE_VERBS[v][0] for v in verbs]
    for v in verbs:
        sources = STATE_VERBS[v][1]
        if sources and not set(sources) & set(states):
            states.append(sources[0])
    states = list(dict.fromkeys(states))
    usual = Counter(STATE_VERBS[v][2] for v in verbs).most_common(1)[0][0]
    slot.states = states
    hint = {"type": "string", "enum": states, "default": usual}
    if slot.column not in table.columns:
        slot.column = add_column(table, slot.column, hint)
    col = table.columns[slot.column]
    col.enum, col.default, col.state = list(states), usual, True
    col.hint = {**col.hint, **hint}
    if not col.description:
        col.description = "its state: " + ", ".join(states)


def _change(slot: _Slot, verb: str) -> StateChange | None:
    state, sources, _ = STATE_VERBS[verb]
    aspect = " ".join(slot.aspect)
    if slot.flag:
        found = _flag(slot.table, slot.aspect, state, sources)
        value = found[1] if found is not None else state == "enabled"
        return StateChange(verb, slot.column, value, aspect=aspect)
    matched = enum_value((verb,), slot.states)
    if matched is None:
        return None  # the spec's states lack it: the verb changes nothing there
    value = matched[1]
    finals = tuple(
        s for s in slot.states if isinstance(s, str) and "_".join(words(s)) in FINAL_STATES and s != value
    )
    leaves: tuple[Any, ...] = ()
    if sources and (slot.made or verb in RESTORING):
        leaves = tuple(s for s in slot.states if "_".join(words(str(s))) in sources and s != value)
        if len(leaves) == len([s for s in slot.states if s != value]):
            leaves = ()  # every other state: nothing to refuse but the value itself
    return StateChange(verb, slot.column, value, leaves, () if verb in RESTORING else finals, aspect)


def _repoint(
    op: Operation,
    table: TablePlan,
    binds: Sequence[Binding],
    named: str | None,
    verb: str,
    tables: Mapping[str, TablePlan],
) -> Repoint | None:
    """The reference a write changes: the argument `retarget` found, else (an update, or a moving
    verb) the last required id argument of another row that is not path scope."""
    required = set(op.input_schema.get("required") or [])
    parents = [b for b in binds if b.role == "parent" and b.param in required and b.column]
    if named is None:
        if op.kind != "update" and verb not in MOVE_VERBS:
            return None
        scope = path_params(op)
        movable = [b for b in parents if b.param not in scope]
        if not movable:
            return None
        named = movable[-1].param
    chosen = next((b for b in parents if b.param == named), None)
    if chosen is None or chosen.column is None:
        return None
    target = table.columns[chosen.column].references
    if not target or target.split(".")[0] not in tables:
        return None
    return Repoint(chosen.param, chosen.column, target.split(".")[0])
