"""A domain from a tool list and real records (`toolgym generate SPEC --data SNAPSHOT`).

    generate_domain("tools.json", "db.json", "out/shop")   # -> the domain folder

The records are the seed as given (`toolgen.snapshot`); every tool of the list becomes a tool of
one domain, bound to the tables by its argument names. Reads return records in the data's shape;
writes check what their names and descriptions state. What a description says that these rules
cannot express is listed per tool as "not modelled" in README.md and report.json (a `refine`
hook may change the tools first: a model's proposals, `toolgen.proposals`).
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator.builders import DomainBuilder
from simulator.builders.steps import Step
from simulator.errors import Problem, SpecError
from simulator.layout import Collection, Part
from toolgen.ingest.files import read_file
from toolgen.model import Operation
from toolgen.naming import singular, words
from toolgen.normalize import normalize
from toolgen.pure import tableless, verb_of
from toolgen.snapshot import Snapshot, read_snapshot, seed_domain
from toolgen.synth.effects import STATE_VERBS

__all__ = [
    "Bound",
    "FromData",
    "Records",
    "Refine",
    "domain_name",
    "generate_domain",
    "one_of",
    "read_operations",
]

#: a column whose values name a record's state: a string column with at most this many values
_STATES = 12
#: a sentence that says what a call does to the data
_EFFECT = re.compile(
    r"\b(will|is|are|be)\b.*\b(changed|added|set|refunded|removed|deducted|charged|updated)\b|\bwill\b", re.I
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_QUOTED = re.compile(r"""['"`]([^'"`]{1,40})['"`]""")
#: boolean columns that must be true for a row an argument names to be chosen
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}$")
_SEARCH = frozenset("search list query filter browse".split())
_REPLACE = frozenset("modify change replace update swap switch edit".split())
_USABLE = frozenset({"available", "active", "enabled", "in_stock", "is_available", "is_active"})


@dataclass
class Bound:
    """What one tool became: its steps, and in words what it does and what it leaves out."""

    kind: str
    steps: list[dict[str, Any]]
    does: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    not_modelled: list[str] = field(default_factory=list)
    #: sentences once not modelled whose steps a model proposed (`--llm`) and checks kept
    proposed: list[str] = field(default_factory=list)


@dataclass
class _Link:
    """A child table's place under its parent: `parent.field` holds its rows, keyed by `by`."""

    parent: str
    by: str
    part: Part
    field: str


class Records:
    """The snapshot's tables seen from the tools: keys, states, shapes and parent links."""

    def __init__(self, snap: Snapshot):
        self.snap = snap
        self.tables = snap.tables
        self.shapes: dict[str, Collection | Part] = {}
        self.links: dict[str, _Link] = {}
        for coll in snap.layout.collections.values():
            self.shapes[coll.table] = coll
            self._walk(coll.table, coll.fields)

    def _walk(self, table: str, fields: dict[str, str | Part]) -> None:
        for name, part in fields.items():
            if not isinstance(part, Part):
                continue
            if part.table is not None and part.parent is not None and part.fields is not None:
                self.shapes.setdefault(part.table, part)
                self.links.setdefault(part.table, _Link(table, part.parent, part, name))
                self._walk(part.table, part.fields)
            elif part.fields is not None and part.table is None:
                self._walk(table, part.fields)

    def key(self, table: str) -> str:
        pk = self.tables[table].primary_key
        return pk if isinstance(pk, str) else pk[0]

    def top(self, table: str) -> bool:
        return table not in self.links

    def keyed_table(self, arg: str) -> str | None:
        """The table whose key the argument names: a key column of that name, else `<table>_id`."""
        exact = [t for t in self.tables if self.key(t) == arg]
        if exact:
            return min(exact, key=lambda t: (not self.top(t), t))
        named = [t for t in self.tables if arg in (f"{one_of(t)}_id", f"{one_of(t)}_{self.key(t)}")]
        return min(named, key=lambda t: (not self.top(t), t)) if named else None

    def stamps(self, table: str) -> list[str]:
        """Columns whose values are all ISO date-times (`created_at`): a create sets them to `$now`."""
        rows = self.snap.rows[table]
        return [
            c for c, col in self.tables[table].columns.items()
            if col.type == "string" and rows and all(isinstance(r.get(c), str) and _STAMP.match(r[c]) for r in rows)
        ]  # fmt: skip

    def states(self, table: str) -> dict[str, list[str]]:
        """Columns whose few string values name states (`status`: pending, delivered, ...)."""
        out: dict[str, list[str]] = {}
        for name, col in self.tables[table].columns.items():
            if col.type != "string" or name == self.key(table) or col.references:
                continue
            seen = {r.get(name) for r in self.snap.rows[table]}
            values = seen - {None}
            texts = {v for v in values if isinstance(v, str) and len(v.split()) <= 3}
            if 2 - (None in seen) <= len(texts) == len(values) <= _STATES:
                out[name] = sorted(texts)
        return out


# -- records in the data's shape -----------------------------------------------------------------


class _Shaper:
    """Steps and an expression that build one record of a table as the data writes it."""

    def __init__(self, data: Records):
        self.data = data
        self.count = 0

    def _name(self) -> str:
        self.count += 1
        return f"_part{self.count}"

    def record(self, table: str, var: str) -> tuple[list[dict[str, Any]], Any]:
        shape = self.data.shapes.get(table)
        if shape is None or shape.fields is None:
            return [], f"${var}"
        steps: list[dict[str, Any]] = []
        value = self._object(table, shape.fields, shape.omit_null, var, steps, top=True)
        return steps, value

    def _object(
        self, table: str, fields: dict[str, str | Part], omit: bool | list[str], var: str,
        steps: list[dict[str, Any]], *, top: bool, joined: dict[str, Any] | None = None,
    ) -> Any:  # fmt: skip
        kept: dict[str, Any] = {}
        dropped: dict[str, Any] = {}
        for name, part in fields.items():
            value = self._field(table, part, var, steps, top=top, joined=joined)
            (dropped if omit is True or (isinstance(omit, list) and name in omit) else kept)[name] = value
        if not dropped:
            return {"object": kept}
        return {"merge": [{"object": kept}, {"compact": {"object": dropped}}]}

    def _field(
        self, table: str, part: str | Part, var: str, steps: list[dict[str, Any]], *, top: bool,
        joined: dict[str, Any] | None,
    ) -> Any:  # fmt: skip
        if isinstance(part, str):
            return f"${var}.{part}"
        if part.table is None:
            assert part.fields is not None
            return self._object(table, part.fields, part.omit_null, var, steps, top=top, joined=joined)
        if not top:
            if joined is None:
                raise _Unshaped(f"{part.table} nested two levels down")
            name = self._name()
            if part.via is not None:
                joined[name] = part.via
                return self._element(part, f"{var}.{name}", steps)
            joined[name] = {
                "rows": part.table,
                "by": part.parent,
                "order_by": [part.order or self.data.key(part.table)],
            }
            return self._gather(part, f"${var}.{name}", steps)
        name = self._name()
        if part.via is not None:
            target = part.table
            steps.append(
                {
                    "get": target,
                    "key": {self.data.key(target): f"${var}.{part.via}"},
                    "optional": True,
                    "as": name,
                }
            )
            return {"if": [{"is_null": f"${name}"}, None, self._element(part, name, steps)]}
        join: dict[str, Any] = {}
        step: dict[str, Any] = {
            "list": part.table,
            "where": [{"column": part.parent, "value": f"${var}.{self.data.key(table)}"}],
            "order_by": [part.order or self.data.key(part.table)],
            "internal": True,
            "as": name,
        }
        steps.append(step)
        value = self._gather(part, f"${name}", steps, join)
        if join:
            step["join"] = join
        return value

    def _element(
        self, part: Part, var: str, steps: list[dict[str, Any]], joined: dict[str, Any] | None = None
    ) -> Any:
        if part.value is not None:
            return f"${var}.{part.value}"
        assert part.fields is not None and part.table is not None
        return self._object(part.table, part.fields, part.omit_null, var, steps, top=False, joined=joined)

    def _gather(
        self, part: Part, rows: str, steps: list[dict[str, Any]], joined: dict[str, Any] | None = None
    ) -> Any:
        each = {"map": {"over": rows, "as": "r", "to": self._element(part, "r", steps, joined)}}
        if part.as_ == "list":
            return each
        if part.as_ == "map":
            assert part.table is not None
            return {"object_from": [f"{rows}.{part.key or self.data.key(part.table)}", each]}
        return {"at": [each, 0]}


class _Unshaped(Exception):
    pass


# -- binding tools ---------------------------------------------------------------------------------


def _order(data: Records, table: str) -> str | None:
    """The column that keeps the table's records in the data's order."""
    shape = data.shapes.get(table)
    order = getattr(shape, "order", None)
    return order if isinstance(order, str) else None


def one_of(name: str) -> str:
    """One of what a plural name names: `item_ids` -> `item_id`, `payment_methods` -> `payment_method`."""
    parts = words(name)
    if not parts:
        return name
    last = "id" if parts[-1] == "ids" else singular(parts[-1])
    return "_".join((*parts[:-1], last))


def _lit(value: Any) -> Any:
    """A value from the data or the spec as a literal of the steps (a leading `$` is not a name)."""
    return "$" + value if isinstance(value, str) and value.startswith("$") else value


def _say(text: str) -> str:
    """An error message holding values from the data or the spec, braces not read as a template."""
    return text.replace("{", "{{").replace("}", "}}")


def _typed(rows: list[dict[str, Any]], kind: str, rest: list[str]) -> dict[Any, list[str]]:
    """Rows by their `kind`, each as the sorted JSON of its `rest` columns."""
    out: dict[Any, list[str]] = {}
    for row in rows:
        out.setdefault(row.get(kind), []).append(json.dumps([row.get(c) for c in rest]))
    return {k: sorted(v) for k, v in out.items()}


def _participle(verb: str) -> str:
    """`exchange` -> `exchanged`, `modify` -> `modified`, `cancel` -> `cancelled` (by rule)."""
    if verb in STATE_VERBS:
        return STATE_VERBS[verb][0]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in tuple("aeiou"):
        return verb[:-1] + "ied"
    return verb + "ed"


def _stem_in(value: str, sentence: str) -> bool:
    """Whether every word of `value` appears in the sentence, as itself or inflected (refund: refunded)."""
    said = words(sentence)
    return all(any(w.startswith(v) and len(v) >= 4 or w == v for w in said) for v in words(value))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


def _entity(table: str) -> str:
    """`payment_methods` -> `Payment method`."""
    return " ".join(words(one_of(table))).capitalize()


def _properties(op: Operation) -> dict[str, dict[str, Any]]:
    """The arguments a step can name (`$args.NAME`): the others are left to the input schema."""
    props = op.input_schema.get("properties") or {}
    return {k: v for k, v in props.items() if isinstance(v, dict) and _NAME.fullmatch(k)}


def _is_list(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "array"


def _in_name(value: str, name_words: tuple[str, ...]) -> bool:
    """Whether a state's words appear together in a tool's name (`pending` in cancel_pending_order)."""
    state = words(value)
    n = len(state)
    return n > 0 and any(name_words[i : i + n] == state for i in range(len(name_words) - n + 1))


class _Binder:
    def __init__(self, data: Records, views: dict[str, str], clock: bool):
        self.data = data
        self.views = views
        self.clock = clock

    def bind(self, op: Operation) -> Bound | str:
        """The tool's steps, or why it is not compiled."""
        props = _properties(op)
        write = op.declared == "write" or (op.declared is None and op.kind != "read")
        keyed = [
            (a, t)
            for a, s in props.items()
            if not _is_list(s) and (t := self.data.keyed_table(a)) is not None
        ]
        named = self._table_named(op)
        if (
            write
            and op.kind == "create"
            and named
            and self.data.top(named)
            and not any(t == named for _, t in keyed)
        ):
            return self._create(op, props, named)
        if keyed:
            arg, table = min(keyed, key=lambda at: not self.data.top(at[1]))
            return self._write(op, props, arg, table) if write else self._get(op, arg, table)
        if write:
            return _first(op, "it names no record by its key")
        return self._find(op, props)

    def _view(self, table: str, key: str, out: str) -> dict[str, Any]:
        return {"use": self.views[table], "with": {"key": key}, "as": out}

    def _get(self, op: Operation, arg: str, table: str) -> Bound:
        steps = [
            {
                "get": table,
                "key": {self.data.key(table): f"$args.{arg}"},
                "error": f"{_entity(table)} not found",
                "as": "row",
            },
            self._view(table, f"$args.{arg}", "record"),
            {"return": "$record"},
        ]
        return Bound(
            "read",
            steps,
            does=[f"returns the {_entity(table).lower()} whose {self.data.key(table)} is `{arg}`"],
        )

    def _table_named(self, op: Operation) -> str | None:
        name_words = set(words(op.name))
        named = [t for t in self.data.tables if singular(words(t)[-1]) in {singular(w) for w in name_words}]
        return min(named, key=lambda t: (not self.data.top(t), t)) if named else None

    def _find(self, op: Operation, props: dict[str, dict[str, Any]]) -> Bound | str:
        if not props:
            table = self._table_named(op)
            if table is None:
                return _first(op, "it takes no argument and names no table")
            return self._all(op, table)
        named = self._table_named(op)
        if named is not None and verb_of(op) in _SEARCH:
            found = self._search(op, props, named)
            if found is not None:
                return found
        fits = [t for t in self.data.tables if all(a in self.data.tables[t].columns for a in props)]
        if named is not None and named not in fits:
            fits = []
        if not fits:
            return _first(op, "its arguments name no key and no columns of one table")
        table = named if named in fits else min(fits, key=lambda t: (not self.data.top(t), t))
        key = self.data.key(table)
        order = "position" if "position" in self.data.tables[table].columns else key
        where = [{"column": a, "value": f"$args.{a}", "skip_if_null": False} for a in props]
        steps: list[dict[str, Any]] = [
            {
                "get": table,
                "where": where,
                "order_by": [order],
                "error": f"{_entity(table)} not found",
                "as": "row",
            }
        ]
        wants_id = "id" in words(op.name) or key in op.name
        said = " and ".join(f"`{a}`" for a in props)
        if wants_id:
            steps.append({"return": f"$row.{key}"})
            does = f"returns the {key} of the first {_entity(table).lower()} with this {said}"
        else:
            steps += [self._view(table, f"$row.{key}", "record"), {"return": "$record"}]
            does = f"returns the first {_entity(table).lower()} with this {said}"
        return Bound("read", steps, does=[does])

    def _search(self, op: Operation, props: dict[str, dict[str, Any]], table: str) -> Bound | None:
        """Every record of the table whose columns equal the arguments named like them; an argument
        named like a JSON object column (`date` for `dates`) keeps the records that hold it as a key,
        each merged with the object under it."""
        columns = self.data.tables[table].columns
        keyed_json = {
            a: c for a in props for c, col in columns.items()
            if col.type == "json" and a not in columns and one_of(c) == a
        }  # fmt: skip
        if not all(a in columns or a in keyed_json for a in props):
            return None
        key = self.data.key(table)
        order = "position" if "position" in columns else key
        where = [{"column": a, "value": f"$args.{a}", "skip_if_null": False} for a in props if a in columns]
        steps: list[dict[str, Any]] = [
            {"list": table, "where": where, "order_by": [order], "internal": True, "as": "rows"}
        ]  # fmt: skip
        value: Any = "$rows"
        for a, c in keyed_json.items():
            inner = {"get_key": [f"$r.{c}", f"$args.{a}"]}
            value = {
                "map": {
                    "over": {"filter": {"over": value, "as": "r", "where": {"exists": inner}}},
                    "as": "r",
                    "to": {"merge": [{"omit": ["$r", [c]]}, {"object": {a: f"$args.{a}"}}, inner]},
                }
            }
        steps.append({"return": value})
        said = " and ".join(f"`{a}`" for a in props)
        return Bound("read", steps, does=[f"lists every {_entity(table).lower()} with this {said}"])

    def _all(self, op: Operation, table: str) -> Bound:
        key = self.data.key(table)
        order = "position" if "position" in self.data.tables[table].columns else key
        text = " ".join(words(op.description))
        fields = [
            c for c in self.data.tables[table].columns if c != "position" and " ".join(words(c)) in text
        ]
        steps: list[dict[str, Any]] = [{"list": table, "order_by": [order], "internal": True, "as": "rows"}]
        if not fields:
            fields = [key]
        steps.append({"return": {"map": {"over": "$rows", "as": "r", "to": {"pick": ["$r", fields]}}}})
        does = f"lists the {', '.join(fields)} of every {_entity(table).lower()}"
        return Bound("read", steps, does=[does])

    def _create(self, op: Operation, props: dict[str, dict[str, Any]], table: str) -> Bound:
        """A new record of the table the tool names: its arguments named like columns, its list
        arguments named like its child lists as their rows, `$now` in its date-time columns, its key
        generated, and its key added to the list of it its owner keeps (`users.reservations`)."""
        data, key = self.data, self.data.key(table)
        columns = data.tables[table].columns
        steps: list[dict[str, Any]] = []
        bound = Bound("write", steps)
        values: dict[str, Any] = {}
        lists: list[tuple[str, str]] = []
        kept: list[str] = []
        for a, schema in props.items():
            if _is_list(schema):
                child = next((t for t, k in data.links.items() if k.parent == table and k.field == a), None)
                if child is not None:
                    lists.append((a, child))
                    kept.append(a)
            elif a in columns and a != key:
                values[a] = f"$args.{a}"
                kept.append(a)
                self._check_ref(a, table, steps, bound, owner=False)
        if self.clock:
            values.update({c: "$now" for c in data.stamps(table) if c not in values})
        order = _order(data, table)
        if order:
            steps.append({"count": table, "as": "_count"})
            values[order] = "$_count"
        steps.append({"create": table, "values": values, "as": "created"})
        bound.does.append(f"creates a {_entity(table).lower()} from " + ", ".join(f"`{a}`" for a in kept))
        for a, child in lists:
            steps.append(self._rows_from(a, child, "$created." + key))
            bound.does.append(f"adds each of `{a}` to its {child}")
        for ref in data.snap.references:
            owner, _, target = ref.partition("[] -> ")
            if target != f"{table}.{key}":
                continue
            parent, column = owner.split(".")
            link = next(
                (c for c, col in columns.items() if col.references == f"{parent}.{data.key(parent)}"), None
            )
            if link is None or link not in values:
                continue
            steps.append(
                {
                    "update": parent,
                    "key": {data.key(parent): f"$created.{link}"},
                    "set": {column: {"append": [f"$row.{column}", f"$created.{key}"]}},
                }
            )
            bound.does.append(f"adds its {key} to the {_entity(parent).lower()}'s {column}")
        missing = [a for a in props if a not in kept]
        if missing:
            bound.not_modelled.append("not stored: " + ", ".join(f"`{a}`" for a in missing))
        steps += [self._view(table, f"$created.{key}", "record"), {"return": "$record"}]
        return bound

    def _rows_from(self, arg: str, child: str, parent_key: str) -> dict[str, Any]:
        """A loop creating one child row per element of a list argument, its fields by column name;
        a field the element lacks comes from the row a reference column of it names (a flight's
        origin from the flight it names)."""
        data, link = self.data, self.data.links[child]
        columns = data.tables[child].columns
        own = [c for c in columns if c not in {data.key(child), link.by, link.part.order}]
        loop: list[dict[str, Any]] = []
        refs: dict[str, str] = {}
        for c in own:
            target = columns[c].references
            if target and target.split(".")[0] in data.tables:
                other, other_key = target.split(".")
                name = f"_ref_{c}"
                loop.append({"get": other, "key": {other_key: f"$_el.{c}"}, "optional": True, "as": name})
                refs.update(
                    {o: name for o in data.tables[other].columns if o in own and o not in refs and o != c}
                )
        values: dict[str, Any] = {link.by: parent_key}
        for c in own:
            values[c] = {"coalesce": [f"$_el.{c}", f"${refs[c]}.{c}"]} if c in refs else f"$_el.{c}"
        if link.part.order:
            values[link.part.order] = "$_i"
        loop.append({"create": child, "values": values})
        return {"for_each": f"$args.{arg}", "as": "_el", "index": "_i", "steps": loop}

    def _write(self, op: Operation, props: dict[str, dict[str, Any]], arg: str, table: str) -> Bound:
        data, key = self.data, self.data.key(table)
        entity = _entity(table)
        name_words = words(op.name)
        steps: list[dict[str, Any]] = [
            {"get": table, "key": {key: f"$args.{arg}"}, "error": f"{entity} not found", "as": "row"}
        ]
        bound = Bound("write", steps)
        states = data.states(table)
        required_states: set[str] = set()
        for column, values in states.items():
            for value in values:
                if _in_name(value, name_words):
                    required_states.add(column)
                    steps.append(
                        {
                            "require": {"eq": [f"$row.{column}", _lit(value)]},
                            "error": _say(f"The {entity.lower()} is not {value}"),
                        }
                    )
                    bound.rules.append(f"the {entity.lower()}'s {column} must be '{value}'.")
        sentences = _sentences(op.description)
        used: set[str] = set()
        changes: dict[str, Any] = {}
        patches: dict[str, Any] = {}
        required = set(op.input_schema.get("required") or ())
        for a, schema in props.items():
            if a == arg:
                continue
            if _is_list(schema):
                self._check_list(op, a, props, table, steps, bound)
            elif a in data.tables[table].columns:
                (changes if a in required else patches)[a] = f"$args.{a}"
            else:
                self._check_ref(a, table, steps, bound)
        effects: list[dict[str, Any]] = []
        for column, values in states.items():
            target = self._new_state(op, sentences, column, values, used)
            once = [s for s in sentences if re.search(r"\bonly\b.*\bonce\b|\bonce only\b", s, re.I)]
            if target is None and once and column in required_states:
                target = _participle(verb_of(op))
                used.update(once)
                bound.rules.append(
                    f"it can be done once: the {entity.lower()}'s {column} then becomes '{target}'."
                )
            if target is not None:
                changes[column] = _lit(target)
                effects += self._mirrored(table, column, target, arg, sentences, used, bound)
                if column not in required_states:
                    steps.append(
                        {
                            "require": {"ne": [f"$row.{column}", _lit(target)]},
                            "error": _say(f"The {entity.lower()} is already {target}"),
                        }
                    )
                    bound.rules.append(f"a {entity.lower()} already '{target}' is refused.")
        effects = self._pairs(op, props, arg, table, sentences, used, bound) + effects
        if not (changes or patches or effects):
            effects = self._child_by_state(op, props, arg, table, bound)
        if changes or patches:
            step: dict[str, Any] = {"update": table, "key": {key: f"$args.{arg}"}, "as": "row"}
            if changes:
                step["set"] = changes
            if patches:
                step["patch"] = patches
            steps.append(step)
            bound.does.append(
                f"sets the {entity.lower()}'s " + ", ".join(
                    f"{c} to {json.dumps(v) if not str(v).startswith('$') else '`' + str(v)[6:] + '`'}"
                    for c, v in {**changes, **patches}.items()
                )
            )  # fmt: skip
            if sentences and not used:
                used.add(sentences[0])
        steps += effects
        steps += [self._view(table, f"$args.{arg}", "record"), {"return": "$record"}]
        for sentence in sentences:
            if sentence not in used and (
                sentence is sentences[0] and not (changes or patches or effects) or _EFFECT.search(sentence)
            ):
                bound.not_modelled.append(sentence)
        return bound

    def _child_by_state(
        self, op: Operation, props: dict[str, dict[str, Any]], arg: str, table: str, bound: Bound
    ) -> list[dict[str, Any]]:
        """`send_certificate(user_id, amount)`: the name's noun is a state of a child list of the
        record (`certificate`, a `source` of the user's payment methods): a new child row in that
        state, with the arguments named like its columns."""
        name_words = words(op.name)[1:]
        for child, link in self.data.links.items():
            if link.parent != table:
                continue
            columns = self.data.tables[child].columns
            for column, values in self.data.states(child).items():
                value = next((v for v in values if _in_name(v, name_words)), None)
                if value is None:
                    continue
                new: dict[str, Any] = {link.by: f"$args.{arg}", column: _lit(value)}
                new.update({a: f"$args.{a}" for a in props if a in columns and a != arg})
                steps: list[dict[str, Any]] = []
                if link.part.order:
                    steps.append(
                        {
                            "count": child,
                            "where": [{"column": link.by, "value": f"$args.{arg}"}],
                            "internal": True,
                            "as": "_count",
                        }
                    )
                    new[link.part.order] = "$_count"
                steps.append({"create": child, "values": new})
                given = ", ".join(f"`{a}`" for a in new if a not in (link.by, column, link.part.order))
                bound.does.append(f"adds a '{value}' to its {child}" + (f" with {given}" if given else ""))
                return steps
        return []

    def _mirrored(
        self,
        table: str,
        column: str,
        state: str,
        arg: str,
        sentences: list[str],
        used: set[str],
        bound: Bound,
    ) -> list[dict[str, Any]]:
        """Rows that the data's records in `state` hold and its other records lack: in a child list,
        each row of one type copied as another (a `refund` row per `payment` row), when a sentence
        names the new type. Induced from the records: it holds in ≥ 90% of those in `state`."""
        key = self.data.key(table)
        records = self.data.snap.rows[table]
        inside = [r for r in records if r.get(column) == state]
        outside = [r for r in records if r.get(column) != state]
        if len(inside) < 3:
            return []
        for child, link in self.data.links.items():
            if link.parent != table or link.part.as_ != "list":
                continue
            groups: dict[Any, list[dict[str, Any]]] = {}
            for row in self.data.snap.rows[child]:
                groups.setdefault(row.get(link.by), []).append(row)
            ckey, order = self.data.key(child), link.part.order
            for kind, kinds in self.data.states(child).items():
                rest = [c for c in self.data.tables[child].columns if c not in {ckey, link.by, order, kind}]
                for new in kinds:
                    said = [s for s in sentences if _stem_in(new, s)]
                    if not said:
                        continue
                    for source in kinds:
                        if source == new:
                            continue
                        rows = [_typed(groups.get(r.get(key), []), kind, rest) for r in inside]
                        mirror = sum(1 for r in rows if r.get(source) and r.get(source) == r.get(new))
                        absent = sum(
                            1
                            for r in outside
                            if not any(k.get(kind) == new for k in groups.get(r.get(key), []))
                        )
                        if mirror < 0.9 * len(inside) or absent < 0.9 * len(outside):
                            continue
                        used.add(said[0])
                        values: dict[str, Any] = {link.by: f"$args.{arg}", kind: _lit(new)}
                        values.update({c: f"$_copied.{c}" for c in rest})
                        if order:
                            values[order] = {"add": [{"len": "$_kids"}, "$_n"]}
                        bound.does.append(f"adds to its {child} a '{new}' row copying each '{source}' row")
                        credit = self._credit(child, rest, sentences, used, bound)
                        copies = {
                            "filter": {
                                "over": "$_kids",
                                "as": "x",
                                "where": {"eq": [f"$x.{kind}", _lit(source)]},
                            }
                        }
                        return [
                            {
                                "list": child,
                                "where": [{"column": link.by, "value": f"$args.{arg}"}],
                                "order_by": [order or ckey],
                                "internal": True,
                                "as": "_kids",
                            },
                            {
                                "for_each": copies,
                                "as": "_copied",
                                "index": "_n",
                                "steps": [{"create": child, "values": values}, *credit],
                            },
                        ]
        return []

    def _credit(
        self, child: str, rest: list[str], sentences: list[str], used: set[str], bound: Bound
    ) -> list[dict[str, Any]]:
        """A copied row's amount "added to the user's gift card balance if the payment was made using a
        gift card": the row it points at, when in that state, gets the amount added to that number."""
        columns = self.data.tables[child].columns
        amounts = [c for c in rest if columns[c].type == "number"]
        for sentence in sentences:
            said = words(sentence)
            if sentence in used or "added" not in said or not amounts:
                continue
            for ref in rest:
                target = columns[ref].references
                if not target:
                    continue
                other, other_key = target.split(".")
                numbers = [
                    c for c, col in self.data.tables[other].columns.items()
                    if col.type == "number" and all(w in said for w in words(c))
                ]  # fmt: skip
                kinds = [
                    (c, v) for c, vs in self.data.states(other).items() for v in vs if _in_name(v, said)
                ]  # fmt: skip
                if len(numbers) != 1 or len(kinds) != 1:
                    continue
                kind, value = kinds[0]
                used.add(sentence)
                bound.does.append(f"adds its {amounts[0]} to the {numbers[0]} of a {value} it names")
                return [
                    {
                        "get": other,
                        "key": {other_key: f"$_copied.{ref}"},
                        "optional": True,
                        "as": "_credited",
                    },
                    {
                        "update": other,
                        "key": {other_key: f"$_copied.{ref}"},
                        "set": {numbers[0]: {"add": [f"$row.{numbers[0]}", f"$_copied.{amounts[0]}"]}},
                        "when": {"eq": [f"$_credited.{kind}", _lit(value)]},
                    },
                ]
        return []

    def _pairs(
        self, op: Operation, props: dict[str, dict[str, Any]], arg: str, table: str,
        sentences: list[str], used: set[str], bound: Bound,
    ) -> list[dict[str, Any]]:  # fmt: skip
        """`item_ids` with `new_item_ids`: each old element of a child list is checked against its
        new row (`of the same product`), and replaced by it when the verb replaces (modify, change)."""
        out: list[dict[str, Any]] = []
        for new in props:
            parts = words(new)
            old = "_".join(parts[1:])
            if len(parts) < 2 or parts[0] != "new" or old not in props:
                continue
            if not (_is_list(props[new]) and _is_list(props[old])):
                continue
            column = one_of(old)
            kids = [
                t
                for t, k in self.data.links.items()
                if k.parent == table and column in self.data.tables[t].columns
            ]
            other = self.data.keyed_table(column)
            if not kids or other is None:
                continue
            child, link = kids[0], self.data.links[kids[0]]
            ckey = self.data.key(child)
            skip = {ckey, link.by, link.part.order, "position"}
            shared = [
                c
                for c in self.data.tables[child].columns
                if c in self.data.tables[other].columns and c not in skip
            ]
            loop: list[dict[str, Any]] = [
                {"get": other, "key": {self.data.key(other): {"at": [f"$args.{new}", "$_i"]}}, "as": "_new"},
                {
                    "get": child,
                    "where": [
                        {"column": link.by, "value": f"$args.{arg}"},
                        {"column": column, "value": "$_old"},
                    ],
                    "order_by": [link.part.order or ckey],
                    "as": "_el",
                },
            ]
            for c in shared:
                target = self.data.tables[child].columns[c].references
                noun = _entity(target.split(".")[0]).lower() if target else None
                if noun and any(re.search(rf"\bsame {noun}\b", s.lower()) for s in sentences):
                    loop.append(
                        {
                            "require": {"eq": [f"$_new.{c}", f"$_el.{c}"]},
                            "error": f"A new {column} must be of the same {noun}",
                        }
                    )
                    bound.rules.append(
                        f"each of `{new}` must be of the same {noun} as the element it replaces."
                    )
            if verb_of(op) not in _REPLACE:
                unmade = [s for s in sentences if "new" in words(s) and s not in used]
                bound.not_modelled += unmade
                used.update(unmade)
            else:
                loop.append(
                    {"update": child, "key": {ckey: f"$_el.{ckey}"}, "set": {c: f"$_new.{c}" for c in shared}}
                )
                bound.does.append(
                    f"replaces each of the {child} named by `{old}` with the row named by `{new}` ({', '.join(shared)})"
                )
                used.update(s for s in sentences if "new" in words(s))
                ledger = self._ledger(props, arg, table, shared, bound)
                if ledger is not None:
                    column_diff, after = ledger
                    out.append({"let": "_diff", "value": 0})
                    loop.append(
                        {
                            "let": "_diff",
                            "value": {
                                "add": ["$_diff", {"sub": [f"$_new.{column_diff}", f"$_el.{column_diff}"]}]
                            },
                        }
                    )
                    out.append({"for_each": f"$args.{old}", "as": "_old", "index": "_i", "steps": loop})
                    out += after
                    continue
            out.append({"for_each": f"$args.{old}", "as": "_old", "index": "_i", "steps": loop})
        return out

    def _ledger(
        self, props: dict[str, dict[str, Any]], arg: str, table: str, shared: list[str], bound: Bound
    ) -> tuple[str, list[dict[str, Any]]] | None:
        """An argument "to pay or receive a refund for the price difference": the replaced elements'
        difference in that column, paid (or refunded) with it, as a row of the target's child list
        that has the argument's column, a number and a type whose values are the pay and refund words."""
        for a, schema in props.items():
            said = words(str(schema.get("description", "")))
            if a == arg or _is_list(schema) or "difference" not in said:
                continue
            before = said[: said.index("difference")]
            numeric = [c for c in shared if c in before]
            for child, link in self.data.links.items():
                columns = self.data.tables[child].columns
                if link.parent != table or link.part.as_ != "list" or a not in columns or not numeric:
                    continue
                amounts = [c for c, col in columns.items() if col.type == "number" and c not in numeric]
                for kind, kinds in self.data.states(child).items():
                    pay = [v for v in kinds if any(w.startswith("pay") for w in words(v)) and "pay" in said]
                    back = [v for v in kinds if _stem_in(v, " ".join(said))]
                    back = [v for v in back if v not in pay]
                    if not (pay and back and amounts):
                        continue
                    order = link.part.order
                    values: dict[str, Any] = {
                        link.by: f"$args.{arg}",
                        kind: {"if": [{"gt": ["$_diff", 0]}, _lit(pay[0]), _lit(back[0])]},
                        amounts[0]: {"abs": "$_diff"},
                        a: f"$args.{a}",
                    }
                    if order:
                        values[order] = {"len": "$_ledger"}
                    bound.does.append(
                        f"adds to its {child} a '{pay[0]}' (or '{back[0]}') row of the {numeric[0]} difference, with `{a}`"
                    )
                    return numeric[0], [
                        {
                            "list": child,
                            "where": [{"column": link.by, "value": f"$args.{arg}"}],
                            "internal": True,
                            "as": "_ledger",
                        },
                        {"create": child, "values": values, "when": {"ne": ["$_diff", 0]}},
                    ]
        return None

    def _new_state(
        self, op: Operation, sentences: list[str], column: str, values: list[str], used: set[str]
    ) -> str | None:
        """The state a write leads to: quoted in a sentence naming the column, else its verb's."""
        for sentence in sentences:
            if column in words(sentence):
                quoted = _QUOTED.findall(sentence)
                if quoted:
                    used.add(sentence)
                    return quoted[-1]
        verb = verb_of(op)
        if verb in STATE_VERBS and STATE_VERBS[verb][0] in values:
            return STATE_VERBS[verb][0]
        return None

    def _check_ref(
        self, arg: str, table: str, steps: list[dict[str, Any]], bound: Bound, *, owner: bool = True
    ) -> None:
        other = self.data.keyed_table(arg)
        if other is None or other == table:
            return
        name = f"_{arg}"
        steps.append(
            {
                "get": other,
                "key": {self.data.key(other): f"$args.{arg}"},
                "error": f"{_entity(other)} not found",
                "as": name,
            }
        )
        bound.rules.append(f"`{arg}` must name an existing {_entity(other).lower()}.")
        link = self.data.links.get(other)
        if owner and link is not None and link.by in self.data.tables[table].columns:
            steps.append(
                {"require": {"eq": [f"${name}.{link.by}", f"$row.{link.by}"]},
                 "error": f"The {_entity(other).lower()} does not belong to this {_entity(table).lower()}'s {_entity(link.parent).lower()}"}
            )  # fmt: skip
            bound.rules.append(
                f"`{arg}` must belong to the same {_entity(link.parent).lower()} as the {_entity(table).lower()}."
            )

    def _check_list(
        self, op: Operation, arg: str, props: dict[str, dict[str, Any]], table: str,
        steps: list[dict[str, Any]], bound: Bound,
    ) -> None:  # fmt: skip
        one = one_of(arg)
        children = [
            t
            for t, link in self.data.links.items()
            if link.parent == table and one in self.data.tables[t].columns
        ]
        if children:
            child = children[0]
            link = self.data.links[child]
            name = f"_{arg}_of"
            steps.append(
                {
                    "list": child,
                    "where": [{"column": link.by, "value": f"$row.{self.data.key(table)}"}],
                    "internal": True,
                    "as": name,
                }
            )
            steps.append(
                {"require": {"not": {"exists": {"filter": {"over": f"$args.{arg}", "as": "x", "where": {"not_in": ["$x", f"${name}.{one}"]}}}}},
                 "error": f"Some {arg} are not in this {_entity(table).lower()}"}
            )  # fmt: skip
            bound.rules.append(f"each of `{arg}` must be among the {_entity(table).lower()}'s {child}.")
            return
        base = one[4:] if one.startswith("new_") else one
        other = self.data.keyed_table(base)
        if other is None:
            return
        name = f"_{arg}_rows"
        steps.append(
            {
                "list": other,
                "where": [{"column": self.data.key(other), "op": "in", "value": f"$args.{arg}"}],
                "internal": True,
                "as": name,
            }
        )
        steps.append(
            {
                "require": {"eq": [{"len": f"${name}"}, {"len": {"unique": f"$args.{arg}"}}]},
                "error": f"Some {arg} name no {_entity(other).lower()}",
            }
        )
        bound.rules.append(f"each of `{arg}` must name an existing {_entity(other).lower()}.")
        for flag in _USABLE & set(self.data.tables[other].columns):
            if self.data.tables[other].columns[flag].type == "boolean":
                steps.append(
                    {
                        "require": {
                            "not": {
                                "exists": {
                                    "filter": {"over": f"${name}", "as": "x", "where": {"not": f"$x.{flag}"}}
                                }
                            }
                        },
                        "error": f"Some {arg} are not {flag}",
                    }
                )
                bound.rules.append(f"each of `{arg}` must be {flag}.")
        pair = f"{one[4:]}s" if one.startswith("new_") else None
        for other_arg in props:
            if pair and words(other_arg) == words(arg)[1:]:
                steps.append(
                    {
                        "require": {"eq": [{"len": f"$args.{arg}"}, {"len": f"$args.{other_arg}"}]},
                        "error": f"`{arg}` and `{other_arg}` must have the same length",
                    }
                )
                bound.rules.append(f"`{arg}` and `{other_arg}` must have the same length.")


def _first(op: Operation, why: str) -> str:
    sentences = _sentences(op.description)
    return f"not modelled ({why}): {sentences[0] if sentences else op.name}"


def _calculator(op: Operation, props: dict[str, dict[str, Any]]) -> Bound | None:
    """A computation over one arithmetic text argument (`calculate(expression)`): `calc`."""
    text = [a for a, s in props.items() if s.get("type") == "string"]
    said = " ".join(
        words(op.description + " " + " ".join(str(s.get("description", "")) for s in props.values()))
    )
    if (
        len(props) != 1
        or len(text) != 1
        or not any(w in said.split() for w in ("mathematical", "arithmetic"))
    ):
        return None
    arg = text[0]
    steps: list[dict[str, Any]] = [
        {"let": "value", "value": {"calc": f"$args.{arg}"}},
        {"fail": "Cannot evaluate the expression", "when": {"is_null": "$value"}},
        {"return": {"round": ["$value", 10]}},
    ]
    return Bound("read", steps, does=[f"evaluates the arithmetic of `{arg}` (to 10 decimal places)"])


# -- the domain ----------------------------------------------------------------------------------


def read_operations(spec: str | Path) -> list[Operation]:
    """The operations of one spec file, in the file's order (a SpecError when it holds none)."""
    path = Path(spec)
    raw, failures = read_file(path.name, path.read_bytes())
    if not raw:
        why = failures[0].reason if failures else "it holds no operations"
        raise SpecError([Problem(str(path), "", f"cannot read a tool list: {why}")])
    order = {r.pointer: i for i, r in enumerate(raw)}
    ops, _ = normalize(raw)
    return sorted(ops, key=lambda op: order.get(op.pointer, len(order)))


@dataclass
class FromData:
    """What `generate_domain` made: the folder, and per tool what it does or why it is missing."""

    folder: Path
    tools: dict[str, Bound]
    not_compiled: dict[str, str]
    #: with `--llm`: proposals accepted, and why the others were not
    llm: dict[str, int] = field(default_factory=dict)

    def report(self) -> dict[str, Any]:
        return {
            "tools": {
                n: {
                    "kind": b.kind, "does": b.does, "rules": b.rules, "not_modelled": b.not_modelled,
                    **({"proposed": b.proposed} if b.proposed else {}),
                }
                for n, b in self.tools.items()
            },
            "not_compiled": self.not_compiled,
            **({"llm": self.llm} if self.llm else {}),
        }  # fmt: skip


def _key_pattern(keys: list[Any]) -> str | None:
    """A `pattern` ids scheme that every key fits (`#W9999999`, `XXXXXX`), or None."""
    texts = [k for k in keys if isinstance(k, str)]
    if len(texts) < 2 or len(texts) != len(keys) or len({len(k) for k in texts}) != 1:
        return None
    out = []
    for chars in zip(*texts, strict=True):
        kinds = set(chars)
        if len(kinds) == 1:
            c = chars[0]
            out.append("\\" + c if c in "Aa9Xx\\" else c)
        elif all(c.isdigit() for c in kinds):
            out.append("9")
        elif all(c.isascii() and c.isupper() for c in kinds):
            out.append("A")
        elif all(c.isascii() and c.islower() for c in kinds):
            out.append("a")
        elif all(c.isascii() and (c.isupper() or c.isdigit()) for c in kinds):
            out.append("X")
        elif all(c.isascii() and (c.islower() or c.isdigit()) for c in kinds):
            out.append("x")
        else:
            return None
    pattern = "".join(out)
    return pattern if any(c in "Aa9Xx" for c in pattern.replace("\\A", "").replace("\\9", "")) else None


def _steps(raw: list[dict[str, Any]]) -> list[Step]:
    """Steps as separate trees (a part shared by two steps would be written as a YAML alias)."""
    return [Step(json.loads(json.dumps(step))) for step in raw]


def _views(data: Records, builder: DomainBuilder) -> dict[str, str]:
    views: dict[str, str] = {}
    for table in data.shapes:
        shaper = _Shaper(data)
        try:
            steps, value = shaper.record(table, "rec")
        except _Unshaped:
            continue
        head = {"get": table, "key": {data.key(table): "$key"}, "as": "rec"}
        name = f"{table}_record"
        builder.fragment(name, ["key"], _steps([head, *steps, {"return": value}]))
        views[table] = name
    return views


def _readme(name: str, result: FromData, snap: Snapshot) -> str:
    lines = [
        f"# {name}",
        "",
        f"Generated by `toolgym generate --data` from {snap.source.name} and the tool list.",
        "",
    ]
    lines += (
        ["## Tables", ""]
        + [f"- `{t}`: {len(snap.rows[t])} records" for t in snap.tables]
        + ["", "## Tools", ""]
    )
    for tool, bound in result.tools.items():
        lines.append(f"- `{tool}` ({bound.kind}): " + ("; ".join(bound.does) or "checks its arguments only"))
        lines += [f"  - rule: {r}" for r in bound.rules]
        lines += [f"  - not modelled: {s}" for s in bound.not_modelled]
        lines += [
            f"  - steps proposed by a model (`--llm`), checked on sample calls, for: {s}"
            for s in bound.proposed
        ]
    if result.not_compiled:
        lines += ["", "## Not compiled", ""] + [f"- `{t}`: {why}" for t, why in result.not_compiled.items()]
    return "\n".join(lines) + "\n"


def _policy(result: FromData) -> str:
    """policy.md: the rules each write enforces, in its own section; nothing it does not check."""
    out = ["# Policy", "", "Every tool refuses a record that does not exist. The writes also check:", ""]
    for tool, bound in result.tools.items():
        if bound.rules:
            out += [f"## `{tool}`", "", *(f"- {r[0].upper()}{r[1:]}" for r in bound.rules), ""]
    return "\n".join(out)


def domain_name(data: str | Path) -> str:
    """A domain name from the data's path: its folder's name for a file (`retail/db.json` -> `retail`)."""
    source = Path(data).resolve()
    stem = (
        source.parent.name if source.is_file() and source.stem in ("db", "data", "database") else source.stem
    )
    return "-".join(words(stem)) or "data"


#: called before the folder is written: may change the tools (`toolgen.proposals.proposer`)
Refine = Callable[[DomainBuilder, FromData, Records, list[Operation]], dict[str, int]]


def generate_domain(
    spec: str | Path, data: str | Path, out: str | Path, *, name: str | None = None, overwrite: bool = False,
    refine: Refine | None = None,
) -> FromData:  # fmt: skip
    """Write one domain to `out` from a tool list (`spec`) and records (`data`); see the module docstring.
    `refine`: e.g. a model proposing steps for what is not modelled (`toolgen.proposals.proposer`)."""
    ops = read_operations(spec)
    snap = read_snapshot(data)
    label = name or domain_name(data)
    builder = seed_domain(snap, label, description=f"Generated from {Path(spec).name} and {Path(data).name}.")
    facts = Records(snap)
    stamps = sorted(v for t in snap.tables for c in facts.stamps(t) for v in (r[c] for r in snap.rows[t]))
    if stamps:
        builder.head["clock"] = {"start": stamps[-1], "tick_seconds": 60}
    for table, raw in builder.tables.items():
        key = facts.key(table)
        for column, col in raw["columns"].items():
            if column != key:
                col["nullable"] = True
        if snap.tables[table].columns[key].type == "string":
            pattern = _key_pattern([r[key] for r in snap.rows[table]])
            if pattern:
                raw["ids"] = {"scheme": "pattern", "pattern": pattern}
    binder = _Binder(facts, _views(facts, builder), bool(stamps))
    result = FromData(Path(out), {}, {})
    for op in ops:
        props = _properties(op)
        bound = _calculator(op, props) if tableless(op, False) else None
        outcome = bound or binder.bind(op)
        if isinstance(outcome, str):
            result.not_compiled[op.name] = outcome
            continue
        builder.tool(op.name, op.description, outcome.kind, op.input_schema, _steps(outcome.steps))
        result.tools[op.name] = outcome
    if refine is not None:
        result.llm = refine(builder, result, facts, ops)
    builder.policy = _policy(result)
    folder = builder.write(out, overwrite=overwrite)
    (folder / "README.md").write_text(_readme(label, result, snap), encoding="utf-8")
    (folder / "report.json").write_text(json.dumps(result.report(), indent=2) + "\n", encoding="utf-8")
    return result
