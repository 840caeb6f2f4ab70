"""What a person knows of a row, and the read calls that find it: the lookups of generated tasks.

    world = World(domain, schema, toolset, rows)     # a read-only episode of the written folder
    world.name_row(table, row, rng, lookup=True)     # Ref('the user whose email is "..."', [calls])

A row is named by a handle a read tool filters on or lists, else by the values a filtering read
requires, else through a row that refers to it; each only when the read's result shows the row's
id. `copied` and `value_for` give values for a tool's arguments.
Design notes: docs/design/toolgen.md.
Over 500 lines: one class, `World`, whose lookups share its indexes of the rows.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from simulator import Domain, Episode
from simulator.errors import ToolgymError
from toolgen.model import Operation
from toolgen.naming import singular, words

from . import instructions as say
from .checks import opaque
from .draws import Draw, Field, is_code_of, make_faker
from .lexicon import TEXT_WORDS, handle_columns
from .schema import Binding, DomainSchema, TablePlan
from .texts import string_maker
from .tools import ToolPlan, Toolset

__all__ = ["Args", "Ref", "Row", "Tool", "World", "fits", "reveals", "scalar", "seq"]

Args = dict[str, Any]
Row = dict[str, Any]


@dataclass
class Tool:
    """A compiled tool with what its arguments mean."""

    plan: ToolPlan
    op: Operation
    table: TablePlan
    bindings: list[Binding]
    required: set[str]
    props: dict[str, Any]
    #: required arguments with one possible value (`Action: {enum: [DeleteGroup]}`): always given
    fixed: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.plan.name

    def role(self, *roles: str) -> list[Binding]:
        return [b for b in self.bindings if b.role in roles]

    @property
    def op_name(self) -> str:
        return self.op.name

    @property
    def key(self) -> Binding | None:
        found = self.role("key")
        return found[0] if found else None


#: words of text columns a person does not name a record by: free text (a message, a note) and
#: secrets (a password, an access key)
_UNSAID = TEXT_WORDS | frozenset(
    "password passcode passphrase pin otp auth authorization credential credentials secret token key "
    "signature hash failure error decline country currency language "
    "locale timezone region tax zip postcode state status province".split()
)  # (nor what went wrong, `the topup whose failure code is ...`, nor what many rows share:
#    `the forecast whose state code is "RI"`, `the agent runner whose state is "active"`)
#: last words of a field a person copies from another row (`the same address as my last order`)
_SHARED = frozenset(
    "address street city country zip postcode region email phone currency language timezone locale price "
    "category color colour location website company department team plan tier priority".split()
)
#: shared values that are one person's own: copied from a record of another kind only
_OWN = frozenset("email phone".split())
#: verbs of an operation that changes what it reads: a read named so (`DeleteScreenshot` on a GET)
#: is no way a person looks a row up
_CHANGING_VERBS = frozenset("delete remove cancel destroy purge drop revoke create update add".split())


@dataclass
class Ref:
    """How an instruction names a row, and the read calls that reveal its id."""

    phrase: str
    calls: list[tuple[str, Args]]


def reveals(result: Any, column: str, value: Any, depth: int = 0) -> bool:
    """Whether a tool result holds a record whose `column` is `value`."""
    if depth > 6:
        return False
    if isinstance(result, dict):
        if column in result and result[column] == value and type(result[column]) is type(value):
            return True
        return any(reveals(v, column, value, depth + 1) for v in result.values())
    if isinstance(result, list):
        return any(reveals(v, column, value, depth + 1) for v in result)
    return False


def _only_value(prop: Any) -> Any:
    """The one value an argument's schema allows (`const`, or an `enum` of one), else None."""
    if not isinstance(prop, dict):
        return None
    if scalar(prop.get("const")):
        return prop["const"]
    enum = prop.get("enum")
    if isinstance(enum, list) and len(enum) == 1 and scalar(enum[0]):
        return enum[0]
    return None


def scalar(value: Any) -> bool:
    return value is not None and isinstance(value, str | int | float | bool)


#: first words of a name that is its row's own, whatever the row is (`display name`, `last name`)
_OWN_NAMES = frozenset(
    "display friendly full first last given family nick screen user legal company business file host".split()
)


def names_another(column: Sequence[str], entity: Sequence[str]) -> bool:
    """Whether a `<thing> name` column names another thing than its row (a text's `font name`,
    a scorer's `league name`), not the row itself (a recipe's `recipe name`, a directory's
    `dir name`, a user's `display name`)."""
    if len(column) < 2 or column[-1] not in ("name", "title"):
        return False
    thing = list(column[:-1])
    return not (
        thing == list(entity[-len(thing) :])
        or thing[-1] in _OWN_NAMES
        or (
            len(thing) == 1
            and len(thing[0]) >= 3
            and any(w.startswith(thing[0]) and w != thing[0] for w in entity)
        )
    )


class World:
    """One domain's tools, rows and a read-only episode to run lookups on."""

    def __init__(self, domain: Domain, schema: DomainSchema, toolset: Toolset, rows: Mapping[str, list[Row]]):
        self.domain = domain
        self.schema = schema
        self.rows = {t: list(r) for t, r in rows.items()}
        #: (table, columns) -> how many rows hold each (hashable) combination of values (`_unique`)
        self._counts: dict[tuple[str, tuple[str, ...]], Counter[tuple[Any, ...]]] = {}
        self._names: dict[str, list[str]] = {}
        self._placeholders: dict[tuple[str, str], bool] = {}
        self._fake: Any = None  # (`_faker`: made on first use)
        self.tools: list[Tool] = []
        for plan in toolset.tools:
            if plan.op_id in schema.tableless:  # (a scratchpad: no row to name or change)
                continue
            op = schema.operations[plan.op_id]
            props = plan.input_schema.get("properties") or {}
            required = set(plan.input_schema.get("required") or [])
            fixed = {p: v for p in sorted(required) if (v := _only_value(props.get(p))) is not None}
            self.tools.append(
                Tool(
                    plan,
                    op,
                    schema.table_of(op),
                    list(schema.bindings.get(plan.op_id, [])),
                    required - set(fixed),
                    props,
                    fixed,
                )
            )
        self._fixed = {t.name: t.fixed for t in self.tools}
        self.reader: Episode = domain.episode(seed=0)
        self._lookups: dict[tuple[str, str], Ref | None] = {}

    def unsaid(self) -> list[TablePlan]:
        """The tables whose name has a word no tool of the domain says (in its description or
        its arguments): a thing named after an operation (`bypostcodes`, `slack webs`), which
        no user of the API would name."""
        text = " ".join(
            f"{t.spec.description or ''} {json.dumps(t.spec.input_schema)}"
            for t in self.domain.tools.values()
        )
        said = set(words(text))
        said |= {singular(w) for w in said}
        return [t for t in self.schema.tables.values() if not all(singular(w) in said for w in words(t.name))]

    def close(self) -> None:
        self.reader.close()

    def placeholder(self, table: TablePlan, column: str) -> bool:
        """Whether the column holds stand-in codes (`draws.is_code_of`): nothing described its
        values, so no person would write one."""
        if (table.name, column) not in self._placeholders:
            values = [r[column] for r in self.rows.get(table.name, []) if r.get(column) is not None]
            self._placeholders[table.name, column] = bool(values) and all(
                is_code_of(column, v) for v in values
            )
        return self._placeholders[table.name, column]

    def full(self, name: str, args: Args) -> Args:
        """A call's arguments with the tool's fixed ones (`Tool.fixed`) added."""
        fixed = self._fixed.get(name)
        return {**fixed, **args} if fixed else args

    def read(self, name: str, args: Args) -> Any:
        try:
            return self.reader.call(name, self.full(name, args))
        except ToolgymError:
            return None

    # -- naming a row --------------------------------------------------------------------------
    def getter(self, table: TablePlan) -> Tool | None:
        """A read tool that fetches one row of `table` by its key alone (not one named after a
        change: `DeleteScreenshot` on a GET)."""
        for t in self.tools:
            if t.plan.compiled_as == "get" and t.table.name == table.name and t.key is not None:
                if t.required <= {t.key.param} and not _CHANGING_VERBS.intersection(words(t.op_name)):
                    return t
        return None

    def finders(self, table: TablePlan) -> list[tuple[Tool, str | None, str | None]]:
        """Read tools that list rows of `table`: (tool, argument, column it filters), or a plain listing."""
        out: list[tuple[Tool, str | None, str | None]] = []
        for t in self.tools:
            if t.plan.compiled_as != "list" or t.table.name != table.name:
                continue
            for b in t.role("search", "field"):
                if b.column is not None and t.required <= {b.param}:
                    out.append((t, b.param, b.column))
            if not t.required:
                out.append((t, None, None))
        return out

    def by_handle(self, table: TablePlan, row: Row, depth: int = 0) -> Ref | None:
        """`the customer whose email is "..."` (`by_name`); else the row named by the values a
        filtering read tool needs (`the metric whose host id is ...`)."""
        return self.by_name(table, row) or self.by_filters(table, row, depth)

    def names(self, table: TablePlan) -> list[str]:
        """The columns a person names a row of `table` by, best first: fields a person names
        (`ColumnPlan.plain`: a `method` or an `end` is no name of it, nor a `kind` or a tenant id)."""
        if table.name not in self._names:
            handles = handle_columns(self.domain.spec.tables[table.name], table.name)
            own = words(table.entity)
            # (a policy's `group_name` names its group, not it)
            others = {tuple(words(t.entity)) for t in self.schema.tables.values() if t.name != table.name}
            plain = {
                c
                for c, col in table.columns.items()
                if (col.plain or words(c) in (["number"], ["code"]))
                and tuple(words(c)[:-1]) not in others
                and tuple(words(c)) not in others  # (a line item's `tax_code` is a tax code's)
            }
            self._names[table.name] = [
                c
                for c in handles
                if c in plain and not _UNSAID.intersection(words(c)) and not names_another(words(c), own)
            ]
        return self._names[table.name]

    def by_name(self, table: TablePlan, row: Row) -> Ref | None:
        """`the customer whose email is "..."`: a value a person knows it by, unique in its table,
        and a read tool that finds it by that value (or lists them all) and shows its id."""
        pk = table.primary_key
        finders = self.finders(table)
        for column in self.names(table):
            value = row.get(column)
            if not isinstance(value, str) or not value.strip() or not self._unique(table, row, [column]):
                continue
            for tool, param, filtered in finders:
                if filtered is not None and filtered != column:
                    continue
                args = {param: value} if param is not None else {}
                if reveals(self.read(tool.name, args), pk, row[pk]):
                    return Ref(say.row_phrase(table.entity, column, value), [(tool.name, args)])
        return None

    def _unique(self, table: TablePlan, row: Row, columns: Sequence[str]) -> bool:
        """Whether no other row of `table` has the same values in `columns`."""
        wanted = tuple(row.get(c) for c in columns)
        try:
            hash(wanted)
        except TypeError:  # a JSON value: compared row by row
            same = sum(1 for r in self.rows.get(table.name, []) if tuple(r.get(c) for c in columns) == wanted)
            return same == 1
        key = (table.name, tuple(columns))
        if key not in self._counts:  # counted once per table and columns, not once per row asked about
            counts: Counter[tuple[Any, ...]] = Counter()
            for r in self.rows.get(table.name, []):
                values = tuple(r.get(c) for c in columns)
                try:
                    counts[values] += 1
                except TypeError:  # (unhashable: never equal to a hashable `wanted`)
                    continue
            self._counts[key] = counts
        return self._counts[key][wanted] == 1

    def by_filters(self, table: TablePlan, row: Row, depth: int = 0) -> Ref | None:
        """A row named by the values a listing of its table requires: a parent by what a person
        knows of it (`the order of the user whose email is ...`: that lookup first), other
        values as they are; plus one more value of the row when that is needed to tell it apart."""
        pk = table.primary_key
        for t in self.tools:
            if t.plan.compiled_as != "list" or t.table.name != table.name or not t.required:
                continue
            bound = {b.param: b for b in t.bindings if b.param in t.required}
            if set(bound) != t.required:
                continue
            if any(b.role not in ("parent", "field", "search") or b.column is None for b in bound.values()):
                continue
            columns = [b.column or "" for b in bound.values()]
            if not all(scalar(row.get(c)) and row.get(c) != "" for c in columns):
                continue  # (nor `the team whose plan is ""`)
            args = {p: row[b.column or ""] for p, b in bound.items()}
            if not reveals(self.read(t.name, args), pk, row[pk]):
                continue
            owners: list[str] = []
            by_id = 0
            stated: list[tuple[str, Any]] = []
            calls: list[tuple[str, Args]] = []
            for b in bound.values():
                parent = self.parent_of(t, b) if b.role == "parent" else None
                prow = self._row_by_key(parent, row[b.column or ""]) if parent is not None else None
                found = self.by_handle(parent, prow, depth + 1) if parent and prow and depth == 0 else None
                if found is not None and found.calls:
                    owners.append(found.phrase)
                    calls = seq(calls, found.calls)
                elif parent is not None and prow is not None:  # `of the namespace NAM-1004`
                    owners.append(say.id_phrase(parent.entity, row[b.column or ""]))
                    by_id += 1
                else:
                    stated.append((b.column or "", row[b.column or ""]))
            if len(dict.fromkeys(owners)) > 1 and (by_id or any(" of the " in o for o in owners)):
                continue  # (`the voip ... of the account ... and the available phone number APN-1`, two
                # owners each said through its own: a riddle)
            if not all(self._known(table, c) for c, _ in stated) or opaque(" ".join(owners)):
                continue  # (a request's inputs, another row's id or a code, a parent's sid: no name of it)
            # a row said only through its parents (`the role of the namespace NAM-1017`) reads
            # as that parent's only one: unless it is (its key is the parent's), a value of its own
            alone = not stated and not any(c == pk for c in columns)
            if alone or not self._unique(table, row, columns):
                extra = self._telling(table, row, columns)
                if extra is None:
                    continue
                stated.append((extra, row[extra]))
            phrase = say.row_where(table.entity, stated, owners)
            return Ref(phrase, [*calls, (t.name, args)])
        return None

    def _row_by_key(self, table: TablePlan, key: Any) -> Row | None:
        return next((r for r in self.rows.get(table.name, []) if r.get(table.primary_key) == key), None)

    def _telling(self, table: TablePlan, row: Row, columns: Sequence[str]) -> str | None:
        """A column a person knows (`_known`) whose value tells `row` apart from the others
        that share `columns`."""
        for name in table.columns:
            if name in columns or not self._known(table, name):
                continue
            if scalar(row.get(name)) and row.get(name) != "" and self._unique(table, row, [*columns, name]):
                return name
        return None

    def _known(self, table: TablePlan, column: str) -> bool:
        """Whether a person knows a row by this column's value: a name (`names`), one of a few
        states (an enum) or a date of a field a person names (`status`, `due date`; not `ok`, a
        `channel type` or `taken at`); not another row's id, a code, a request's input or a time
        to the second (`whose creation date is "2024-07-16T13:16:19Z"`)."""
        col = table.columns[column]
        if column == table.primary_key or col.references or col.machine or col.flag:
            return False  # (nor a machine's label: `whose object is "checkout.session"`)
        return column in self.names(table) or (col.plain and (bool(col.enum) or col.type == "date"))

    def via_child(self, table: TablePlan, row: Row, rng: random.Random, besides: str = "") -> Ref | None:
        """`the customer of the order whose number is "..."`: a row that refers to this one, found
        first; never one of `besides`, the table the request is about (`every order of the
        customer of the order ...` goes round in a circle)."""
        pk = table.primary_key
        children = [
            (child, name)
            for child in self.schema.tables.values()
            if child.name not in (table.name, besides)
            for name, col in child.columns.items()
            if col.references == f"{table.name}.{pk}"
        ]
        rng.shuffle(children)
        for child, column in children:
            mine = [r for r in self.rows.get(child.name, []) if r.get(column) == row[pk]]
            for kid in mine[:2]:
                ref = self.by_handle(child, kid, depth=1)
                if ref is not None and str(row[pk]) in ref.phrase:
                    continue  # a child named by this row's own id says nothing new
                if ref is None:
                    getter = self.getter(child)
                    if getter is None or getter.key is None or opaque(str(kid[child.primary_key])):
                        continue
                    args = {getter.key.param: kid[child.primary_key]}
                    ref = Ref(say.id_phrase(child.entity, kid[child.primary_key]), [(getter.name, args)])
                name, args = ref.calls[-1]
                if reveals(self.read(name, args), column, row[pk]):
                    return Ref(say.via_phrase(table.entity, child.entity, ref.phrase), ref.calls)
        return None

    def name_row(
        self,
        table: TablePlan,
        row: Row,
        rng: random.Random,
        *,
        lookup: bool,
        besides: str = "",
        via: bool = True,
    ) -> Ref | None:
        """How to name a row: by what a person knows (with lookups) or, with `lookup` False, by id
        (not a UUID or a sid: no person knows one, `checks.opaque`); `besides`: `via_child`'s;
        not `via` a child (beside other rows so named, `... of the media whose title is`, twice)."""
        if not lookup:
            key = row[table.primary_key]
            return None if opaque(str(key)) else Ref(say.id_phrase(table.entity, key), [])
        return self.by_handle(table, row) or (self.via_child(table, row, rng, besides) if via else None)

    def parent_of(self, tool: Tool, b: Binding) -> TablePlan | None:
        """The table a parent argument's column refers to."""
        col = tool.table.columns.get(b.column or "")
        target = (col.references or "").split(".")[0] if col is not None else ""
        return self.schema.tables.get(target)

    def some_row(
        self, table: TablePlan, rng: random.Random, *, lookup: bool, besides: str = "", via: bool = True
    ) -> tuple[Row, Ref] | None:
        """A row of `table` and how to name it (with lookups that find it, when `lookup`)."""
        rows = list(self.rows.get(table.name, []))
        rng.shuffle(rows)
        for row in rows[:8]:
            ref = self.name_row(table, row, rng, lookup=lookup, besides=besides, via=via)
            if ref is not None and (ref.calls or not lookup):
                return row, ref
        return None

    # -- values to write -------------------------------------------------------------------------
    def copied(self, rng: random.Random, tool: Tool, b: Binding, current: Any) -> say.Said | None:
        """A value for a field taken from a row found by lookups (its city: `to match the
        user whose email is ...`): the lookup's result feeds the write; only a field rows share
        as a person sees it (`_SHARED`: an address, a currency; not a code or an amount)."""
        if b.column is None:
            return None
        prop = tool.props.get(b.param) or {}
        wanted = words(b.column)
        tables = list(self.schema.tables.values())
        rng.shuffle(tables)
        for table in tables:
            column = next((c for c in table.columns if words(c) == wanted), None)
            if column is None or column == table.primary_key or table.columns[column].references:
                continue
            if not table.columns[column].plain or not _SHARED.intersection(words(column)[-1:]):
                continue  # (`the same ae title as ...`: a person copies what rows share, an address)
            if table.name == tool.table.name and _OWN.intersection(words(column)[-1:]):
                continue  # (a new member's email is not another member's: one person, two records)
            rows = [
                r
                for r in self.rows.get(table.name, [])
                if scalar(r.get(column)) and r.get(column) != current and fits(prop, r.get(column))
            ]
            for row in rng.sample(rows, min(3, len(rows))):
                ref = self.by_handle(table, row)
                if ref is None or not ref.calls or say.value_text(row[column]) in ref.phrase:
                    continue  # (a value the phrase states is no lookup)
                if not reveals(self.read(*ref.calls[-1]), column, row[column]):
                    continue
                return say.Said(row[column], ref.phrase, ref.calls, copy=True)
        return None

    def value_for(self, rng: random.Random, tool: Tool, b: Binding, current: Any) -> Any:
        """A value for a field argument: another of the column's values, else one from its schema;
        a new one for a column rows are named by (a new user is not named as another is)."""
        prop = tool.props.get(b.param) or {}
        enum = prop.get("enum") or (
            tool.table.columns[b.column].enum if b.column in tool.table.columns else None
        )
        if enum:
            choices = [v for v in enum if scalar(v) and v != current]
            return rng.choice(choices) if choices else None
        column = b.column or ""
        naming = column in self.names(tool.table)
        taken = {repr(r.get(column)) for r in self.rows.get(tool.table.name, [])} if naming else set()
        pool = (
            []
            if naming
            else sorted(
                {
                    repr(r.get(column)): r.get(column)
                    for r in self.rows.get(tool.table.name, [])
                    if r.get(column) is not None
                    and r.get(column) != current
                    and fits(prop, r.get(column))
                    and len(say.value_text(r.get(column))) <= 120
                }.items()
            )
        )
        if pool and b.column is not None:
            return rng.choice(pool)[1]
        kind = prop.get("type")
        kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
        if kind == "string" and (naming or not prop.get("format")) and column:
            # made as the seed makes the column's values (`SES-60494`), not a stand-in (`reviewed
            # 20`); a column whose values are all one (`NS`) gets no new one
            made = string_maker(Field(tool.table.name, column, "string", hint=prop))
            for _ in range(3):
                value = made(Draw.of(self._faker(), rng.getrandbits(32), _CLOCK))
                if value != current and fits(prop, value) and not (naming and repr(value) in taken):
                    return value
            return None
        value = _from_schema(rng, prop, current)
        return None if naming and repr(value) in taken else value

    def _faker(self) -> Any:
        if self._fake is None:
            self._fake = make_faker()
        return self._fake


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


_CLOCK = datetime(2026, 1, 1, tzinfo=UTC)


def fits(prop: Mapping[str, Any], value: Any) -> bool:
    """Whether a value has a type the argument's schema allows (any, when it names none)."""
    kinds = prop.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    if not kinds:
        return True
    if isinstance(value, bool):
        return "boolean" in kinds
    return any(isinstance(value, _JSON_TYPES.get(k, ())) for k in kinds)


def _from_schema(rng: random.Random, prop: Mapping[str, Any], current: Any) -> Any:
    kind = prop.get("type")
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    if kind == "boolean":
        return not current if isinstance(current, bool) else True
    if kind in ("integer", "number"):
        low = prop.get("minimum", 1)
        high = prop.get("maximum", max(low, 1) + 50)
        value = rng.randint(int(low), int(max(low, min(high, low + 50))))
        return value if value != current else (value + 1 if value + 1 <= high else value - 1)
    if kind == "string":
        fmt = prop.get("format")
        day = rng.randint(1, 28)
        if fmt == "date-time":
            return f"2026-04-{day:02d}T10:00:00Z"
        if fmt == "date":
            return f"2026-04-{day:02d}"
        if fmt == "email":
            return f"contact{day}@example.com"
        return None  # (no filler: `priority 12` is no value a person gives)
    return None


def seq(*parts: Sequence[tuple[str, Args]]) -> list[tuple[str, Args]]:
    out: list[tuple[str, Args]] = []
    for part in parts:
        for item in part:
            if item not in out:
                out.append(item)
    return out
