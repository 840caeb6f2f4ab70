"""`$calls.N.path`: the one parser of call references (scoring/calls.py).

The loader, gold replay, validation (orders) and mutation all read references through `CallRef`;
these tests pin what it accepts, what it refuses and the words it refuses with.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.calls import NO_RESULT, CallRef, call_references, resolve_arguments
from scoring.errors import CallReferenceError


def test_parse_reads_the_index_and_the_path() -> None:
    assert CallRef.parse("$calls.2.order.items.0.id") == CallRef(
        "$calls.2.order.items.0.id", 2, ("order", "items", "0", "id")
    )
    assert CallRef.parse("$calls.0") == CallRef("$calls.0", 0, ())
    assert CallRef.parse("$calls.x.id") == CallRef("$calls.x.id", None, ("id",))
    assert CallRef.parse("$calls.-1.id") is not None and CallRef.parse("$calls.-1.id").index is None  # type: ignore[union-attr]
    for other in ("calls.0.id", "$args.x", "$$calls.0.id", 3, None, ["$calls.0"]):
        assert CallRef.parse(other) is None


@pytest.mark.parametrize(
    ("text", "at", "expected"),
    [
        ("$calls.0.id", 1, 0),
        (
            "$calls.1.id",
            1,
            "$calls.1.id refers to itself; a call can use only earlier calls' results (calls 0 to 0)",
        ),
        (
            "$calls.3.id",
            1,
            "$calls.3.id refers to call 3, which runs later; a call can use only earlier calls' results (calls 0 to 0)",
        ),
        (
            "$calls.0.id",
            0,
            "$calls.0.id refers to itself; a call can use only earlier calls' results (none: this is the first call)",
        ),
        (
            "$calls.x.id",
            2,
            "$calls.x.id does not name a call (write $calls.N.path, N an earlier call's index)",
        ),
    ],
)
def test_target_names_an_earlier_call_or_says_why_not(text: str, at: int, expected: int | str) -> None:
    ref = CallRef.parse(text)
    assert ref is not None and ref.target(at) == expected


def test_follow_reads_fields_indexes_and_fields_of_every_element() -> None:
    result = {"order": {"items": [{"id": "a"}, {"id": "b"}]}}
    assert CallRef.parse("$calls.0.order.items.-1.id").follow(result) == "b"  # type: ignore[union-attr]
    assert CallRef.parse("$calls.0.order.items.id").follow(result) == ["a", "b"]  # type: ignore[union-attr]
    with pytest.raises(
        CallReferenceError, match=r"call 0's result.order has no field 'lines' \(fields: items\)"
    ):
        CallRef.parse("$calls.0.order.lines").follow(result)  # type: ignore[union-attr]
    with pytest.raises(CallReferenceError, match="has no element 5 \\(it has 2\\)"):
        CallRef.parse("$calls.0.order.items.5").follow(result)  # type: ignore[union-attr]


def test_resolve_replaces_references_at_any_depth() -> None:
    results = [{"id": "C-1"}, NO_RESULT]
    args = {"who": "$calls.0.id", "many": ["$calls.0.id", {"deep": "$calls.0.id"}], "lit": "$$calls.0.id"}
    assert resolve_arguments(args, results, "t", 2) == {
        "who": "C-1",
        "many": ["C-1", {"deep": "C-1"}],
        "lit": "$calls.0.id",
    }
    with pytest.raises(
        CallReferenceError, match="task t: gold call 2: \\$calls.1.id: call 1 is expected to fail"
    ):
        resolve_arguments({"x": "$calls.1.id"}, results, "t", 2)
    assert [r.text for r in call_references(args)] == ["$calls.0.id", "$calls.0.id", "$calls.0.id"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@given(_JSON)
def test_values_without_references_pass_through(value: object) -> None:
    """A value with no `$calls.` string and no `$$` escape comes back unchanged."""

    def plain(v: object) -> bool:
        if isinstance(v, str):
            return not v.startswith(("$calls.", "$$"))
        if isinstance(v, list):
            return all(plain(x) for x in v)
        if isinstance(v, dict):
            return all(plain(x) for x in v.values())
        return True

    if plain(value):
        assert resolve_arguments(value, []) == value
        assert call_references(value) == []
