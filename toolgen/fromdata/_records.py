"""The records of a snapshot as the tools see them: keys, states, date-time columns, parent
links, and the steps that build one record in the data's own shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from simulator.format.layout import Collection, Part
from toolgen.naming import singular, words
from toolgen.snapshot import Snapshot

#: a column whose values name a record's state: a string column with at most this many values
_STATES = 12
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}$")


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
