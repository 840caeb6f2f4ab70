"""Each operation of a domain compiled into a `simulator.builders` tool, or the reason why not.

    compile_tools(schema: DomainSchema) -> Toolset(tools, not_compiled)

Reads become `get` (by key) or `list` (a filter per argument); creates, updates and deletes the
matching builder steps; state verbs and reference changes set the row's state or reference;
other actions a status transition or an `action_log` row. The input schema keeps the spec's
arguments; an operation that cannot be compiled is in `not_compiled` with the reason.
Design notes: docs/design/toolgen.md.
Over 500 lines: one compiler, `_Compiler`, whose steps share the schema's bindings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from simulator.builders import (
    NOW,
    Expr,
    ExprLike,
    F,
    Filter,
    Step,
    Template,
    arg,
    create,
    delete,
    get,
    list_,
    obj,
    ops,
    ref,
    require,
    return_,
    template,
    update,
)
from simulator.format.spec import ANSWER_TOOL, NAME
from toolgen.model import Operation, SkippedOperation
from toolgen.naming import words
from toolgen.pure import NOT_MODELLED, NOTHING

from .effects import FINAL_STATES, RESTORING, STATE_VERBS, Repoint, StateChange, enum_value
from .inputs import input_schema
from .schema import Binding, ColumnPlan, DomainSchema, TablePlan, openapi_path

__all__ = [
    "EVENTS_TABLE",
    "FINAL_STATES",
    "ToolPlan",
    "Toolset",
    "compile_tools",
    "input_schema",
    "target_state",
]

#: the table that records actions on records without a status to change
EVENTS_TABLE = "action_log"
_SEGMENT = re.compile(r"^[A-Za-z0-9_-]+$")
_DELETED = ("deleted", "removed", "archived", "trashed", "inactive")
_CREATED = frozenset(("created", "creation", "inserted", "added", "registered"))
_UPDATED = frozenset(("updated", "modified", "changed", "edited"))


@dataclass
class ToolPlan:
    """One compiled tool, ready for `DomainBuilder.tool`."""

    op_id: str
    name: str
    description: str
    kind: str
    input_schema: dict[str, Any]
    steps: list[Step]
    compiled_as: str
    #: the state it sets or the reference it changes (compiled as `status` / `reference`)
    effect: StateChange | Repoint | None = None


@dataclass
class Toolset:
    """The tools of a domain and the operations that could not be compiled (with why)."""

    tools: list[ToolPlan] = field(default_factory=list)
    not_compiled: list[SkippedOperation] = field(default_factory=list)


class NotCompilable(Exception):
    """An operation that cannot be a tool; the message says why."""


def _readable(name: str) -> bool:
    return bool(_SEGMENT.match(name))


def _noun(table: TablePlan) -> str:
    return table.entity.replace("_", " ")


def _hole(text: str, name: str, tail: str = ".") -> Template:
    """`text {args.name}.` when the argument can be spelled in a template, else `text` alone."""
    if _readable(name):
        return template(text, arg(name), tail)
    return template(text.rstrip() + tail)


def _tool_name(name: str, taken: set[str]) -> str:
    fixed = name if NAME.match(name) else "op_" + re.sub(r"[^A-Za-z0-9_-]", "_", name)
    fixed = fixed[:64]
    if fixed == ANSWER_TOOL:
        fixed = f"{fixed}_tool"
    base, n = fixed, 2
    while fixed in taken:
        fixed, n = f"{base[:60]}_{n}", n + 1
    taken.add(fixed)
    return fixed


def target_state(op: Operation, table: TablePlan) -> tuple[str, Any] | None:
    """(the verb, the status value it leads to) when the operation's verb names a value of the
    table's status enum (`cancel` → `cancelled`), else None."""
    status = table.status
    if status is None:
        return None
    info = openapi_path(op)
    verbs = ((info.verb,) if info is not None and info.verb else ()) + words(op.name)
    values = table.columns[status].enum or []
    if "undo" in verbs:  # `undoClose`: back to the state `close` leaves (open), never `closed`
        undone = next((w for w in verbs if w in STATE_VERBS and STATE_VERBS[w][1]), None)
        before = STATE_VERBS[undone][1][0] if undone is not None else None
        value = next((v for v in values if isinstance(v, str) and "_".join(words(v)) == before), None)
        return None if value is None else ("undo", value)
    return enum_value(verbs, values)


def _by_role(bindings: Sequence[Binding], *roles: str) -> list[Binding]:
    return [b for b in bindings if b.role in roles and _readable(b.param)]


def _stamp(table: TablePlan, words_wanted: frozenset[str], given: Mapping[str, Any]) -> dict[str, ExprLike]:
    """Timestamps the clock sets: created_at on create, updated_at on update (never a given column)."""
    out: dict[str, ExprLike] = {}
    for name, col in table.columns.items():
        if col.type == "datetime" and name not in given and set(words(name)) & words_wanted:
            out[name] = NOW
    return out


class _Compiler:
    def __init__(self, schema: DomainSchema) -> None:
        self.schema = schema

    def compile(self, op: Operation, name: str) -> ToolPlan:
        bindings = self.schema.bindings[op.id]
        table = self.schema.table_of(op)
        keys = _by_role(bindings, "key")
        kind = op.kind
        fields = _by_role(bindings, "field", "in")
        if kind == "update" and not [f for f in fields if f.role == "field"]:
            if not keys and not _by_role(bindings, "parent"):
                # YouTube's `comments.update(part)`: no argument says which row, or what to change
                raise NotCompilable(
                    f"{NOT_MODELLED}: an update with no argument naming its record or a field"
                )
            kind = "action"
        effect = self.schema.effects.get(op.id) or self._spec_state(op, table, bindings, kind)
        if isinstance(effect, StateChange):
            steps, how, tool_kind = self.change_state(op, table, bindings, effect), "status", "write"
        elif isinstance(effect, Repoint):
            steps, how, tool_kind = self.repoint(op, table, bindings, effect), "reference", "write"
        elif kind == "read":
            required = set(op.input_schema.get("required") or [])
            if keys and keys[0].param in required:
                steps, how = self.get_one(op, table, bindings), "get"
            else:
                steps, how = self.search(op, table, bindings), "list"
            tool_kind = "read"
        elif kind == "create":
            steps, how, tool_kind = self.insert(table, bindings), "create", "write"
        elif kind == "update":
            steps, how, tool_kind = self.patch(op, table, bindings), "update", "write"
        elif kind == "delete":
            steps, how, tool_kind = self.remove(op, table, bindings)
        else:
            steps, how, tool_kind = self.act(op, table, bindings)
        return ToolPlan(
            op.id,
            name,
            op.description,
            tool_kind,
            input_schema(op, self.schema.key_inputs.get(op.id)),
            steps,
            how,
            effect,
        )

    def _spec_state(
        self, op: Operation, table: TablePlan, bindings: Sequence[Binding], kind: str
    ) -> StateChange | None:
        """The spec's status value an action's verb names (`ship` → `shipped`), or a delete's
        deleted-like value: a state change; None otherwise."""
        status = table.status
        if status is None or not _by_role(bindings, "key") or kind not in ("action", "delete"):
            return None
        values = table.columns[status].enum or []
        if kind == "delete":
            gone = next((v for w in _DELETED for v in values if isinstance(v, str) and v.lower() == w), None)
            return None if gone is None else self._state(table, "delete", gone)
        state = target_state(op, table)
        return None if state is None else self._state(table, *state)

    @staticmethod
    def _state(table: TablePlan, verb: str, target: Any) -> StateChange:
        status = table.status or ""
        finals = tuple(
            v
            for v in table.columns[status].enum or []
            if isinstance(v, str) and v.lower() in FINAL_STATES and v != target
        )
        return StateChange(verb, status, target, (), () if verb in RESTORING else finals)

    # -- reads ---------------------------------------------------------------------------------
    def _lookup(self, op: Operation, table: TablePlan, bindings: Sequence[Binding], as_: str | None) -> Step:
        keys = _by_role(bindings, "key")
        parents = _by_role(bindings, "parent")
        if not keys:  # the one record its parents name, or the table's only (first) record
            where = [F(p.column or "").eq(arg(p.param), skip_if_null=False) for p in parents]
            where = where or [F(table.primary_key).is_not_null()]  # every row: the first is the one
            error = template(f"No {_noun(table)} found" + (" for these arguments." if parents else "."))
            return get(table.name, where=where, order_by=[table.primary_key], error=error, as_=as_)
        key = keys[0]
        where = [F(table.primary_key).eq(arg(key.param), skip_if_null=False)]
        where += [F(p.column or "").eq(arg(p.param)) for p in parents]
        error = _hole(f"No {_noun(table)} with {key.param} ", key.param)
        return get(table.name, where=where, error=error, as_=as_)

    def get_one(self, op: Operation, table: TablePlan, bindings: Sequence[Binding]) -> list[Step]:
        return [self._lookup(op, table, bindings, None)]

    def _filters(self, table: TablePlan, bindings: Sequence[Binding]) -> list[Filter]:
        where: list[Filter] = []
        for b in bindings:
            if not _readable(b.param) or b.column is None:
                continue
            col = table.columns[b.column]
            value = arg(b.param)
            if b.role in ("parent", "key"):
                where.append(F(b.column).eq(value))
            elif b.role == "search":
                where.append(F(b.column).icontains(value))
            elif b.role == "min":
                where.append(F(b.column).ge(value))
            elif b.role == "max":
                where.append(F(b.column).le(value))
            elif b.role == "in":
                where.append(F(b.column).in_(value))
            elif b.role == "field":
                ws = words(b.param)
                if (
                    col.type == "string"
                    and not col.enum
                    and ws
                    and ws[-1] in ("name", "title", "description")
                ):
                    where.append(F(b.column).icontains(value))
                else:
                    where.append(F(b.column).eq(value))
        return where

    def search(self, op: Operation, table: TablePlan, bindings: Sequence[Binding]) -> list[Step]:
        where = self._filters(table, bindings)
        limit_b = _by_role(bindings, "limit")
        offset_b = _by_role(bindings, "offset")
        page_b = _by_role(bindings, "page")
        limit: ExprLike = arg(limit_b[0].param) if limit_b else None
        offset: ExprLike = arg(offset_b[0].param) if offset_b else None
        if page_b and offset is None:
            props = op.input_schema.get("properties") or {}
            size = _int_default(props.get(limit_b[0].param) if limit_b else None, 20)
            limit = ops.coalesce(limit, size) if limit is not None else size
            first = 0 if _int_default(props.get(page_b[0].param), 1) == 0 else 1
            page = arg(page_b[0].param)
            offset = ops.if_(ops.is_null(page), 0, ops.mul(ops.max(ops.sub(page, first), 0), limit))
        orders = self._sort_choices(op, table, bindings)
        if not orders:
            return [list_(table.name, where=where, order_by=[table.primary_key], limit=limit, offset=offset)]
        sort_param, choices = orders
        steps: list[Step] = []
        names: list[Expr] = []
        for i, (value, order) in enumerate(choices):
            steps.append(
                list_(
                    table.name,
                    where=where,
                    order_by=order,
                    limit=limit,
                    offset=offset,
                    as_=f"sorted_{i}",
                    when=ops.eq(arg(sort_param), value),
                )
            )
            names.append(ref(f"sorted_{i}"))
        chosen = [value for value, _ in choices]
        steps.append(
            list_(
                table.name,
                where=where,
                order_by=[table.primary_key],
                limit=limit,
                offset=offset,
                as_="unsorted",
                when=ops.not_in(ops.coalesce(arg(sort_param), ""), chosen),
            )
        )
        steps.append(return_(ops.coalesce(*names, ref("unsorted"))))
        return steps

    def _sort_choices(
        self, op: Operation, table: TablePlan, bindings: Sequence[Binding]
    ) -> tuple[str, list[tuple[str, list[str]]]] | None:
        props = op.input_schema.get("properties") or {}
        for b in _by_role(bindings, "sort"):
            enum = (props.get(b.param) or {}).get("enum")
            if not isinstance(enum, list):
                continue
            choices: list[tuple[str, list[str]]] = []
            for value in enum:
                if not isinstance(value, str):
                    continue
                descending = value.startswith("-") or value.lower().endswith(("_desc", " desc", ":desc"))
                base = re.sub(r"([_ :](asc|desc))$", "", value.lstrip("+-"), flags=re.IGNORECASE)
                column = table.column_for(base)
                if column is not None and table.columns[column].type != "json":
                    order = [f"-{column}" if descending else column]
                    if column != table.primary_key:
                        order.append(table.primary_key)
                    choices.append((value, order))
            if choices:
                return b.param, choices[:12]
        return None

    # -- writes --------------------------------------------------------------------------------
    def _values(self, table: TablePlan, bindings: Sequence[Binding]) -> dict[str, ExprLike]:
        values: dict[str, ExprLike] = {}
        for b in _by_role(bindings, "key", "parent", "field"):
            if b.column is not None and b.column not in values and b.table == table.name:
                default = table.columns[b.column].default
                values[b.column] = arg(b.param) if default is None else ops.coalesce(arg(b.param), default)
        return values

    def insert(self, table: TablePlan, bindings: Sequence[Binding]) -> list[Step]:
        values = self._values(table, bindings)
        values.update(_stamp(table, _CREATED | _UPDATED, values))
        return [create(table.name, values)]

    def patch(self, op: Operation, table: TablePlan, bindings: Sequence[Binding]) -> list[Step]:
        changes: dict[str, ExprLike] = {}
        for b in _by_role(bindings, "field"):
            if b.column is not None and b.column not in changes:
                changes[b.column] = arg(b.param)
        found = self._lookup(op, table, bindings, "current")
        key = {table.primary_key: ref("current", table.primary_key)}
        stamp = _stamp(table, _UPDATED, changes)
        return [found, update(table.name, stamp or None, patch=changes, key=key)]

    def remove(
        self, op: Operation, table: TablePlan, bindings: Sequence[Binding]
    ) -> tuple[list[Step], str, str]:
        keys = _by_role(bindings, "key")
        if keys:
            found = self._lookup(op, table, bindings, "current")
            return (
                [found, delete(table.name, key={table.primary_key: ref("current", table.primary_key)})],
                "delete",
                "write",
            )
        selectors = [b for b in bindings if b.role in ("parent", "field", "in")]
        if not selectors:  # names nothing: the table's one record (a singleton such as a settings object)
            found = self._lookup(op, table, bindings, "current")
            return (
                [found, delete(table.name, key={table.primary_key: ref("current", table.primary_key)})],
                "delete",
                "write",
            )
        if not _by_role(selectors, "parent", "field", "in"):
            raise NotCompilable(f"a delete of {table.name} whose arguments cannot be read as filters")
        # every record matching the arguments given (a collection delete: all when none is given)
        return [delete(table.name, where=self._filters(table, selectors))], "delete", "write"

    def change_state(
        self, op: Operation, table: TablePlan, bindings: Sequence[Binding], change: StateChange
    ) -> list[Step]:
        """The row found, the change refused where it makes no sense (already there; a final
        state; not a state the verb leaves), then its state set (and any field given)."""
        column, verb, value = change.column, change.verb, change.value
        key = _by_role(bindings, "key")[0]
        current = ref("current", column)
        noun = _noun(table)
        said = STATE_VERBS[verb][0] if isinstance(value, bool) and verb in STATE_VERBS else str(value)
        has = f" already has {change.aspect} {said}" if change.aspect else f" is already {said}"
        steps = [self._lookup(op, table, bindings, "current")]
        steps.append(
            require(ops.ne(current, value), _hole(f"The {noun} ", key.param, f"{has}: nothing to {verb}."))
        )
        named = _readable(table.primary_key) and _readable(column)
        if change.sources:
            wanted = " or ".join(str(v) for v in change.sources)
            steps.append(
                require(
                    ops.in_(current, list(change.sources)),
                    template(
                        f"Cannot {verb} {noun} ",
                        ref("current", table.primary_key),
                        ": it is ",
                        current,
                        f", not {wanted}.",
                    )
                    if named
                    else template(f"Cannot {verb} this {noun}: it is not {wanted}."),
                )
            )
        elif change.finals:
            steps.append(
                require(
                    ops.not_in(current, list(change.finals)),
                    template(
                        f"Cannot {verb} {noun} ",
                        ref("current", table.primary_key),
                        ": it is ",
                        current,
                        f", a final state ({', '.join(str(v) for v in change.finals)}).",
                    )
                    if named
                    else template(f"Cannot {verb} this {noun}: it is in a final state."),
                )
            )
        changes: dict[str, ExprLike] = {}
        for b in _by_role(bindings, "field"):
            if b.column is not None and b.column != column and b.column not in changes:
                changes[b.column] = arg(b.param)
        sets: dict[str, ExprLike] = {column: value, **_stamp(table, _UPDATED, changes)}
        key_map = {table.primary_key: ref("current", table.primary_key)}
        steps.append(update(table.name, sets, patch=changes or None, key=key_map))
        return steps

    def repoint(
        self, op: Operation, table: TablePlan, bindings: Sequence[Binding], point: Repoint
    ) -> list[Step]:
        """The row found (by its key and the ids that locate it), the row it is to point at
        found, then the reference set (and any field given)."""
        locate = [b for b in bindings if not (b.role == "parent" and b.param == point.param)]
        other = self.schema.tables[point.table]
        steps = [
            self._lookup(op, table, locate, "current"),
            get(
                other.name,
                where=[F(other.primary_key).eq(arg(point.param), skip_if_null=False)],
                error=_hole(f"No {_noun(other)} with {point.param} ", point.param),
                as_="pointed",
            ),
        ]
        changes: dict[str, ExprLike] = {}
        for b in _by_role(bindings, "field"):
            if b.column is not None and b.column != point.column and b.column not in changes:
                changes[b.column] = arg(b.param)
        sets: dict[str, ExprLike] = {point.column: arg(point.param), **_stamp(table, _UPDATED, changes)}
        key_map = {table.primary_key: ref("current", table.primary_key)}
        steps.append(update(table.name, sets, patch=changes or None, key=key_map))
        return steps

    def act(
        self, op: Operation, table: TablePlan, bindings: Sequence[Binding]
    ) -> tuple[list[Step], str, str]:
        if _by_role(bindings, "key"):
            return self.log_event(op, table, bindings), "event", "write"
        return self.insert(table, bindings), "create", "write"

    def log_event(self, op: Operation, table: TablePlan, bindings: Sequence[Binding]) -> list[Step]:
        events = event_table(self.schema)
        column = event_column(events, table)
        found = self._lookup(op, table, bindings, "current")
        details = {b.param: arg(b.param) for b in bindings if b.role not in ("key",) and _readable(b.param)}
        values: dict[str, ExprLike] = {
            "action": self.schema.tool_names.get(op.id, op.name),
            column: ref("current", table.primary_key),
            "details": ops.compact(obj(details)) if details else None,
            "created_at": NOW,
        }
        return [found, create(EVENTS_TABLE, values)]


def _int_default(schema: Any, fallback: int) -> int:
    if isinstance(schema, dict):
        value = schema.get("default")
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 1000:
            return value
        if isinstance(value, str) and value.isdigit() and int(value) <= 1000:
            return int(value)
    return fallback


def event_table(schema: DomainSchema) -> TablePlan:
    """The domain's `action_log` table (made on first use)."""
    table = schema.tables.get(EVENTS_TABLE)
    if table is None:
        table = TablePlan(
            EVENTS_TABLE,
            "action_log",
            "log_id",
            {
                "log_id": ColumnPlan(
                    "log_id", "string", nullable=False, description="the entry's id", hint={"type": "string"}
                ),
                "action": ColumnPlan(
                    "action",
                    "string",
                    nullable=False,
                    description="the tool that acted",
                    hint={"type": "string"},
                ),
                "details": ColumnPlan(
                    "details", "json", description="the call's other arguments", hint={"type": "object"}
                ),
                "created_at": ColumnPlan(
                    "created_at",
                    "datetime",
                    description="when it was done",
                    hint={"type": "string", "format": "date-time"},
                ),
            },
            description="What was done to which record, by which tool.",
        )
        schema.tables[EVENTS_TABLE] = table
    return table


def event_column(events: TablePlan, table: TablePlan) -> str:
    """The column of `action_log` that refers to a row of `table` (added on first use)."""
    wanted = f"{table.name}.{table.primary_key}"
    for name, col in events.columns.items():
        if col.references == wanted:
            return name
    name = f"{table.entity}_id"[:60]
    while any(c.lower() == name.lower() for c in events.columns):  # (SQLite ignores case)
        name += "_"
    key = table.columns[table.primary_key]
    events.columns[name] = ColumnPlan(
        name,
        key.type,
        references=wanted,
        description=f"the {_noun(table)} acted on",
        hint={
            "type": "integer" if key.type == "integer" else "string",
            "nullable": True,
            "x-references": wanted,
        },
    )
    return name


def compile_tools(schema: DomainSchema) -> Toolset:
    """A tool per operation of the domain (in the plan's order), or why it could not be one."""
    out = Toolset()
    taken: set[str] = set()
    for op_id, op in schema.operations.items():
        how = schema.tableless.get(op_id)
        if how is not None and how != NOTHING:
            out.not_compiled.append(SkippedOperation(id=op_id, reason=how))
            continue
        name = _tool_name(schema.tool_names.get(op_id, op.name), taken)
        if how == NOTHING:  # a scratchpad: it changes nothing and says nothing
            out.tools.append(
                ToolPlan(
                    op_id, name, op.description, "read", input_schema(op, None), [return_(None)], NOTHING
                )
            )
            continue
        try:
            out.tools.append(_Compiler(schema).compile(op, name))
        except NotCompilable as exc:
            taken.discard(name)
            out.not_compiled.append(SkippedOperation(id=op_id, reason=str(exc)))
    return out
