"""Tasks for a generated domain: walks on its tool graph, run on the simulator, kept only when valid.

    kept, rejected = make_tasks(builder, folder, schema, toolset, seed=0)

A walk starts at a write tool (or at a row, for a question) and goes back along the tool
dependency graph to what supplies its inputs: a row's id comes from a read tool that finds the
row by what a person would know of it (its email, name, title: `lexicon.handle_columns`), or
from a row that refers to it (`the customer of order ORD-1`). Every step is executed on a real
episode of the written folder, so the gold calls are what the tools do. The spread:

- `single`: one write, the row named by its id;
- `chain`: lookups that find the ids, then the write (2-6 calls); `double`: two writes, on two
  rows or two tools, each after its lookups (3-6 calls) — a lookup's result feeds each write;
- `read`: a question about a row, with the value as the answer fact;
- `refusal`: a status change the tool refuses (the row is already there, or final): the gold
  call is `expect_error`, and the answer fact is the row's current state.

Each candidate is then validated (`scoring.validation.validate.check_task`, the checks of
`toolgym validate` for one task: gold passes, doing nothing fails, corrupted gold fails, the
answer is reachable and not guessable by listing, independent calls commute, every id is
reachable). Chosen for speed in this loop: one run per task (reruns in fresh processes and tool
fuzzing are what `toolgym validate` adds; the gold calls are also replayed under another seed
here, which catches ids that only exist under one). Only `valid` tasks are kept; the others are
counted by status. Deterministic from `seed` and the domain's name.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring.validation.validate import check_task
from simulator import Domain, Episode, load_domain
from simulator.builders import DomainBuilder, call, dump_jsonl
from simulator.errors import ToolgymError
from simulator.spec import Task
from toolgen.model import Operation
from toolgen.naming import words

from . import instructions as say
from .lexicon import handle_columns
from .schema import Binding, DomainSchema, TablePlan
from .tools import ToolPlan, Toolset

__all__ = ["MAX_CANDIDATES", "MAX_TASKS", "Candidate", "make_tasks", "propose"]

#: most tasks kept per domain; most candidates validated per domain
MAX_TASKS = 12
MAX_CANDIDATES = 24
#: a domain keeps short tasks (1-2 calls) only up to the number of long ones, or up to this many in all
MIN_KEPT = 5
_KEYED = frozenset(("status", "update", "delete", "event"))
#: how many of each kind a domain's candidates hold at most (chains first: they teach the most)
_QUOTA = {"double": 8, "chain": 6, "read": 4, "refusal": 2, "single": 4}

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


@dataclass
class Ref:
    """How an instruction names a row, and the read calls that reveal its id."""

    phrase: str
    calls: list[tuple[str, Args]]


@dataclass
class Write:
    """One write of a task: its clause, the lookups that find its ids, the call."""

    text: str
    lookups: list[tuple[str, Args]]
    tool: str
    args: Args

    @property
    def calls(self) -> list[tuple[str, Args]]:
        return [*self.lookups, (self.tool, self.args)]


@dataclass
class Candidate:
    """A task before validation."""

    kind: str
    instruction: str
    calls: list[dict[str, Any]]
    answer_facts: list[Any] = field(default_factory=list)

    @property
    def long(self) -> bool:
        """3+ calls where lookups come first and feed a write (or the write refused)."""
        return self.kind in ("chain", "double", "refusal") and len(self.calls) >= 3


def _reveals(result: Any, column: str, value: Any, depth: int = 0) -> bool:
    """Whether a tool result holds a record whose `column` is `value`."""
    if depth > 6:
        return False
    if isinstance(result, dict):
        if column in result and result[column] == value and type(result[column]) is type(value):
            return True
        return any(_reveals(v, column, value, depth + 1) for v in result.values())
    if isinstance(result, list):
        return any(_reveals(v, column, value, depth + 1) for v in result)
    return False


def _scalar(value: Any) -> bool:
    return value is not None and isinstance(value, str | int | float | bool)


class _World:
    """One domain's tools, rows and a read-only episode to run lookups on."""

    def __init__(self, domain: Domain, schema: DomainSchema, toolset: Toolset, rows: Mapping[str, list[Row]]):
        self.domain = domain
        self.schema = schema
        self.rows = {t: list(r) for t, r in rows.items()}
        self.tools: list[Tool] = []
        for plan in toolset.tools:
            op = schema.operations[plan.op_id]
            props = plan.input_schema.get("properties") or {}
            self.tools.append(
                Tool(
                    plan,
                    op,
                    schema.table_of(op),
                    list(schema.bindings.get(plan.op_id, [])),
                    set(plan.input_schema.get("required") or []),
                    props,
                )
            )
        self.reader: Episode = domain.episode(seed=0)
        self._lookups: dict[tuple[str, str], Ref | None] = {}

    def close(self) -> None:
        self.reader.close()

    def read(self, name: str, args: Args) -> Any:
        try:
            return self.reader.call(name, args)
        except ToolgymError:
            return None

    # -- naming a row --------------------------------------------------------------------------
    def getter(self, table: TablePlan) -> Tool | None:
        """A read tool that fetches one row of `table` by its key alone."""
        for t in self.tools:
            if t.plan.compiled_as == "get" and t.table.name == table.name and t.key is not None:
                if t.required <= {t.key.param}:
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
        """`the customer whose email is "..."`, found by a read tool that shows its id; else the
        row named by the values a filtering read tool needs (`the metric whose host id is ...`)."""
        pk = table.primary_key
        handles = handle_columns(self.domain.spec.tables[table.name])
        finders = self.finders(table)
        for column in handles:
            value = row.get(column)
            if not isinstance(value, str) or not value.strip() or not self._unique(table, row, [column]):
                continue
            for tool, param, filtered in finders:
                if filtered is not None and filtered != column:
                    continue
                args = {param: value} if param is not None else {}
                if _reveals(self.read(tool.name, args), pk, row[pk]):
                    return Ref(say.row_phrase(table.entity, column, value), [(tool.name, args)])
        return self.by_filters(table, row, depth)

    def _unique(self, table: TablePlan, row: Row, columns: Sequence[str]) -> bool:
        """Whether no other row of `table` has the same values in `columns`."""
        wanted = [row.get(c) for c in columns]
        same = sum(1 for r in self.rows.get(table.name, []) if [r.get(c) for c in columns] == wanted)
        return same == 1

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
            if not all(_scalar(row.get(c)) for c in columns):
                continue
            args = {p: row[b.column or ""] for p, b in bound.items()}
            if not _reveals(self.read(t.name, args), pk, row[pk]):
                continue
            owners: list[str] = []
            stated: list[tuple[str, Any]] = []
            calls: list[tuple[str, Args]] = []
            for b in bound.values():
                parent = self.parent_of(t, b) if b.role == "parent" else None
                prow = self._row_by_key(parent, row[b.column or ""]) if parent is not None else None
                found = self.by_handle(parent, prow, depth + 1) if parent and prow and depth == 0 else None
                if found is not None and found.calls:
                    owners.append(found.phrase)
                    calls = _seq(calls, found.calls)
                else:
                    stated.append((b.column or "", row[b.column or ""]))
            if not self._unique(table, row, columns):
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
        """A column whose value tells `row` apart from the others that share `columns`."""
        for name, col in table.columns.items():
            if name == table.primary_key or col.references or col.type == "json" or name in columns:
                continue
            if _scalar(row.get(name)) and self._unique(table, row, [*columns, name]):
                return name
        return None

    def via_child(self, table: TablePlan, row: Row, rng: random.Random) -> Ref | None:
        """`the customer of the order whose number is "..."`: a row that refers to this one, found first."""
        pk = table.primary_key
        children = [
            (child, name)
            for child in self.schema.tables.values()
            if child.name != table.name
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
                    if getter is None or getter.key is None:
                        continue
                    args = {getter.key.param: kid[child.primary_key]}
                    ref = Ref(say.id_phrase(child.entity, kid[child.primary_key]), [(getter.name, args)])
                name, args = ref.calls[-1]
                if _reveals(self.read(name, args), column, row[pk]):
                    return Ref(say.via_phrase(table.entity, child.entity, ref.phrase), ref.calls)
        return None

    def name_row(self, table: TablePlan, row: Row, rng: random.Random, *, lookup: bool) -> Ref | None:
        """How to name a row: by what a person knows (with lookups) or, with `lookup` False, by id."""
        if not lookup:
            return Ref(say.id_phrase(table.entity, row[table.primary_key]), [])
        ref = self.by_handle(table, row)
        if ref is None or rng.random() < 0.25:
            ref = self.via_child(table, row, rng) or ref
        return ref

    def parent_of(self, tool: Tool, b: Binding) -> TablePlan | None:
        """The table a parent argument's column refers to."""
        col = tool.table.columns.get(b.column or "")
        target = (col.references or "").split(".")[0] if col is not None else ""
        return self.schema.tables.get(target)

    def some_row(self, table: TablePlan, rng: random.Random, *, lookup: bool) -> tuple[Row, Ref] | None:
        """A row of `table` and how to name it (with lookups that find it, when `lookup`)."""
        rows = list(self.rows.get(table.name, []))
        rng.shuffle(rows)
        for row in rows[:8]:
            ref = self.name_row(table, row, rng, lookup=lookup)
            if ref is not None and (ref.calls or not lookup):
                return row, ref
        return None

    # -- values to write -------------------------------------------------------------------------
    def value_for(self, rng: random.Random, tool: Tool, b: Binding, current: Any) -> Any:
        """A value for a field argument: another of the column's values, else one from its schema."""
        prop = tool.props.get(b.param) or {}
        enum = prop.get("enum") or (
            tool.table.columns[b.column].enum if b.column in tool.table.columns else None
        )
        if enum:
            choices = [v for v in enum if _scalar(v) and v != current]
            return rng.choice(choices) if choices else None
        column = b.column or ""
        pool = sorted(
            {
                repr(r.get(column)): r.get(column)
                for r in self.rows.get(tool.table.name, [])
                if r.get(column) is not None
                and r.get(column) != current
                and _fits(prop, r.get(column))
                and len(say.value_text(r.get(column))) <= 120
            }.items()
        )
        if pool and b.column is not None:
            return rng.choice(pool)[1]
        return _from_schema(rng, prop, current)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _fits(prop: Mapping[str, Any], value: Any) -> bool:
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
        return rng.choice(("priority", "reviewed", "follow up", "on hold", "urgent")) + f" {day}"
    return None


def _seq(*parts: Sequence[tuple[str, Args]]) -> list[tuple[str, Args]]:
    out: list[tuple[str, Args]] = []
    for part in parts:
        for item in part:
            if item not in out:
                out.append(item)
    return out


class _Proposer:
    """Candidates of every kind for one domain."""

    def __init__(self, world: _World, rng: random.Random):
        self.w = world
        self.rng = rng

    def _fields(self, tool: Tool, row: Row | None, extra: int) -> list[tuple[Binding, Any]] | None:
        """Field arguments: every required one and up to `extra` optional ones (None: cannot fill)."""
        chosen: list[tuple[Binding, Any]] = []
        optional = [b for b in tool.role("field") if b.param not in tool.required and b.column is not None]
        optional = [b for b in optional if tool.table.columns[b.column or ""].type != "json"]
        self.rng.shuffle(optional)
        for b in [b for b in tool.bindings if b.param in tool.required and b.role == "field"] + optional[
            :extra
        ]:
            current = row.get(b.column) if row is not None and b.column else None
            value = self.w.value_for(self.rng, tool, b, current)
            if value is None:
                if b.param in tool.required:
                    return None
                continue
            chosen.append((b, value))
        return chosen

    def _covered(self, tool: Tool, given: set[str]) -> bool:
        return tool.required <= given

    def keyed(self, tool: Tool, row: Row, ref: Ref, *, expect_error: bool = False) -> Write | None:
        """(clause, lookups, arguments) of a write on one row."""
        table = tool.table
        key = tool.key
        assert key is not None
        args: Args = {key.param: row[table.primary_key]}
        owners = []
        for b in tool.role("parent"):
            if b.param in tool.required and b.column is not None:
                if row.get(b.column) is None:
                    return None
                args[b.param] = row[b.column]
                parent = self.w.parent_of(tool, b)
                if not ref.calls and parent is not None:  # named by id: its parents' ids are given too
                    owners.append(say.id_phrase(parent.entity, row[b.column]))
                elif not ref.calls:
                    return None
        if owners:
            ref = Ref(f"{ref.phrase} (of {say.join_clauses(owners)})", ref.calls)
        extra = 0 if tool.plan.compiled_as != "update" else self.rng.choice((1, 1, 2))
        fields = self._fields(tool, row, extra)
        if fields is None or (tool.plan.compiled_as == "update" and not fields):
            return None
        for b, value in fields:
            args[b.param] = value
        if not self._covered(tool, set(args)):
            return None
        settings = [(b.param, v) for b, v in fields]
        if tool.plan.compiled_as == "update":
            text = say.update_clause(ref.phrase, settings)
        elif tool.plan.compiled_as == "delete":
            text = say.clause("delete", ref.phrase, settings)
        else:
            text = say.clause(say.verb_phrase(words(tool.op_name), table.entity), ref.phrase, settings)
        return Write(text, ref.calls, tool.name, args)

    def create(self, tool: Tool, lookup: bool) -> Write | None:
        args: Args = {}
        owners: list[str] = []
        lookups: list[tuple[str, Args]] = []
        for b in tool.role("parent"):
            parent = self.w.parent_of(tool, b)
            if parent is None or (b.param not in tool.required and self.rng.random() < 0.5):
                if b.param in tool.required:
                    return None
                continue
            named = self.w.some_row(parent, self.rng, lookup=lookup)
            if named is None:
                if b.param in tool.required:
                    return None
                continue
            row, ref = named
            args[b.param] = row[parent.primary_key]
            owners.append(ref.phrase)
            lookups = _seq(lookups, ref.calls)
        key = tool.key
        if key is not None and key.param in tool.required:
            args[key.param] = self._new_key(tool.table)
        fields = self._fields(tool, None, self.rng.choice((1, 2)))
        if fields is None or not self._covered(tool, set(args) | {b.param for b, _ in fields}):
            return None
        for b, value in fields:
            args[b.param] = value
        settings = [(b.param, v) for b, v in fields]
        if key is not None and key.param in args:
            settings.insert(0, (key.param, args[key.param]))
        verb = say.verb_phrase(words(tool.op_name), tool.table.entity).split(" ")[0]
        text = say.create_clause(verb, tool.table.entity, owners, settings)
        return Write(text, lookups, tool.name, args)

    def _new_key(self, table: TablePlan) -> Any:
        if table.columns[table.primary_key].type == "integer":
            taken = [r.get(table.primary_key) for r in self.w.rows.get(table.name, [])]
            return max([t for t in taken if isinstance(t, int)] or [0]) + 100 + self.rng.randint(1, 99)
        return f"new-{table.entity.replace('_', '-')}-{self.rng.randint(100, 999)}"

    def rows_of(self, table: TablePlan) -> list[Row]:
        rows = list(self.w.rows.get(table.name, []))
        self.rng.shuffle(rows)
        return rows[:6]

    def one_write(self, tool: Tool, lookup: bool) -> Write | None:
        if tool.plan.compiled_as in _KEYED and tool.key is not None:
            for row in self.rows_of(tool.table):
                ref = self.w.name_row(tool.table, row, self.rng, lookup=lookup)
                if ref is None or (lookup and not ref.calls):
                    continue
                made = self.keyed(tool, row, ref)
                if made is not None and self._succeeds(made.calls):
                    return made
            return None
        if tool.plan.compiled_as == "create":
            for _ in range(3):
                made = self.create(tool, lookup)
                if made is None or not made.args or (lookup and not made.lookups):
                    continue
                if self._succeeds(made.calls):
                    return made
        return None

    def _succeeds(self, calls: list[tuple[str, Args]], failing: int | None = None) -> bool:
        """Whether the calls run as planned on a fresh episode (call `failing` must fail)."""
        with self.w.domain.episode(seed=0) as ep:
            for i, (name, args) in enumerate(calls):
                try:
                    ep.call(name, args)
                except ToolgymError:
                    if i != failing:
                        return False
                    continue
                if i == failing:
                    return False
        return True

    def writes(self) -> list[Tool]:
        return [t for t in self.w.tools if t.plan.kind == "write"]

    def singles(self) -> list[Candidate]:
        out: list[Candidate] = []
        for _ in range(2):
            for tool in self.writes():
                made = self.one_write(tool, lookup=False)
                if made is not None and all(c.calls[-1]["arguments"] != made.args for c in out):
                    out.append(self._candidate("single", [made]))
        return out

    def counts(self) -> list[Candidate]:
        """`How many <entities> have <field> <value>?`, answered by a listing filtered on that field."""
        out: list[Candidate] = []
        for tool in self.w.tools:
            if tool.plan.compiled_as != "list":
                continue
            table = tool.table
            for b in tool.role("field"):
                col = table.columns.get(b.column or "")
                if col is None or not col.enum or not tool.required <= {b.param}:
                    continue
                rows = self.w.rows.get(table.name, [])
                column = b.column or ""
                values = sorted({str(r[column]) for r in rows if isinstance(r.get(column), str)})
                if not values:
                    continue
                value = self.rng.choice(values)
                count = sum(1 for r in rows if r.get(column) == value)
                result = self.w.read(tool.name, {b.param: value})
                if isinstance(result, list) and len(result) == count:
                    text = say.count_sentence(self.rng, table.entity, b.column or b.param, value)
                    out.append(Candidate("read", text, _gold([(tool.name, {b.param: value})]), [count]))
                    break
        return out

    def chains(self) -> list[Candidate]:
        out = []
        for tool in self.writes():
            made = self.one_write(tool, lookup=True)
            if made is not None:
                out.append(self._candidate("chain", [made]))
        return out

    def doubles(self) -> list[Candidate]:
        """Two writes in one request: each found by its lookups, then done."""
        out = []
        tools = self.writes()
        for tool in tools:
            for other in self.rng.sample(tools, len(tools)):
                first = self.one_write(tool, lookup=True)
                second = self.one_write(other, lookup=True)
                if first is None or second is None or (tool is other and first.args == second.args):
                    continue
                calls = _seq(first.calls, second.calls)
                if len(calls) >= 3 and self._succeeds(calls):
                    out.append(self._candidate("double", [first, second]))
                    break
        return out

    def refusals(self) -> list[Candidate]:
        out = []
        for tool in self.writes():
            status = tool.table.status
            if tool.plan.compiled_as != "status" or status is None or tool.key is None:
                continue
            for row in self.rows_of(tool.table):
                if not isinstance(row.get(status), str):
                    continue
                ref = self.w.name_row(tool.table, row, self.rng, lookup=True)
                if ref is None or not ref.calls:
                    continue
                made = self.keyed(tool, row, ref)
                if made is None:
                    continue
                calls = made.calls
                if self._succeeds(calls, failing=len(calls) - 1):
                    text = say.refusal_sentence(self.rng, made.text)
                    out.append(
                        Candidate("refusal", text, _gold(calls, failing=len(calls) - 1), [row[status]])
                    )
                    break
        return out

    def reads(self) -> list[Candidate]:
        out = []
        tables = list(self.w.schema.tables.values())
        self.rng.shuffle(tables)
        for table in tables:
            for row in self.rows_of(table)[:3]:
                ref = self.w.name_row(table, row, self.rng, lookup=True)
                getter = self.w.getter(table)
                if (ref is None or not ref.calls) and getter is not None and getter.key is not None:
                    args = {getter.key.param: row[table.primary_key]}
                    ref = Ref(say.id_phrase(table.entity, row[table.primary_key]), [(getter.name, args)])
                if ref is None or not ref.calls:
                    continue
                result = self.w.read(*ref.calls[-1])
                asked = [
                    c
                    for c, col in table.columns.items()
                    if c != table.primary_key
                    and not col.references
                    and col.type != "json"
                    and _scalar(row.get(c))
                    and not isinstance(row.get(c), bool)
                    and c not in ref.phrase
                    and str(row.get(c)) not in ref.phrase
                    and _reveals(result, c, row[c])
                ]
                if not asked:
                    continue
                column = self.rng.choice(sorted(asked))
                text = say.ask_sentence(self.rng, column, ref.phrase)
                out.append(Candidate("read", text, _gold(ref.calls), [row[column]]))
                break
        return out

    def _candidate(self, kind: str, writes: list[Write]) -> Candidate:
        calls: list[tuple[str, Args]] = []
        for w in writes:
            calls = _seq(calls, w.lookups)
            calls.append((w.tool, w.args))
        return Candidate(kind, say.write_sentence(self.rng, [w.text for w in writes]), _gold(calls))


def _gold(calls: Sequence[tuple[str, Args]], failing: int | None = None) -> list[dict[str, Any]]:
    return [call(name, args, expect_error=i == failing) for i, (name, args) in enumerate(calls)]


def propose(world: _World, rng: random.Random) -> list[Candidate]:
    """Candidates of every kind, interleaved (chains first), at most `MAX_CANDIDATES`."""
    p = _Proposer(world, rng)
    by_kind = {
        "double": p.doubles(),
        "chain": p.chains(),
        "read": p.reads() + p.counts(),
        "refusal": p.refusals(),
        "single": p.singles(),
    }
    for kind, found in by_kind.items():
        del found[_QUOTA[kind] :]
    out: list[Candidate] = []
    while any(by_kind.values()) and len(out) < MAX_CANDIDATES:
        for found in by_kind.values():
            if found:
                out.append(found.pop(0))
    return out[:MAX_CANDIDATES]


def _stream(seed: int, name: str) -> int:
    return int.from_bytes(hashlib.sha256(f"tasks:{seed}:{name}".encode()).digest()[:8], "big")


def _raw(task_id: str, c: Candidate) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "id": task_id,
        "instruction": c.instruction,
        "calls": c.calls,
        "answer_facts": c.answer_facts,
        "difficulty": _difficulty(c),
        "tags": ["generated", c.kind],
    }
    return Task.model_validate(raw).model_dump(mode="json", exclude_defaults=True) | {"id": task_id}


def _difficulty(c: Candidate) -> str:
    return "easy" if len(c.calls) <= 1 else "medium" if len(c.calls) <= 3 else "hard"


def validate_candidates(
    folder: Path, name: str, candidates: Sequence[Candidate], *, limit: int = MAX_TASKS
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Each candidate through `check_task` (on a scratch copy of the folder), in order, until
    `limit` are valid: (the valid tasks as written, {status: number rejected})."""
    raws = [_raw(f"{name}-{i + 1:03d}", c) for i, c in enumerate(candidates)]
    kept: list[tuple[int, dict[str, Any]]] = []
    rejected: dict[str, int] = {}
    order = sorted(range(len(raws)), key=lambda i: not candidates[i].long)
    longs = 0
    with tempfile.TemporaryDirectory(prefix="toolgym-tasks-") as tmp:
        scratch = Path(tmp) / name
        shutil.copytree(folder, scratch)  # (a table may be called `tasks`: seed/tasks.jsonl stays)
        (scratch / "tasks.jsonl").write_text(dump_jsonl(raws), encoding="utf-8")
        for i in order:
            short = len(kept) - longs
            if len(kept) >= limit or (not candidates[i].long and short >= max(longs, MIN_KEPT - longs)):
                continue
            verdict = check_task(str(scratch), raws[i]["id"])
            if verdict.valid:
                kept.append((i, raws[i]))
                longs += candidates[i].long
            else:
                rejected[verdict.status] = rejected.get(verdict.status, 0) + 1
    return [raw for _, raw in sorted(kept, key=lambda k: k[0])], rejected


def make_tasks(
    builder: DomainBuilder,
    folder: Path,
    schema: DomainSchema,
    toolset: Toolset,
    *,
    seed: int = 0,
) -> tuple[int, dict[str, int]]:
    """Tasks for the checked domain in `folder`: proposed, validated, the valid ones added to
    `builder` and written to `folder/tasks.jsonl`. Returns (kept, {status: rejected})."""
    folder = Path(folder)
    domain = load_domain(folder)
    world = _World(domain, schema, toolset, builder.rows)
    try:
        candidates = propose(world, random.Random(_stream(seed, domain.spec.name)))
    finally:
        world.close()
    kept, rejected = validate_candidates(folder, domain.spec.name, candidates)
    for raw in kept:
        body = {k: v for k, v in raw.items() if k not in ("id", "instruction", "calls")}
        builder.task(raw["id"], raw["instruction"], raw["calls"], **body)
    if builder.tasks:
        (folder / "tasks.jsonl").write_text(dump_jsonl(builder.tasks), encoding="utf-8")
    return len(kept), rejected
