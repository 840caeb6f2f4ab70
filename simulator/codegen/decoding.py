"""Rows as SQLite returns them (tuples) -> rows as tools return them (dicts), once per table shape.

`row_decoder` builds, once per table (and joined shape), a function that turns a stored tuple into
a dict; `load_json` parses stored JSON text. Both give exactly what the general code gives
(`plain_row_decoder`, the reference path's decoder).
Design notes: docs/design/engine.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..lang.generated import Source

#: json's public decoder without `loads`'s wrappers: text -> (value, end)
_raw_decode: Callable[[str], tuple[Any, int]] = json.JSONDecoder().raw_decode


def load_json(text: Any) -> Any:
    """`json.loads(text)`, faster for compact JSON text (what encode stores): `raw_decode` reads it
    without `loads`'s checks, and anything it does not read whole (whitespace around, a BOM, bytes,
    an error) goes to `json.loads`, so results and errors are json.loads's own."""
    if type(text) is str:
        try:
            value, end = _raw_decode(text)
        except ValueError:
            return json.loads(text)
        if end == len(text):
            return value
    return json.loads(text)


def _load_bool(value: Any) -> bool:
    return bool(value)


#: how a column of each type comes back from SQLite (types not listed come back as stored)
DECODERS: dict[str, Callable[[Any], Any]] = {"boolean": _load_bool, "json": load_json}
#: `DECODERS` on the reference path (`load_domain(..., generated=False)`)
PLAIN_DECODERS: dict[str, Callable[[Any], Any]] = {"boolean": bool, "json": json.loads}


def column_decoder(kind: str, generated: bool = True) -> Callable[[Any], Any] | None:
    """How a read turns a stored (non-null) value of a column of type `kind` back (None: as stored)."""
    return (DECODERS if generated else PLAIN_DECODERS).get(kind)


def row_decoder(
    columns: Sequence[str], kinds: Sequence[str], start: int = 0, generated: bool = True
) -> Callable[[Any], dict[str, Any]]:
    """A function of a stored row (a tuple) -> {column: value}, reading `columns` (of the column
    types `kinds`) at positions `start`, `start + 1`, ...: a null stays null; a boolean or JSON
    column's other values go through `DECODERS`. Not `generated`: `plain_row_decoder`."""
    if not generated:
        return plain_row_decoder(columns, kinds, start)
    src = Source()
    parts = []
    for i, (name, kind) in enumerate(zip(columns, kinds, strict=True), start):
        key, at, fn = src.bind(name, "k"), src.integer(i), DECODERS.get(kind)
        if fn is None:
            parts.append(f"{key}: r[{at}]")
        else:
            parts.append(f"{key}: None if r[{at}] is None else {src.bind(fn, 'd')}(r[{at}])")
    with src.block("def decode(r):"):
        src.add(f"return {{{', '.join(parts)}}}")
    decode: Callable[[Any], dict[str, Any]] = src.define("decode", "<row decoder>")
    return decode


def plain_row_decoder(
    columns: Sequence[str], kinds: Sequence[str], start: int = 0
) -> Callable[[Any], dict[str, Any]]:
    """`row_decoder` as the general code: the columns zipped with the row, then each non-null
    boolean and JSON value restored (`PLAIN_DECODERS`)."""
    names = tuple(columns)
    end = start + len(names)
    restore = [
        (name, fn) for name, kind in zip(names, kinds, strict=True) if (fn := PLAIN_DECODERS.get(kind))
    ]

    def decode(r: Any) -> dict[str, Any]:
        out = dict(zip(names, r[start:end], strict=True))
        for name, fn in restore:
            if out[name] is not None:
                out[name] = fn(out[name])
        return out

    return decode
