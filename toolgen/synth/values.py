"""Realistic values for one column, from its type, its JSON-Schema hint and its name.

    maker = plan_field(Field("customers", "email", "string", hint={"format": "email"}))
    value = maker(draw)          # draw: the column's own seeded Faker, the row's person, the clock

`plan_field` decides once per column, first rule that applies: the enum or `const`, nested json,
the format, the name (read with the table's), the hint's examples; then pattern, bounds and
lengths are enforced. `handle_column(table)` names the column a person would point at a row with.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from simulator.format.spec import Column

from ..naming import singular, words
from .checks import is_placeholder
from .draws import (
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_PROPERTIES,
    Draw,
    Field,
    Maker,
    Person,
    clock_start,
    code_of,
    datetime_maker,
    examples_of,
    fits,
    flatten_schema,
    hex_digits,
    make_faker,
    random_person,
    whole,
)
from .lexicon import (
    GENERIC_CONTAINERS,
    MAPPING_WORDS,
    handle_column,
    handle_columns,
    has_person,
    has_word,
    person_role,
    table_kind,
)
from .texts import DATE_FORMATS, string_maker

__all__ = [
    "Draw",
    "Field",
    "Maker",
    "Person",
    "clock_start",
    "column_field",
    "flatten_schema",
    "handle_column",
    "handle_columns",
    "has_person",
    "make_faker",
    "person_role",
    "plan_field",
    "table_kind",
]

# ---------------------------------------------------------------------------------------------
# numbers


def _bounds(hint: Mapping[str, Any], integer: bool) -> tuple[float | None, float | None]:
    def number(key: str) -> float | None:
        value = hint.get(key)
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    low, high = number("minimum"), number("maximum")
    step = 1.0 if integer else 0.01
    if hint.get("exclusiveMinimum") is True and low is not None:
        low += step
    elif number("exclusiveMinimum") is not None:
        low = number("exclusiveMinimum") + step  # type: ignore[operator]
    if hint.get("exclusiveMaximum") is True and high is not None:
        high -= step
    elif number("exclusiveMaximum") is not None:
        high = number("exclusiveMaximum") - step  # type: ignore[operator]
    return low, high


#: (words, (low, high, decimals) of an integer column, of a number column), first match wins
_Range = tuple[float, float, int]
NUMBER_RULES: tuple[tuple[frozenset[str], _Range, _Range], ...] = tuple(
    (frozenset(names.split()), integer, number)
    for names, integer, number in (
        ("lat latitude", (-90, 90, 0), (-90, 90, 6)),
        ("lon lng longitude", (-180, 180, 0), (-180, 180, 6)),
        ("age", (18, 90, 0), (18, 90, 1)),
        ("year", (1990, 2025, 0), (1990, 2025, 0)),
        ("month", (1, 12, 0), (1, 12, 0)),
        ("hour hours", (0, 23, 0), (0, 23, 1)),
        ("minute minutes second seconds", (0, 59, 0), (0, 59, 1)),
        ("port", (1024, 65535, 0), (1024, 65535, 0)),
        ("average avg", (0, 10, 0), (0, 10, 1)),
        ("gender", (0, 2, 0), (0, 2, 0)),
        ("rating stars star score", (1, 5, 0), (1, 5, 1)),
        ("percent pct percentage", (0, 100, 0), (0, 100, 1)),
        ("ratio probability share", (0, 1, 0), (0, 1, 3)),
        (
            "interest_rate tax_rate growth_rate error_rate success_rate conversion_rate churn_rate",
            (0, 100, 0),
            (0, 100, 1),
        ),
        ("cents", (100, 500000, 0), (100, 500000, 0)),
        ("per hourly nightly daily", (1, 50, 0), (0.5, 25, 2)),
        (
            "price amount cost total balance fee charge salary limit payment revenue value tax discount "
            "credit debit spend budget rate",
            (5, 5000, 0),
            (5, 2000, 2),
        ),
        ("weight kg lbs mass", (1, 100, 0), (0.1, 50, 1)),
        ("capacity seats size", (1, 200, 0), (1, 200, 1)),
        ("nights stay", (1, 14, 0), (1, 14, 0)),  # (a hotel stay: no 339 nights)
        ("count quantity qty stock inventory party guests units items num", (1, 50, 0), (1, 50, 0)),
        ("floor", (0, 20, 0), (0, 20, 1)),
        ("level", (1, 5, 0), (1, 5, 1)),  # (a heading's, a skill's, a plan's)
        ("position rank order index sequence priority number page sort", (1, 100, 0), (1, 100, 0)),
        ("duration days timeout ttl", (1, 365, 0), (1, 365, 1)),
        ("bytes length", (100, 10**6, 0), (100, 10**6, 0)),
    )
)
_AMOUNTS = frozenset("total amount value".split())
#: words of a plural count (`total_baggages`, `nonfree_bags`) that are money instead
_MONEY = frozenset(
    "cents fees charges payments taxes credits debits costs prices amounts savings earnings".split()
)


def _name_range(ws: tuple[str, ...], integer: bool) -> _Range:
    """A plausible (low, high, decimals) for a numeric column by its name."""
    pairs = {"_".join(ws[i : i + 2]) for i in range(len(ws) - 1)}
    last = ws[-1] if ws else ""
    for names, as_int, as_number in NUMBER_RULES:
        if names & set(ws) or names & pairs:
            if integer and names & _AMOUNTS and last not in _MONEY and singular(last) != last:
                return 0, 10, 0  # a count of things (`total_baggages`), not an amount
            return as_int if integer else as_number
    if integer and singular(last) != last and last not in _MONEY:
        return 0, 20, 0  # a plural noun: how many
    return (1, 1000, 0) if integer else (0, 1000, 2)


def _number_maker(f: Field, integer: bool) -> Maker:
    ws = words(f.name)
    fmt = str(f.hint.get("format") or "")
    if integer and (
        fmt in DATE_FORMATS and DATE_FORMATS[fmt] == "epoch" or has_word(ws, ("timestamp", "epoch", "unix"))
    ):
        return datetime_maker(ws, "epoch_ms" if has_word(ws, ("ms", "millis", "milliseconds")) else "epoch")
    low, high, decimals = _name_range(ws, integer)
    lo_bound, hi_bound = _bounds(f.hint, integer)
    if fmt == "int32" or fmt in ("uint8", "uint32", "integer-positive"):
        lo_bound = max(lo_bound, 0.0) if lo_bound is not None and fmt != "int32" else lo_bound
    if lo_bound is not None and hi_bound is not None and lo_bound > hi_bound:
        lo_bound = hi_bound = None
    if lo_bound is not None:
        low = max(low, lo_bound)
        if high < low:
            high = low + (1000 if integer else 1000.0)
    if hi_bound is not None:
        high = min(high, hi_bound)
        if low > high:
            low = high - (1000 if integer else 1000.0) if lo_bound is None else lo_bound
    step = f.hint.get("multipleOf")
    step = step if isinstance(step, int | float) and not isinstance(step, bool) and step > 0 else None

    def make(d: Draw) -> Any:
        if integer:
            a, b = math.ceil(low), math.floor(high)
            value: Any = d.rng.randint(a, b) if a <= b else a
        else:
            value = round(d.rng.uniform(low, high), decimals)
        if step is not None:
            snapped = round(value / step) * step
            if lo_bound is not None and snapped < lo_bound:
                snapped += step
            value = int(snapped) if integer else round(snapped, 10)
        return value

    return make


# ---------------------------------------------------------------------------------------------
# json


def _json_maker(f: Field) -> Maker:
    hint = f.hint
    kind = hint.get("type")
    ws = words(f.name)
    if f.depth >= MAX_DEPTH:
        return lambda d: [] if kind == "array" else {}
    if kind == "array" or (kind is None and isinstance(hint.get("items"), Mapping)):
        item = _nested(f, f.name, hint.get("items"))
        low = min(whole(hint, "minItems") or 0, MAX_ITEMS)
        most = whole(hint, "maxItems")
        high = max(min(MAX_ITEMS if most is None else most, MAX_ITEMS), low)
        return lambda d: [item(d) for _ in range(d.rng.randint(max(low, min(1, high)), high))]
    props = hint.get("properties")
    if kind == "object" or isinstance(props, Mapping):
        if not isinstance(props, Mapping) or not props:
            return lambda d: {}
        required = [p for p in hint.get("required") or [] if p in props]
        names = list(dict.fromkeys([*required, *props]))[:MAX_PROPERTIES]
        parts = [(p, _nested(f, p, props[p]), p in required) for p in names]
        return lambda d: {p: make(d) for p, make, needed in parts if needed or d.rng.random() < 0.8}
    if kind in ("string", "integer", "number", "boolean"):
        return _nested(f, f.name, hint)
    if _json_list(f, ws):
        if has_word(ws, ("emails", "recipients")):
            return lambda d: [random_person(d).email for _ in range(d.rng.randint(1, MAX_ITEMS))]
        if ws and ws[-1] == "ids":
            return lambda d: sorted(hex_digits(8)(d) for _ in range(d.rng.randint(1, MAX_ITEMS)))
        code = code_of(singular(f.name))
        return lambda d: sorted({code(d) for _ in range(d.rng.randint(1, MAX_ITEMS))})
    if isinstance(f.default, dict) and f.default:
        default = f.default
        return lambda d: dict(default)
    return lambda d: {w: d.fake.word() for w in d.fake.words(nb=d.rng.randint(1, 3), unique=True)}


def _json_list(f: Field, ws: tuple[str, ...]) -> bool:
    """Whether a json column without a schema holds a list: its default, its description, or a
    plural name that is not a mapping's (`tags`, `item_ids`, `amenities`; not `options`)."""
    if isinstance(f.default, list):
        return True
    if isinstance(f.default, dict):
        return False
    about = f" {f.description or ''} ".lower()
    if " list " in about or " array " in about:
        return True
    if "->" in about or " map" in about or " object" in about:
        return False
    last = ws[-1] if ws else ""
    return last not in MAPPING_WORDS and singular(last) != last


def _nested(parent: Field, name: str, schema: Any) -> Maker:
    hint = flatten_schema(schema)
    kind = hint.get("type")
    column = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}.get(
        str(kind),
        "json" if kind in ("object", "array") or "properties" in hint or "items" in hint else "string",
    )
    enum = hint.get("enum")
    # what the items describe: the container's name (`cast`, `author`), unless it says nothing (`results`)
    context = parent.table if set(words(parent.name)) & GENERIC_CONTAINERS else parent.name
    return plan_field(
        Field(
            context,
            name,
            column,
            hint,
            enum=tuple(v for v in enum if v is not None) if isinstance(enum, list) and enum else None,
            depth=parent.depth + 1,
        )
    )


# ---------------------------------------------------------------------------------------------


def plan_field(f: Field) -> Maker:
    """How the values of a column (or a property of a json column) are made: see the module doc."""
    hint = f.hint
    enum = f.enum
    if enum is None and isinstance(hint.get("enum"), list):
        enum = tuple(v for v in hint["enum"] if fits(f.type, v)) or None
    if enum:
        options = tuple(enum)
        default = f.default if f.default in options else None
        if default is not None and len(options) > 1:
            others = tuple(v for v in options if v != default)
            return lambda d: default if d.rng.random() < 0.5 else d.rng.choice(others)
        return lambda d: d.rng.choice(options)
    if "const" in hint and fits(f.type, hint["const"]):
        const = hint["const"]
        return lambda d: const
    maker = _typed_maker(f)
    examples = [
        e for e in examples_of(hint) if fits(f.type, e) and not (isinstance(e, str) and is_placeholder(e))
    ]  # (a spec's `example@clearblade.com` or `string` stands in for a value: never a row's)
    if f.type == "json" or not examples:
        return maker
    example = examples[0]
    return lambda d: example if d.rng.random() < 0.1 else maker(d)


def _typed_maker(f: Field) -> Maker:
    ws = words(f.name)
    if f.type == "json":
        return _json_maker(f)
    if f.type == "boolean":
        return lambda d: d.rng.random() < 0.5
    if f.type in ("integer", "number"):
        return _number_maker(f, f.type == "integer")
    if f.type == "datetime":
        fmt = str(f.hint.get("format") or "")
        return datetime_maker(ws, "date" if fmt in ("date", "full-date") else "datetime")
    return string_maker(f)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def column_field(
    table: str, name: str, column: Column, hint: Mapping[str, Any], role: str | None, kind: str | None = None
) -> Field:
    """The `Field` of a table column: its type, enum and default from the table, the rest from the hint."""
    return Field(
        table,
        name,
        column.type,
        flatten_schema(hint),
        enum=tuple(column.enum) if column.enum else None,
        default=column.default,
        role=role,
        description=column.description or _text(flatten_schema(hint).get("description")),
        kind=kind,
    )
