"""Binding one operation to the records' tables: the record its arguments name, then a write, or a
read (a record by key, the first or every record matching, every record of a table, a calculator).
"""

from __future__ import annotations

from typing import Any

from toolgen.model import Operation
from toolgen.naming import singular, words
from toolgen.pure import verb_of

from ._bound import Bound, _entity, _first, _is_list, _properties
from ._records import one_of
from ._writes import _Writes

_SEARCH = frozenset("search list query filter browse".split())


class _Binder(_Writes):
    """Binds each operation of a tool list to the tables, by its argument names."""

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
