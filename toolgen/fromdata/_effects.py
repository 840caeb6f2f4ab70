"""What a write does beyond its own record, induced from the records: a child row in a named
state, rows mirrored (a refund per payment) and credited, list elements replaced and their
difference paid. `_Effects` also holds the binder's state, which the writes and reads build on.
"""

from __future__ import annotations

import re
from typing import Any

from toolgen.model import Operation
from toolgen.naming import words
from toolgen.pure import verb_of

from ._bound import Bound, _entity, _in_name, _is_list, _lit, _stem_in, _typed
from ._records import Records, one_of

_REPLACE = frozenset("modify change replace update swap switch edit".split())


class _Effects:
    """The records, the record views and whether there is a clock; the effects of writes."""

    def __init__(self, data: Records, views: dict[str, str], clock: bool):
        self.data = data
        self.views = views
        self.clock = clock

    def _view(self, table: str, key: str, out: str) -> dict[str, Any]:
        return {"use": self.views[table], "with": {"key": key}, "as": out}

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
