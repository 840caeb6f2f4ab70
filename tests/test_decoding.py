"""Row decoding (simulator.codegen.decoding): the fast paths give exactly what the general code gives: the
generated row decoder what the reference path's decoder gives (`generated=False`), on any stored
values and at any place in a row (joined rows), and `load_json` what `json.loads` gives on any text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator.codegen.decoding import load_json, row_decoder

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


def _outcome(fn: Any, text: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(text)
    except Exception as exc:
        return type(exc).__name__, str(exc)


@given(value=JSON, compact=st.booleans(), around=st.sampled_from(["", " ", "\n", "\ufeff", "x", "]"]))
def test_load_json_is_json_loads(value: Any, compact: bool, around: str) -> None:
    text = json.dumps(value, separators=(",", ":") if compact else None)
    for candidate in (text, around + text, text + around, text[: len(text) // 2]):
        assert repr(_outcome(load_json, candidate)) == repr(_outcome(json.loads, candidate))


@pytest.mark.parametrize(
    "text", ["", "NaN", "-Infinity", "1e400", '"\\ud800"', b'{"a": 1}', bytearray(b"[1]")]
)
def test_load_json_edge_texts(text: Any) -> None:
    assert repr(_outcome(load_json, text)) == repr(_outcome(json.loads, text))


KINDS = ["string", "integer", "number", "boolean", "datetime", "json"]
STORED = {
    "string": st.text(),
    "integer": st.integers(-(2**63), 2**63 - 1),
    "number": st.integers() | st.floats(allow_nan=False),
    "boolean": st.sampled_from([0, 1]),
    "datetime": st.text(),
    "json": JSON.map(lambda v: json.dumps(v, separators=(",", ":"))),
}


@given(
    data=st.data(), kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=8), start=st.integers(0, 3)
)
def test_row_decoder_is_the_reference_decoder(data: st.DataObject, kinds: list[str], start: int) -> None:
    columns = [f"c{i}" for i in range(len(kinds))]
    values = tuple(data.draw(st.none() | STORED[kind]) for kind in kinds)
    row = (None,) * start + values + ("after",)
    decoded = row_decoder(columns, kinds, start)(row)
    assert list(decoded) == columns
    assert repr(decoded) == repr(row_decoder(columns, kinds, start, generated=False)(row))


def test_row_decoder_names_are_data_not_code() -> None:
    columns = ["a'b", 'q"}, __import__("os")', "\\", "ümlaut", "1 + 1"]
    decode = row_decoder(columns, ["string", "json", "boolean", "string", "integer"])
    assert decode(("x", "[1]", 1, "y", 2)) == dict(zip(columns, ["x", [1], True, "y", 2], strict=True))
