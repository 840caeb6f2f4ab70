"""Parsed collections into tables for `toolgen.snapshot`: each collection a table keyed by the field
that repeats its map's keys (or its own id field), nested objects as columns or child tables, the
rows in the source's order, the layout parts that nest them back into the source's shape, and
the references found between columns and other tables' keys.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from functools import lru_cache
from typing import Any

from simulator.format.layout import Collection, Part
from simulator.format.spec import Column, ColumnType
from toolgen.naming import singular

from .snapshotfiles import MAX_DEPTH

_MISSING = object()
_INT64 = 2**63
_NAME = re.compile(r"[^A-Za-z0-9_]+")


class _Fail(Exception):
    def __init__(self, where: str, message: str):
        super().__init__(message)
        self.where, self.message = where, message


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer" if -_INT64 <= value < _INT64 else "big"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "list"


def _column_type(values: list[Any]) -> ColumnType:
    """A scalar column's type from its (non-null) values; `json` when they mix or cannot be stored."""
    kinds = {_kind(v) for v in values} - {"null"}
    if len(kinds) == 1 and kinds <= {"boolean", "integer", "number", "string"}:
        return kinds.pop()  # type: ignore[return-value]
    return "number" if kinds == {"integer", "number"} else "json"


def _key_kind(values: list[Any]) -> bool:
    """Whether `values` can be a key column: all strings or all integers, none repeated."""
    kinds = {_kind(v) for v in values}
    return len(kinds) == 1 and kinds <= {"string", "integer"} and len(set(values)) == len(values)


def _map_key(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _merged_order(objects: list[dict[str, Any]]) -> tuple[list[str], bool]:
    """The fields of `objects` in an order each object's own order agrees with, and whether there is one."""
    after: dict[str, set[str]] = {}
    first_seen: dict[str, int] = {}
    for obj in objects:
        keys = list(obj)
        for i, k in enumerate(keys):
            first_seen.setdefault(k, len(first_seen))
            if i:
                after.setdefault(k, set()).add(keys[i - 1])
    order: list[str] = []
    placed: set[str] = set()
    pending = sorted(first_seen, key=first_seen.__getitem__)
    while pending:
        ready = next((k for k in pending if after.get(k, set()) <= placed), None)
        if ready is None:  # the objects disagree on the order: keep first appearance
            return sorted(first_seen, key=first_seen.__getitem__), False
        order.append(ready)
        placed.add(ready)
        pending.remove(ready)
    return order, True


class _Reader:
    """Builds tables, rows and layout parts from the parsed records of one snapshot."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, Column]] = {}
        self.keys: dict[str, str | list[str]] = {}
        self.rows: dict[str, list[dict[str, Any]]] = {}
        self.notes: list[str] = []
        self._lower: set[str] = set()
        self.parent_links: list[tuple[str, str, str]] = []  # (child table, column, parent table)
        self.preset: dict[tuple[str, str], str] = {}  # (table, field) -> its column, made before the rest
        self.reserved: dict[str, set[str]] = {}  # table -> names its own fields take (nested ones yield)

    # -- names --
    def table_name(self, wanted: str) -> str:
        base = _NAME.sub("_", wanted).strip("_") or "records"
        if base[0].isdigit() or base.lower().startswith("_toolgym"):
            base = f"t_{base}"
        base = _plain(base)
        name, n = base, 2
        while name.lower() in self._lower:
            name, n = f"{base}_{n}", n + 1
        self._lower.add(name.lower())
        self.tables[name], self.rows[name] = {}, []
        return name

    def column_name(
        self, table: str, wanted: str, prefix: str = "", avoid: set[str] | frozenset[str] = frozenset()
    ) -> str:
        """A new column of `table` named after `wanted` (a nested field's after `prefix`_`wanted`
        when its own name is taken), typed `json` until it is filled."""
        base = _NAME.sub("_", wanted).strip("_") or "field"
        if base[0].isdigit() or base.lower().startswith("_toolgym"):
            base = f"f_{base}"
        base = _plain(base)
        taken = {c.lower() for c in self.tables[table]} | {a.lower() for a in avoid}
        if prefix:
            taken |= self.reserved.get(table, set())
        name, n = base, 2
        if name.lower() in taken and prefix:
            name = base = f"{_NAME.sub('_', prefix).strip('_')}_{base}"
            if base[0].isdigit():  # (a prefix from a numbered key, `00`: `f_00_sku`)
                name = base = f"f_{base}"
        while name.lower() in taken:
            name, n = f"{base}_{n}", n + 1
        self.tables[table][name] = Column(type="json", nullable=True)
        return name

    def set_column(
        self,
        table: str,
        column: str,
        rows: list[dict[str, Any]],
        values: list[Any],
        ctype: ColumnType | None = None,
    ) -> None:
        """Fill `column` with `values` (one per row) and type it (`ctype`, else from the values)."""
        real = [v for v in values if v is not _MISSING and v is not None]
        for row, value in zip(rows, values, strict=True):
            row[column] = None if value is _MISSING else value
        kind = ctype or _column_type(real)
        self.tables[table][column] = Column(type=kind, nullable=len(real) < len(values))

    def key_columns(self, table: str) -> list[str]:
        key = self.keys.get(table, "")
        return [key] if isinstance(key, str) else key

    # -- records --
    def fill(
        self,
        table: str,
        objects: list[dict[str, Any]],
        rows: list[dict[str, Any]],
        where: str,
        depth: int,
        prefix: str = "",
    ) -> tuple[dict[str, str | Part], list[str]]:
        """Store `objects` (one per row of `table`) in `rows`; their fields and those omitted when null."""
        if depth > MAX_DEPTH:
            raise _Fail(where, f"nested more than {MAX_DEPTH} levels deep")
        order, agreed = _merged_order(objects)
        if not agreed:
            self.notes.append(f"{where}: the records order their fields differently; written in one order")
        if not prefix:
            self.reserved[table] = {(_NAME.sub("_", n).strip("_") or "field").lower() for n in order}
        fields: dict[str, str | Part] = {}
        omit: list[str] = []
        for name in order:
            values = [o.get(name, _MISSING) for o in objects]
            present = [v for v in values if v is not _MISSING]
            if len(present) < len(values):
                omit.append(name)
                if any(v is None for v in present):
                    self.notes.append(
                        f"{where}.{name}: null in some records, absent in others; written absent"
                    )
            fields[name] = self.field(table, name, values, rows, f"{where}.{name}", depth, prefix)
        return fields, omit

    def field(
        self,
        table: str,
        name: str,
        values: list[Any],
        rows: list[dict[str, Any]],
        where: str,
        depth: int,
        prefix: str,
    ) -> str | Part:
        """One field of the objects stored in `rows`: a column, an object of columns, or a child table."""
        preset = self.preset.get((table, name)) if not prefix else None
        if preset is not None:
            return preset
        real = [v for v in values if v is not _MISSING and v is not None]
        kinds = {_kind(v) for v in real}
        complete = len(real) == len(values)
        single_key = len(self.key_columns(table)) == 1
        if kinds == {"object"}:
            keyed = self.keyed_by(real)
            if (
                keyed is not None
                and complete
                and single_key
                and _lossless([e for v in real for e in v.values()])
            ):
                return self.child(table, name, real, rows, where, depth, keyed)
            first = list(real[0])
            if complete and first and all(list(v) == first for v in real):
                inner, omit = self.fill(
                    table, real, rows, where, depth + 1, prefix=f"{prefix}_{name}" if prefix else name
                )
                return Part(fields=inner, omit_null=omit or False)
        if kinds == {"list"} and complete and single_key:
            items = [x for v in real for x in v]
            if items and all(isinstance(x, dict) for x in items) and _lossless(items):
                return self.child(table, name, real, rows, where, depth, None)
        for v in real:
            _check_depth(v, where, depth)
        column = self.column_name(table, name, prefix)
        self.set_column(table, column, rows, values)
        return column

    @staticmethod
    def keyed_by(maps: list[dict[str, Any]]) -> str | None:
        """The field of every value that repeats its key, in each of `maps` (objects of objects)."""
        values = [(k, v) for m in maps for k, v in m.items()]
        if not values or not all(isinstance(v, dict) for _, v in values):
            return None
        for name in values[0][1]:
            keys = [v.get(name) for _, v in values]
            if {_kind(k) for k in keys} in ({"string"}, {"integer"}) and all(
                _map_key(v.get(name)) == k for k, v in values
            ):
                return name
        return None

    def child(
        self,
        table: str,
        name: str,
        values: list[Any],
        rows: list[dict[str, Any]],
        where: str,
        depth: int,
        keyed: str | None,
    ) -> Part:
        """A child table of `table` for the field `name`: a keyed map (`keyed`: the field that
        repeats each key) or a list (with a `position` and a surrogate integer key)."""
        child = self.table_name(name if name.lower() not in self._lower else f"{table}_{name}")
        parent_key = self.key_columns(table)[0]
        objects: list[dict[str, Any]] = []
        owners: list[Any] = []
        slots: list[int] = []
        in_order = True
        for row, value in zip(rows, values, strict=True):
            elements = list(value.values()) if keyed else value
            if keyed and [e[keyed] for e in elements] != sorted(e[keyed] for e in elements):
                in_order = False
            objects.extend(elements)
            owners.extend([row[parent_key]] * len(elements))
            slots.extend(range(len(elements)))
        crows: list[dict[str, Any]] = [{} for _ in objects]
        names = {n for o in objects for n in o}
        generic = parent_key.lower() in ("id", "key")  # `lines_id`, not a second `id`
        link = self.column_name(child, f"{table}_{parent_key}" if generic else parent_key, avoid=names)
        self.set_column(child, link, crows, owners, self.tables[table][parent_key].type)
        self.parent_links.append((child, link, table))
        order = None
        if not keyed or not in_order:
            order = self.column_name(child, "position", avoid=names)
            self.set_column(child, order, crows, slots, "integer")
        if keyed is None:
            surrogate = self.column_name(child, "id", avoid=names)
            self.set_column(child, surrogate, crows, list(range(1, len(objects) + 1)), "integer")
            self.keys[child] = surrogate
        else:
            column = self.column_name(child, keyed)
            self.set_column(child, column, crows, [o[keyed] for o in objects])
            self.preset[(child, keyed)] = column
            unique = _key_kind([o[keyed] for o in objects])
            self.keys[child] = column if unique else [link, column]
        fields, omit = self.fill(child, objects, crows, where + "[*]", depth + 1)
        self.rows[child] = crows
        return Part.model_validate(
            {
                "table": child,
                "parent": link,
                "as": "map" if keyed else "list",
                "order": order,
                "fields": fields,
                "omit_null": omit or False,
            }
        )

    def collection(self, name: str, value: Any, file: str | None) -> Collection:
        """A top-level collection: `{key: record}` or a list of records."""
        if isinstance(value, dict):
            records, shape = list(value.values()), "map"
        elif isinstance(value, list):
            records, shape = value, "list"
        else:
            raise _Fail(
                name, f"a collection is an object of records or a list of records, not {_kind(value)}"
            )
        for i, r in enumerate(records):
            if not isinstance(r, dict):
                label = list(value)[i] if isinstance(value, dict) else i
                raise _Fail(
                    f"{name}[{label!r}]",
                    f"a record is an object, not {_kind(r)} (every record of a collection is)",
                )
        table = self.table_name(name)
        rows: list[dict[str, Any]] = [{} for _ in records]
        key_field = _record_key(name, value, records)
        names = {n for r in records for n in r}
        if key_field is None:
            column = self.column_name(table, "id" if "id" not in names else "key", avoid=names)
            keys: list[Any] = list(value) if shape == "map" else list(range(1, len(records) + 1))
            self.set_column(table, column, rows, keys, "string" if shape == "map" else "integer")
        else:
            column = self.column_name(table, key_field)
            self.set_column(table, column, rows, [r[key_field] for r in records])
            self.preset[(table, key_field)] = column
        self.keys[table] = column
        fields, omit = self.fill(table, records, rows, name, 1)
        order = None
        if [r[column] for r in rows] != sorted(r[column] for r in rows):
            order = self.column_name(table, "position")
            self.set_column(table, order, rows, list(range(len(rows))), "integer")
        self.rows[table] = rows
        return Collection.model_validate(
            {
                "table": table,
                "as": shape,
                "key": column if shape == "map" and key_field is None else None,
                "order": order,
                "fields": fields,
                "omit_null": omit or False,
                "file": file,
            }
        )


def _lossless(objects: list[dict[str, Any]]) -> bool:
    """Whether objects stored as rows come back exactly: one field order agrees with each object's,
    and no field is null in one object and absent in another (else they are kept as JSON)."""
    if not _merged_order(objects)[1]:
        return False
    counts = Counter(k for o in objects for k in o)
    absent = {k for k, n in counts.items() if n < len(objects)}
    return not any(o.get(k, 0) is None for o in objects for k in absent)


@lru_cache(maxsize=4096)
def _plain(name: str) -> str:
    """`name`, or `name_` when SQLite takes it for a keyword where a name goes (`nothing`)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"CREATE TABLE {name} ({name} INTEGER)")
    except sqlite3.OperationalError:
        return f"{name}_"
    finally:
        conn.close()
    return name


def _check_depth(value: Any, where: str, depth: int) -> None:
    stack = [(value, depth)]
    while stack:
        v, d = stack.pop()
        if d > MAX_DEPTH:
            raise _Fail(where, f"nested more than {MAX_DEPTH} levels deep")
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v)


def _record_key(name: str, value: Any, records: list[dict[str, Any]]) -> str | None:
    """The field that identifies each record of the collection `name`: the one repeating a map's
    keys, or a list's own id field (`id`, or `sale_id` in `sales`) with distinct string or integer values."""
    if not records:
        return None
    if isinstance(value, dict):
        for name in records[0]:
            if all(
                _kind(r.get(name)) in ("string", "integer") and _map_key(r.get(name)) == k
                for k, r in value.items()
            ):
                return name
        return None
    own = {"id", f"{name.lower()}_id", f"{singular(name.lower())}_id"}  # `id`, `sale_id` of `sales`
    names = [n for n in records[0] if n.lower() in own]
    for field_name in sorted(names, key=lambda n: (n.lower() != "id", names.index(n))):
        if _key_kind([r.get(field_name) for r in records]):
            return field_name
    return None


def _targets(column: str, table: str, keysets: dict[str, tuple[str, set[Any]]]) -> list[str]:
    """Tables a column's name points at: `user_id`/`user_ids`/`users` -> `users` (plural forms too),
    or a table whose key column has the column's name (or its singular `_id` form)."""
    low = column.lower()
    stem = low[:-4] if low.endswith("_ids") else low[:-3] if low.endswith("_id") else low
    forms = {stem, f"{stem}s", f"{stem}es"} | ({f"{stem[:-1]}ies"} if stem.endswith("y") else set())
    named = [t for t in keysets if t.lower() in forms]
    keyed = [t for t, (k, _) in keysets.items() if k.lower() in (low, f"{stem}_id") and t not in named]
    return [t for t in named + keyed if t != table]


def _references(reader: _Reader) -> list[str]:
    """Set `references` on each column whose values are all keys of a table its name points at
    (child tables' links to their parent always); a JSON list of such keys is only reported."""
    found: list[str] = []
    keysets = {t: (k, {r[k] for r in reader.rows[t]}) for t, k in reader.keys.items() if isinstance(k, str)}
    links = set()
    for child, link, parent in reader.parent_links:
        links.add((child, link))
        if parent in keysets:
            col = reader.tables[child][link]
            reader.tables[child][link] = col.model_copy(
                update={"references": f"{parent}.{keysets[parent][0]}"}
            )
    for table, columns in reader.tables.items():
        for cname, col in columns.items():
            if (table, cname) in links or cname in reader.key_columns(table):
                continue
            values = [r[cname] for r in reader.rows[table] if r.get(cname) is not None]
            for target in _targets(cname, table, keysets) if values else []:
                key, keys = keysets[target]
                if col.type == reader.tables[target][key].type and all(v in keys for v in values):
                    columns[cname] = col.model_copy(update={"references": f"{target}.{key}"})
                    found.append(f"{table}.{cname} -> {target}.{key}")
                    break
                items = [x for v in values if isinstance(v, list) for x in v]
                if col.type == "json" and items and all(isinstance(v, list) for v in values):
                    if all(type(x) in (str, int) and x in keys for x in items):
                        found.append(f"{table}.{cname}[] -> {target}.{key}")
                        break
    return found
