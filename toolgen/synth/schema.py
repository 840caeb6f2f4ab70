"""The tables of one planned domain, inferred from its operations, and what each argument means.

    infer_schema(domain: PlannedDomain, operations: {op id: Operation}) -> DomainSchema

One table per entity, its key and columns from the record schema and the arguments; foreign keys
from id arguments; each argument bound to a role (key, parent, field, search, range end, paging,
sort, or an option that changes no data: `argroles` tells controls, never columns); the effects of
writes (`effects`) and the schema fragment behind each column, for the seed.
Design notes: docs/design/toolgen.md.
Over 500 lines: tables, keys and bindings are inferred in one pass over one builder's state.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from simulator.builders import counter_ids
from simulator.plan.tables import value_problem
from toolgen.entities import PathInfo, analyse_path, id_entity
from toolgen.model import Operation, PlannedDomain
from toolgen.naming import singular, snake, words
from toolgen.pure import tableless, verb_of
from toolgen.relate import IDENTIFIER_WORDS, SCHEMA_WORDS

from .apart import apart
from .argroles import (
    OPENAPI,
    QUERY_LANGUAGE,
    SEARCH,
    Role,
    as_text,
    control_role,
    listed_values,
    paging_field,
    range_role,
    request_only,
)
from .checks import STATE_WORDS
from .columns import (
    JSON_TYPE,
    column_type,
    fits,
    flat,
    identifier,
    merge_type,
    record_props,
    table_name,
    typed_hint,
    value_type,
)
from .effects import MOVE_VERBS, Repoint, StateChange, decide, retarget
from .inputs import clean_schema
from .keys import KEY_START, key_prefix, key_samples, key_shape, relaxed
from .lexicon import named_as

__all__ = [
    "Binding",
    "ColumnPlan",
    "DomainSchema",
    "Role",
    "TablePlan",
    "column_type",
    "infer_schema",
    "table_name",
]

_HANDLE = ("name", "title", "display_name", "full_name", "username", "email", "label", "subject", "summary")
_STATUS = frozenset(("status", "state"))
#: how a field's description says that only the server sets it
_SERVER_SET = re.compile(
    r"(?i)\b(cannot be (updated|changed|modified|set)|read[- ]only|output[- ]only|set by the server"
    r"|populated by the system)\b"
)
#: the kinds of operation whose answer is the record itself
_RECORDS = frozenset(("read", "create", "update"))
#: what a key column's id scheme decides (its hint keeps the scheme's shape instead of the record's)
_KEY_DECIDES = frozenset(("format", "pattern", "minLength", "maxLength"))

#: last words of a field a person names and asks about (`unit price`, `due date`, `home city`)
_PLAIN_HEADS = frozenset(
    "name title status state date day time year month price amount total balance cost fee "
    "fees rate tax percentage percent discount quantity count email phone address street city "
    "country zip postcode region description summary notes note comment message subject text "
    "content url website currency language category genre rating score duration size weight "
    "height width length capacity level priority stage color colour brand author owner location "
    "timezone deadline budget salary age birthday gender role department team label reason "
    "frequency unit sku nationality occupation company organization position grade nickname "
    "username bio seats stock population area temperature distance speed model plan tier points "
    "votes views likes followers number code symbol isbn director season episode platform "
    "elevation altitude latitude longitude depth volume pressure humidity rainfall visibility "
    "mileage revenue income profit sales margin interest album artist track runtime goals assists "
    "wins losses rank ranking origin destination cabin seat gate terminal airline departure "
    "arrival vendor supplier carrier warehouse species breed occupation hobby manufacturer "
    "industry headline caption instructions ingredients calories servings cuisine venue host "
    "sport league nickname surname website homepage country path folder directory handle".split()
)
#: last words of a field whose number codes name states or kinds (`message status: 3`)
_CODE_HEADS = STATE_WORDS | frozenset("reason method channel code source".split())
#: a field named by one of these words alone says nothing of what it holds (`count`, `value`)
_BARE = frozenset("count value number code result data info text".split())
#: first words of a flag's name (`show_title`, `is_private`, `use_content_as_indexable_text`),
#: or of a request's option (`for_username`, `on_behalf_of_content_owner`, `by_date`)
_FLAG_WORDS = frozenset(
    "show list is has use enable enabled disable disabled allow include can should hide auto "
    "for by on with since until always never new old this self".split()
)
#: words of a field only a machine reads (`auth session id hash`, `otp policy period`)
_MACHINE_WORDS = frozenset(
    "hash token secret otp ttl etag checksum sha sha256 md5 uuid guid sid arn nonce salt cursor "
    "offset schema metadata object uri urn mime encoding pixel ratio throttle flag flags bitmask "
    "crc pk fk idx modified updated created deleted changed synced deprecated".split()
)


@dataclass
class ColumnPlan:
    """One column: its type and options, and the JSON-Schema fragment it came from (the hint)."""

    name: str
    type: str
    nullable: bool = True
    enum: list[Any] | None = None
    default: Any = None
    references: str | None = None
    description: str | None = None
    hint: dict[str, Any] = field(default_factory=dict)
    required_by_record: bool = False
    #: a field of the record the API answers with (not only an argument some operation takes)
    recorded: bool = False
    #: a state an operation changes (`effects`): never null
    state: bool = False
    #: made up, no field of the API (for a free-text search to match, or the one column of a
    #: table the API gives no field of): no one names a row by it or asks for it
    searched: bool = False

    @property
    def server_set(self) -> bool:
        """Whether the spec says the server sets this field (`readOnly`, "Cannot be updated"):
        no request a person makes sets it."""
        return self.hint.get("readOnly") is True or bool(_SERVER_SET.search(self.description or ""))

    @property
    def machine(self) -> bool:
        """Whether only a machine reads this field: a word like `hash`, `ttl` or `object`, or a
        stamp (`created at`, `last modified`), or one the spec calls deprecated."""
        deprecated = (self.description or "").lstrip().lower().startswith("deprecated")
        return deprecated or bool(_MACHINE_WORDS.intersection(words(self.name)))

    @property
    def flag(self) -> bool:
        """Whether the field is named as a flag (`show_title`, `is_enabled`, `allow_cvas`): a
        person says what it does (`make it private`), not its name."""
        return (words(self.name) or [""])[0] in _FLAG_WORDS

    @property
    def plain(self) -> bool:
        """Whether a person asks about this field: not `machine`, at most three words and no
        flag's (`show title`), and its last word a thing people ask about (`due date`, `unit
        price`; not a bare `type` or `count`) or an email by its format."""
        ws = words(self.name)
        if (
            self.searched
            or not ws
            or self.machine
            or len(ws) > 3
            or self.flag
            or (len(ws) == 1 and ws[0] in _BARE)
            or self.coded
        ):
            return False  # (`access code lifespan user action`, `show title`: no one says those)
        return ws[-1] in _PLAIN_HEADS or self.hint.get("format") == "email"

    @property
    def coded(self) -> bool:
        """Whether the field holds a state or a kind as a number code (SIGNL4's `messageStatus:
        {enum: [0, 1, ..., 10]}`): a person knows the state by its word, never by its number."""
        ints = [v for v in self.enum or [] if isinstance(v, int) and not isinstance(v, bool)]
        ws = words(self.name)
        return len(ints) > 2 and len(ints) == len(self.enum or []) and bool(ws) and ws[-1] in _CODE_HEADS


@dataclass
class TablePlan:
    """One table: the entity it holds, its key, its columns (key first)."""

    name: str
    entity: str
    primary_key: str
    columns: dict[str, ColumnPlan]
    description: str = ""
    #: how `create` makes keys (builder `ids`); None: integer max+1
    ids: dict[str, Any] | None = None

    @property
    def status(self) -> str | None:
        """The status column (`status`, `state`, `*_status` with an enum of 2+ values), if any."""
        for name, col in self.columns.items():
            ws = words(name)
            if ws and ws[-1] in _STATUS and col.enum and len(col.enum) >= 2 and col.type == "string":
                return name
        return None

    @property
    def handle(self) -> str | None:
        """The column a person names a row by (name, title, email, ...), if the table has one."""
        by_snake = {snake(c): c for c, col in self.columns.items() if col.type == "string"}
        for word in _HANDLE:
            if word in by_snake and by_snake[word] != self.primary_key:
                return by_snake[word]
        for name, col in self.columns.items():
            if col.type == "string" and name != self.primary_key and not col.references and not col.enum:
                ws = words(name)
                if ws and ws[-1] in ("name", "title"):
                    return name
        return None

    def column_for(self, name: str) -> str | None:
        """The column `name` is (any case style), or None."""
        wanted = snake(name) or name.lower()
        for column in self.columns:
            if (snake(column) or column.lower()) == wanted:
                return column
        return None

    def column_named(self, name: str) -> str | None:
        """The column SQLite takes `name` for (equal ignoring case: `usageplanId` is `usagePlanId`,
        which `column_for` keeps apart), or None."""
        wanted = name.lower()
        return next((column for column in self.columns if column.lower() == wanted), None)


@dataclass(frozen=True)
class Binding:
    """What one argument of an operation means: its role, and the table and column it touches."""

    param: str
    role: Role
    table: str | None = None
    column: str | None = None


#: a description that calls an argument an id (`The identifier of the customer to subscribe`)
_SAYS_ID = re.compile(r"(?i)\b(?:id|ids|identifier|uuid)\b")
#: the hint on a key column whose values are names (`Builder.named`), for the seed to draw
NAME_KEY = "x-toolgym-name-key"


@dataclass
class DomainSchema:
    """The tables of a domain and, per operation id, the meaning of each argument."""

    tables: dict[str, TablePlan]
    by_entity: dict[str, str]
    bindings: dict[str, list[Binding]]
    operations: dict[str, Operation]
    tool_names: dict[str, str]
    #: {op id: {argument: its input schema}}: key arguments relaxed to accept the table's keys
    key_inputs: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    #: {op id: what a write does to its row beyond its arguments} (`effects.decide`)
    effects: dict[str, StateChange | Repoint] = field(default_factory=dict)
    #: {op id: `nothing` | `not modelled: ...`}: operations that name no row and have no table
    tableless: dict[str, str] = field(default_factory=dict)

    def table_of(self, op: Operation) -> TablePlan:
        return self.tables[self.by_entity[op.entity]]

    def hints(self) -> dict[str, dict[str, dict[str, Any]]]:
        """{table: {column: json_schema}}: what the seed generator should honour."""
        return {t.name: {c.name: dict(c.hint) for c in t.columns.values()} for t in self.tables.values()}


def openapi_path(op: Operation) -> PathInfo | None:
    """What the operation's path says (OpenAPI operations only; from its JSON pointer)."""
    if op.format not in OPENAPI or not op.pointer.startswith("/paths/"):
        return None
    parts = op.pointer[len("/paths/") :].rsplit("/", 1)
    if len(parts) != 2:
        return None
    path = unquote(parts[0].replace("~1", "/").replace("~0", "~"))
    return analyse_path(path)


def _prop_of(op: Operation, original: str) -> str | None:
    """The input property an original parameter name became (renamed where it had to be)."""
    props = op.input_schema.get("properties") or {}
    for entry in op.renamed:
        if entry.get("from") == original and entry.get("to") in props:
            return entry["to"]
    return original if original in props else None


class _Builder:
    """Collects the tables of one domain as operations are read."""

    def __init__(self, ops: list[Operation]) -> None:
        self.ops = ops
        self.tables: dict[str, TablePlan] = {}
        self.by_entity: dict[str, str] = {}
        self.records: dict[str, dict[str, Any]] = {}
        self.required: dict[str, set[str]] = {}
        self.key_args: dict[str, list[dict[str, Any]]] = {}
        #: entities no operation acts on whose every key argument is named as the entity itself
        #: (Kubernetes' `{namespace}`): the API keys them by their names
        self.named: set[str] = set()
        self._written: dict[str, set[str]] | None = None

    def sets(self, entity: str, prop: str) -> bool:
        """Whether a write of `entity` takes an argument spelled as `prop` (any case style)."""
        if self._written is None:
            self._written = {}
            for op in self.ops:
                if op.kind != "read":
                    spelled = {snake(p) for p in op.input_schema.get("properties") or {}}
                    self._written.setdefault(op.entity, set()).update(spelled)
        return snake(prop) in self._written.get(entity, set())

    # -- tables and keys -------------------------------------------------------------------
    def entity_table(self, entity: str) -> TablePlan:
        if entity in self.by_entity:
            return self.tables[self.by_entity[entity]]
        name = table_name(entity)
        taken = {t.lower() for t in self.tables}
        base, n = name, 2
        while name.lower() in taken:
            name, n = f"{base}_{n}", n + 1
        record = self.records.get(entity, {})
        key, original = self._key_name(entity, record)
        found = record.get(original) if original is not None else None
        key_schema: dict[str, Any] = found if isinstance(found, dict) else {}
        shape = key_shape(key_schema, self.key_args.get(entity, []))
        key_col = ColumnPlan(
            key,
            shape.type,
            nullable=False,
            description=_text(key_schema.get("description")) or f"the {entity.replace('_', ' ')}'s id",
            hint={**{k: v for k, v in key_schema.items() if k not in _KEY_DECIDES}, **shape.shape},
        )
        if entity in self.named and shape.type == "string" and shape.ids is None:
            key_col.hint[NAME_KEY] = True  # (the seed draws names: `billing-staging`, not `NAM-1018`)
        ids = shape.ids or (
            counter_ids(key_prefix(entity), start=KEY_START) if shape.type == "string" else None
        )
        table = TablePlan(name, entity, key, {key: key_col}, ids=ids)
        self.tables[name] = table
        self.by_entity[entity] = name
        return table

    @staticmethod
    def _key_name(entity: str, record: Mapping[str, Any]) -> tuple[str, str | None]:
        """(the key column's name, the record property it comes from, if any)."""
        lowered = {str(k).lower(): str(k) for k in record}
        if "id" in lowered:
            return identifier(lowered["id"]), lowered["id"]
        ews = tuple(entity.split("_"))
        for prop in record:
            ws = words(str(prop))
            if ws[:-1] == ews and ws[-1:] in (("id",), ("uuid",)):
                return identifier(str(prop)), str(prop)
        return identifier(f"{entity}_id"), None

    def add_column(
        self, table: TablePlan, name: str, schema: Mapping[str, Any], *, from_record: bool = False
    ) -> str:
        """The column `name` of `table` (added, or merged with the one of the same name)."""
        existing = table.column_for(name)
        schema = flat(schema)
        ctype, nullable = column_type(schema)
        enum = (
            [v for v in schema.get("enum") or [] if v is not None]
            if isinstance(schema.get("enum"), list)
            else []
        )
        if existing is None:
            col_name = identifier(name)
            while any(c.lower() == col_name.lower() for c in table.columns):
                col_name += "_"
            col = ColumnPlan(
                col_name,
                ctype,
                description=_text(schema.get("description")),
                hint=dict(schema),
            )
            table.columns[col_name] = col
            if enum and all(fits(v, ctype) and value_type(v) for v in enum) and ctype != "json":
                col.enum = list(dict.fromkeys(enum))
            self._default(col, schema)
            return col_name
        col = table.columns[existing]
        if existing == table.primary_key or col.references:
            return existing
        merged = merge_type(col.type, ctype)
        if merged != col.type:
            col.type = merged
            col.enum = None if merged == "json" else col.enum
        if enum and col.enum is not None and merged != "json":
            extra = [v for v in enum if v not in col.enum and fits(v, merged)]
            col.enum = [*col.enum, *extra]
        elif enum and col.enum is None and from_record and merged != "json":
            col.enum = [v for v in dict.fromkeys(enum) if fits(v, merged)] or None
        if not col.description:
            col.description = _text(schema.get("description"))
        for key, value in schema.items():
            col.hint.setdefault(key, value)
        if col.default is None:
            self._default(col, schema)
        return existing

    @staticmethod
    def _default(col: ColumnPlan, schema: Mapping[str, Any]) -> None:
        default = schema.get("default")
        if default is None or not fits(default, col.type) or isinstance(default, dict | list):
            return
        if value_problem(col.type, default) is not None:
            return  # Budgea's `default: <function datetime.now at 0x…>` for a date-time
        if col.enum is not None and default not in col.enum:
            return
        col.default = default

    def _reaches(self, start: TablePlan, goal: TablePlan) -> bool:
        """Whether `start`'s foreign keys lead (through any tables) to `goal`."""
        seen: set[str] = set()
        stack = [start.name]
        while stack:
            name = stack.pop()
            if name == goal.name:
                return True
            if name in seen or name not in self.tables:
                continue
            seen.add(name)
            stack.extend(
                c.references.split(".")[0] for c in self.tables[name].columns.values() if c.references
            )
        return False

    def foreign_key(self, table: TablePlan, other: TablePlan, spelled: str | None = None) -> str:
        """The column of `table` that holds a row of `other`'s key: a foreign key, unless `other`
        already leads back to `table` (two tables referring to each other cannot be created in
        order): then a plain column of the key's type."""
        target = f"{other.name}.{other.primary_key}"
        for name, col in table.columns.items():
            if col.references == target:
                return name
        if table is other:
            spelled = f"parent_{other.entity}_id"
        cyclic = table is not other and self._reaches(other, table)
        name = spelled if spelled and table.column_for(spelled) is None else f"{other.entity}_id"
        existing = table.column_for(name) or table.column_named(identifier(name))
        if existing is not None and existing != table.primary_key:
            col = table.columns[existing]
            if col.references is None and col.type in ("string", "integer", "json"):
                col.type = other.columns[other.primary_key].type
                col.enum = None
                col.default = None
                col.references = None if cyclic else target
                return existing
            name = f"{name}_ref"
        col_name = base = identifier(name)
        n = 2
        # (a trailing `_` is the same name to column_for; a name differing only in case, to SQLite)
        while table.column_for(col_name) is not None or table.column_named(col_name) is not None:
            col_name, n = f"{base}_{n}", n + 1
        key = other.columns[other.primary_key]
        # a column that cannot be a foreign key (a cycle) still holds values shaped like the keys
        shape: dict[str, Any] = {k: key.hint[k] for k in ("format", "pattern") if cyclic and k in key.hint}
        table.columns[col_name] = ColumnPlan(
            col_name,
            key.type,
            references=None if cyclic else target,
            description=f"the {other.entity.replace('_', ' ')} it belongs to",
            hint={"type": JSON_TYPE[key.type], **shape},
        )
        return col_name


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        text = " ".join(value.split())
        return text if len(text) <= 300 else text[:299] + "…"
    return None


def _is_id_word(ws: tuple[str, ...]) -> bool:
    return bool(ws) and ws[-1] in ("id", "uuid", "guid", "identifier")


def _param_entity(prop: str, op: Operation, info: PathInfo | None, known: set[str]) -> str | None:
    """The entity whose key the argument `prop` carries, if any (own or another)."""
    original = next((e["from"] for e in op.renamed if e.get("to") == prop), prop)
    if info is not None and original in info.collection_of:
        noun = info.collection_of[original]
        if noun in known:
            return noun
    ws = words(prop)
    if ws in (("id",), ("uuid",), ("guid",), ("identifier",)):
        return op.entity
    if len(ws) > 3 and ws[-1] in ("id", "uuid", "guid") and "_".join(map(singular, ws[:-1])) == op.entity:
        return op.entity  # (`ssh_public_key_id` of an SSH public key: no `public key` of its own)
    if len(ws) == 2 and ws[-1] in ("id", "uuid", "guid") and op.entity.endswith("_" + singular(ws[0])):
        return op.entity  # (`CertificateId` of a signing certificate: its own, no other certificate)
    entity = id_entity(prop)
    if entity and entity in known:
        return entity
    if len(ws) >= 2 and ws[-1] in IDENTIFIER_WORDS | {"identifier", "number", "guid"} and ws[-1] != "name":
        stem = "_".join([*ws[:-2], singular(ws[-2])])
        if stem in known:
            return stem
    if len(ws) >= 2 and ws[-1] == "name":
        stem = "_".join([*ws[:-2], singular(ws[-2])])
        if stem in SCHEMA_WORDS:
            return None  # (`column_name`: a field of a record, no record's key)
        if stem in op.consumes and stem != op.entity and stem in known:
            return stem
    if info is not None and info.params and original == info.params[-1] and info.ends_with_param:
        return op.entity
    return None


def _instrument(b: _Builder, op: Operation, prop: str, props: Mapping[str, Any]) -> bool:
    """Whether another row's id, given after the written row's own key, is what the write uses
    (`update_reservation_flights(reservation_id, …, payment_id)`: who pays; `close_alert(alert_id,
    user_id)`: who closes) rather than what finds the row. Not when an update moves a reference
    (`change_plan(line_id, plan_id)`), a verb moves the row (`assign_ticket(ticket_id, agent_id)`)
    or the record holds that id (the row must then be that owner's)."""
    if op.kind == "update":
        return _names_its_field(op, props)
    if op.kind != "action" or verb_of(op) in MOVE_VERBS:
        return False
    spelled = "_".join(words(prop))
    return not any("_".join(words(k)) == spelled for k in b.records.get(op.entity, {}))


def _names_its_field(op: Operation, props: Mapping[str, Any]) -> bool:
    """Whether an update's name is its row's entity and then a field it sets
    (`update_reservation_flights(reservation_id, flights)`)."""
    ws, own = words(op.name), words(op.entity)
    at = next((i for i in range(len(ws)) if ws[i : i + len(own)] == own), None)
    tail = ws[at + len(own) :] if at is not None else ()
    return bool(tail) and any(words(p)[-1:] == tail[-1:] for p in props if words(p))


def infer_schema(domain: PlannedDomain, operations: Mapping[str, Operation]) -> DomainSchema:
    """The tables of `domain` and the meaning of each argument of each of its operations."""
    planned = apart([operations[i] for i in domain.operations if i in operations])
    known = _known(planned)
    infos = {op.id: openapi_path(op) for op in planned}
    props_of = {op.id: op.input_schema.get("properties") or {} for op in planned}
    without: dict[str, str] = {}
    for op in planned:
        names = any(_param_entity(p, op, infos[op.id], known) for p in props_of[op.id])
        how = tableless(op, names)
        if how is not None:
            without[op.id] = how
    found = retarget(
        [op for op in planned if op.id not in without],
        lambda op, prop: _param_entity(prop, op, infos[op.id], known),
    )
    ops = found.ops
    b = _Builder(ops)
    # the records first, so keys and columns follow the spec's spelling; what a delete or an
    # action answers (Kubernetes' `Status`) only when nothing reads or writes the record itself
    recorded = {op.entity for op in ops if op.kind in _RECORDS and record_props(op.record_schema)[0]}
    for op in ops:
        if op.kind not in _RECORDS and op.entity in recorded:
            continue
        props, required = record_props(op.record_schema)
        record = b.records.setdefault(op.entity, {})
        given = op.input_schema.get("properties") or {}
        for key, value in props.items():
            if (
                op.kind != "read"
                and key in given
                and control_role(key, value, op.kind, op.entity) == "option"
            ):
                continue  # (a create's body that only shapes the call: a QR code's `width`)
            record.setdefault(key, value)
        if props:
            b.required.setdefault(op.entity, set(required)).intersection_update(required)
    known = _known(ops)
    key_names: dict[str, set[tuple[str, ...]]] = {}
    for op in ops:  # the schemas of the arguments carrying each entity's key
        for prop, raw in (op.input_schema.get("properties") or {}).items():
            schema = raw if isinstance(raw, dict) else {}
            if control_role(prop, schema, op.kind, op.entity) is None and schema.get("type") not in (
                "array",
                "object",
            ):
                other = _param_entity(prop, op, infos[op.id], known)
                if other is not None:
                    b.key_args.setdefault(other, []).append(schema)
                    key_names.setdefault(other, set()).add(words(prop))
    own = {op.entity for op in ops}
    said_ids = {  # (Stripe's `customer`, "The identifier of the customer": an id, not a name)
        "_".join(words(prop))
        for op in ops
        for prop, raw in (op.input_schema.get("properties") or {}).items()
        if isinstance(raw, dict) and _SAYS_ID.search(str(raw.get("description") or ""))
    }
    b.named = {  # (Kubernetes' `namespace`: a name)
        e
        for e, names in key_names.items()
        if e not in own and names == {tuple(e.split("_"))} and e not in said_ids
    }
    for entity in sorted({op.entity for op in ops}):
        table = b.entity_table(entity)
        record = b.records.get(entity, {})
        for key, value in record.items():
            if table.column_for(key) is None and not paging_field(key, record):
                col = b.add_column(table, key, value, from_record=True)
                table.columns[col].required_by_record = key in b.required.get(entity, set())
                table.columns[col].recorded = True
    bindings = {op.id: _bind(b, op, infos[op.id], known) for op in ops}
    effects = decide(b.tables, b.by_entity, ops, bindings, found, b.add_column)
    _finish(b, ops, bindings)
    key_inputs = _relax_keys(b, ops, bindings, infos, known)
    mine = {op.id: op for op in ops}
    return DomainSchema(
        b.tables,
        b.by_entity,
        bindings,
        {op.id: mine.get(op.id, op) for op in planned},
        dict(domain.tools),
        key_inputs,
        effects,
        without,
    )


def _known(ops: list[Operation]) -> set[str]:
    """The entities of `ops`: those they act on, and those their arguments carry the keys of."""
    known = {op.entity for op in ops}
    for op in ops:
        info = openapi_path(op)
        for prop in op.input_schema.get("properties") or {}:
            other = _param_entity(prop, op, info, known | set(op.consumes))
            if other is not None:
                known.add(other)
    return known


def _relax_keys(
    b: _Builder,
    ops: list[Operation],
    bindings: dict[str, list[Binding]],
    infos: Mapping[str, PathInfo | None],
    known: set[str],
) -> dict[str, dict[str, dict[str, Any]]]:
    """{op id: {argument: relaxed schema}} for key arguments the table's keys would fail."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    samples: dict[str, list[Any]] = {}
    for op in ops:
        props = op.input_schema.get("properties") or {}
        for binding in bindings[op.id]:
            if binding.role not in ("key", "parent"):
                continue
            entity = op.entity
            if binding.role == "parent":
                entity = _param_entity(binding.param, op, infos[op.id], known) or ""
                if entity not in b.by_entity:
                    continue
            table = b.tables[b.by_entity[entity]]
            key_type = table.columns[table.primary_key].type
            if table.name not in samples:
                samples[table.name] = key_samples(table.name, key_type, table.ids)
            loosened = relaxed(clean_schema(props.get(binding.param)), samples[table.name], key_type)
            if loosened is not None:
                out.setdefault(op.id, {})[binding.param] = loosened
    return out


def _bind(b: _Builder, op: Operation, info: PathInfo | None, known: set[str]) -> list[Binding]:
    table = b.entity_table(op.entity)
    props: dict[str, Any] = op.input_schema.get("properties") or {}
    out: list[Binding] = []
    has_key = False
    required = set(op.input_schema.get("required") or [])
    own = tuple(singular(w) for w in words(op.entity))
    recorded = bool(b.records.get(op.entity))
    # (a read taking its row's own name, `color_to_picture(color, ...)`, reads that one row)
    named = {p for p in props if (p in required or not recorded) and named_as(p, own)}
    keyed = op.kind in ("read", "delete") and (
        bool(named and op.kind == "read")
        or any(
            _param_entity(p, op, info, known) == op.entity and (op.kind == "delete" or p in required)
            for p in props
        )
    )
    for prop, raw in props.items():
        schema = raw if isinstance(raw, dict) else {}
        control = control_role(prop, schema, op.kind, op.entity)
        if control is not None:
            out.append(Binding(prop, control))
            continue
        entity = _param_entity(prop, op, info, known)
        if entity == op.entity and not has_key and schema.get("type") not in ("array", "object"):
            has_key = True
            out.append(Binding(prop, "key", table.name, table.primary_key))
            continue
        if entity is not None and entity != op.entity and schema.get("type") not in ("array", "object"):
            if has_key and _instrument(b, op, prop, props):
                out.append(Binding(prop, "option"))
                continue
            other = b.entity_table(entity)
            spelled = prop if _is_id_word(words(prop)) else None
            out.append(Binding(prop, "parent", table.name, b.foreign_key(table, other, spelled)))
            continue
        if keyed and prop not in named:
            out.append(Binding(prop, "option"))  # (what else a read of one row takes: `width` of a picture)
            continue
        joined = "_".join(words(prop))
        if op.kind == "read" and joined in SEARCH and schema.get("type") in ("string", None):
            out.append(Binding(prop, "search", table.name, None))
            continue
        if op.kind == "read" and (joined in QUERY_LANGUAGE or joined in SEARCH):
            out.append(Binding(prop, "option"))  # `where=population > 10`, a list of `search` terms
            continue
        ranged = range_role(prop, schema) if op.kind == "read" else None
        if ranged is not None:
            role, base = ranged
            column = table.column_for(base) or b.add_column(table, base, {**schema, "description": None})
            out.append(Binding(prop, role, table.name, column))
            continue
        listed = listed_values(prop, schema) if op.kind == "read" else None
        if listed is not None:
            name, items = listed
            found = table.column_for(prop) or table.column_for(name)
            if found is None or table.columns[found].type == "json":
                found = b.add_column(table, name, items)
            out.append(Binding(prop, "in", table.name, found))
            continue
        if b.records.get(op.entity) and table.column_for(prop) is None and request_only(op, prop, schema):
            out.append(Binding(prop, "option"))  # `fieldManager`, `gracePeriodSeconds`: no record field
            continue
        if (
            op.kind == "read"
            and prop in op.query
            and not b.records.get(op.entity)
            and not b.sets(op.entity, prop)
        ):
            out.append(Binding(prop, "option"))  # a search's `city`, `curpage`: no record, no write holds it
            continue
        out.append(Binding(prop, "field", table.name, b.add_column(table, prop, as_text(schema))))
    return out


def _finish(b: _Builder, ops: list[Operation], bindings: dict[str, list[Binding]]) -> None:
    """Search columns, nullability, and hints typed like their columns."""
    for op in ops:
        table = b.tables[b.by_entity[op.entity]]
        for i, binding in enumerate(bindings[op.id]):
            if binding.role == "search":
                handle = table.handle
                if handle is None:
                    fresh = table.column_for("name") is None
                    handle = b.add_column(table, "name", {"type": "string"})
                    table.columns[handle].searched = fresh
                if table.columns[handle].type != "string":
                    handle = b.add_column(table, "name_text", {"type": "string"})
                    table.columns[handle].searched = True
                bindings[op.id][i] = Binding(binding.param, "search", table.name, handle)
    creators: dict[str, list[set[str]]] = {}
    for op in ops:
        keyed = any(x.role == "key" for x in bindings[op.id])
        if op.kind == "create" or (op.kind == "action" and not keyed):
            given = {x.column for x in bindings[op.id] if x.column and x.role in ("field", "parent", "key")}
            required = set(op.input_schema.get("required") or [])
            needed = {x.column for x in bindings[op.id] if x.param in required and x.column}
            creators.setdefault(b.by_entity[op.entity], []).append(needed & given)
    for table in b.tables.values():
        musts = creators.get(table.name)
        for name, col in table.columns.items():
            if name == table.primary_key or col.state:
                col.nullable = False
            elif col.default is not None and col.enum:
                col.nullable = False
            else:
                col.nullable = not (
                    col.required_by_record
                    and not bool(col.hint.get("nullable"))
                    and (musts is not None and all(name in m for m in musts))
                )
            col.hint = typed_hint(col)
        if len(table.columns) == 1:
            b.add_column(table, "name", {"type": "string", "description": f"the {table.entity}'s name"})
            table.columns["name"].hint = typed_hint(table.columns["name"])
            table.columns["name"].searched = True
