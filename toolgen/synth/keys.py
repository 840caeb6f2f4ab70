"""A table's key type and id scheme from the schemas of the arguments that carry its key.

    key_shape(entity, record_key, argument_schemas) -> KeyShape(type, ids)
    relaxed(schema, samples, key_type) -> the argument's schema, loosened if the keys would fail it

Every argument that names a row by key votes for an integer or a string key and, for strings, an
id scheme (`uuid`, `pattern` or `hash`). An argument whose schema the chosen keys would fail gets
a relaxed input schema, with a note in its description saying what was relaxed.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from simulator.plan.ids import SLOTS, IdMaker, parse_pattern

from .columns import column_type

__all__ = ["KEY_START", "KeyShape", "key_prefix", "key_samples", "key_shape", "pattern_slots", "relaxed"]

_NUMERIC = ("integer", "number")
#: repeats a pattern leaves open (`+`, `*`, `{2,}`) are drawn this many times
_OPEN_REPEAT = 8
_CONSTRAINTS = ("format", "pattern", "minLength", "maxLength", "minimum", "maximum", "enum", "const")


@dataclass(frozen=True)
class KeyShape:
    """The key column's type (`integer` or `string`) and a non-default id scheme (builder `ids`)."""

    type: str
    ids: dict[str, Any] | None = None
    #: the shape the keys have (`format: uuid`, the source `pattern`), for columns holding them
    shape: dict[str, Any] = field(default_factory=dict)


#: the first generated key's number: keys read like the numbers people quote (`ORD-1001`)
KEY_START = 1001


def key_prefix(entity: str) -> str:
    """The prefix of an entity's generated keys: its initials (`service_record` → `SR-`)."""
    letters = "".join(w[0] for w in entity.split("_") if w)[:3].upper()
    if len(letters) < 2:
        letters = re.sub(r"[^A-Za-z]", "", entity)[:3].upper() or "ID"
    return letters + "-"


def key_samples(table: str, key_type: str, ids: Mapping[str, Any] | None) -> list[Any]:
    """Keys like the ones seed rows and episodes make (to test an argument's schema against)."""
    if key_type == "integer":
        return [1, 2, 37, 1000]
    ids = ids or {"scheme": "hash", "prefix": ""}
    slots = parse_pattern(ids["pattern"]) if ids["scheme"] == "pattern" else ()
    maker = IdMaker(table, ids["scheme"], ids.get("prefix", ""), slots=slots)
    return [maker.key(seed, n) for seed in (0, 7) for n in (1, 2, 3)]


def _json_type(schema: Mapping[str, Any]) -> str | None:
    ctype, _ = column_type(schema)
    return ctype if ctype in (*_NUMERIC, "string", "datetime") else None


def key_shape(record_key: Mapping[str, Any], arguments: Sequence[Mapping[str, Any]]) -> KeyShape:
    """The key of a table, from the schemas of the arguments carrying it (and the record's key)."""
    typed = [a for a in arguments if _json_type(a) is not None]
    numeric = sum(1 for a in typed if _json_type(a) in _NUMERIC)
    if not typed and record_key:
        typed, numeric = [record_key], int(_json_type(record_key) in _NUMERIC)
    if typed and numeric * 2 > len(typed):
        return KeyShape("integer")
    strings = [a for a in typed if _json_type(a) not in _NUMERIC] or ([record_key] if record_key else [])
    if any(s.get("format") == "uuid" for s in strings):
        return KeyShape("string", {"scheme": "uuid"}, {"format": "uuid"})
    for schema in strings:
        pattern = schema.get("pattern")
        slots = pattern_slots(pattern) if isinstance(pattern, str) else None
        if slots is not None:
            return KeyShape(
                "string", {"scheme": "pattern", "prefix": "", "pattern": slots}, {"pattern": pattern}
            )
    return KeyShape("string")


_CLASS = re.compile(r"\[((?:\\.|[^\]\\])+)\]")
_REPEAT = re.compile(r"\{(\d+)(,(\d*))?\}|[+*?]")
_ESCAPES = {"d": "0123456789"}


def _class_chars(body: str) -> set[str] | None:
    """The characters a `[...]` class accepts (no negation, ranges and escapes only)."""
    if body.startswith("^"):
        return None
    chars: set[str] = set()
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            if i + 1 >= len(body):
                return None
            nxt = body[i + 1]
            if nxt in _ESCAPES:
                chars.update(_ESCAPES[nxt])
            elif nxt.isalnum():
                return None
            else:
                chars.add(nxt)
            i += 2
            continue
        if i + 2 < len(body) and body[i + 1] == "-":
            low, high = body[i], body[i + 2]
            if ord(high) < ord(low):
                return None
            chars.update(chr(c) for c in range(ord(low), ord(high) + 1))
            i += 3
            continue
        chars.add(char)
        i += 1
    return chars


def _slot_for(chars: set[str]) -> str | None:
    """The pattern-scheme slot (or escaped literal) whose every draw is one of `chars`."""
    best = max(
        (s for s, alphabet in SLOTS.items() if set(alphabet) <= chars),
        key=lambda s: len(SLOTS[s]),
        default=None,
    )
    if best is not None:
        return best
    for char in sorted(chars):
        if char.isprintable() and not char.isspace():
            return "\\" + char if char in SLOTS or char == "\\" else char
    return None


def pattern_slots(pattern: str) -> str | None:
    """A `pattern` id scheme whose keys `pattern` accepts (`^MG[0-9a-f]{32}$` → `MG` + 32 × `9`),
    or None when the regex is not a simple anchored sequence of literals, classes and repeats."""
    if not (pattern.startswith("^") and pattern.endswith("$")) or pattern.endswith("\\$"):
        return None
    body = pattern[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        unit: str | None
        if char == "[":
            found = _CLASS.match(body, i)
            chars = _class_chars(found[1]) if found else None
            if found is None or not chars:
                return None
            unit, i = _slot_for(chars), found.end()
        elif char == "\\":
            if i + 1 >= len(body):
                return None
            nxt = body[i + 1]
            if nxt in _ESCAPES:
                unit = _slot_for(set(_ESCAPES[nxt]))
            elif nxt.isalnum():
                return None  # \w, \s, \b ...: not a simple set of characters
            else:
                unit = "\\" + nxt if nxt in SLOTS else nxt
            i += 2
        elif char in "().|^$*+?{}":
            return None
        else:
            unit = "\\" + char if char in SLOTS else char
            i += 1
        if unit is None:
            return None
        repeat = _REPEAT.match(body, i)
        count = 1
        if repeat is not None:
            text = repeat[0]
            if text == "?":
                count = 1
            elif text in ("+", "*"):
                count = _OPEN_REPEAT
            elif repeat[2] is None:
                count = int(repeat[1])
            else:
                low, high = int(repeat[1]), repeat[3]
                count = max(low, min(int(high), _OPEN_REPEAT)) if high else max(low, _OPEN_REPEAT)
            i = repeat.end()
        if count > 200:
            return None
        out.append(unit * count)
    text = "".join(out)
    try:
        parse_pattern(text)
    except ValueError:
        return None
    return text


def relaxed(schema: Mapping[str, Any], samples: Sequence[Any], key_type: str) -> dict[str, Any] | None:
    """`schema` loosened so that every sample key passes it, or None when they pass already."""
    checker = jsonschema.Draft202012Validator(dict(schema), format_checker=jsonschema.FormatChecker())
    try:
        if all(checker.is_valid(s) for s in samples):
            return None
    except (jsonschema.exceptions.SchemaError, TypeError, ValueError, re.error):
        pass  # (a pattern Python cannot read, `\p{L}`: relaxed like any other)
    out = {k: v for k, v in schema.items() if k not in (*_CONSTRAINTS, "type", "anyOf", "oneOf", "allOf")}
    given = schema.get("type")
    wanted = "integer" if key_type == "integer" else "string"
    nullable = given == "null" or (isinstance(given, list) and "null" in given)
    out["type"] = [wanted, "null"] if nullable else wanted
    dropped = [k for k in _CONSTRAINTS if k in schema]
    if given not in (wanted, [wanted, "null"], ["null", wanted]):
        dropped.insert(0, f"type {given}" if given else "type")
    note = f"(relaxed to match the service's {wanted} ids: {', '.join(dropped) or 'shape'} dropped)"
    description = out.get("description")
    out["description"] = f"{description} {note}" if isinstance(description, str) and description else note
    return out
