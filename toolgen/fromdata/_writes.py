"""Writes bound to the tables: a new record, or a change to the record an argument names, with the
checks their names and descriptions state (states, references and their owner, list arguments).
"""

from __future__ import annotations

import json
import re
from typing import Any

from toolgen.model import Operation
from toolgen.naming import words
from toolgen.pure import verb_of
from toolgen.synth.effects import STATE_VERBS

from ._bound import Bound, _entity, _in_name, _is_list, _lit, _participle, _say, _sentences
from ._effects import _Effects
from ._records import _order, one_of

#: a sentence that says what a call does to the data
_EFFECT = re.compile(
    r"\b(will|is|are|be)\b.*\b(changed|added|set|refunded|removed|deducted|charged|updated)\b|\bwill\b", re.I
)
_QUOTED = re.compile(r"""['"`]([^'"`]{1,40})['"`]""")
#: boolean columns that must be true for a row an argument names to be chosen
_USABLE = frozenset({"available", "active", "enabled", "in_stock", "is_available", "is_active"})


class _Writes(_Effects):
    """Creates and changes of records, and the checks they state."""

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
