"""An update of the row a get of the same call read takes `$row` from that get's decoding (a copy,
for tables whose decoded values are immutable): `$row`, the row after and the result are what
decoding the stored row again gives, also after the row changed within the call."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from simulator import Domain

from .tables_kit import build, tool

TABLES = {
    "accounts": {
        "primary_key": "id",
        "columns": {
            "id": {"type": "string"},
            "balance": {"type": "number"},
            "vip": {"type": "boolean"},
            "note": {"type": "string"},
        },
    }
}
SEED = {
    "accounts": [{"id": f"A{i}", "balance": i * 1.5, "vip": i % 2 == 0, "note": f"n{i}"} for i in range(4)]
}
TWICE = [
    {
        "update": "accounts",
        "key": {"id": "$args.id"},
        "set": {"balance": {"add": ["$row.balance", "$args.n"]}},
        "as": "first",
    },
    {"update": "accounts", "key": {"id": "$args.id"}, "set": {"vip": {"not": "$row.vip"}}, "as": "second"},
]
PROPS = {"id": {"type": "string"}, "n": {"type": "number"}}
TOOLS = [
    tool(
        "after_get",
        "write",
        [
            {"get": "accounts", "key": {"id": "$args.id"}, "as": "got"},
            *TWICE,
            {"return": {"object": {"got": "$got", "first": "$first", "second": "$second"}}},
        ],
        PROPS,
    ),
    tool("alone", "write", [*TWICE, {"return": {"object": {"first": "$first", "second": "$second"}}}], PROPS),
    tool("read", "read", {"get": "accounts", "key": {"id": "$args.id"}}, PROPS),
]


@functools.cache
def _domain() -> Domain:
    return build(Path(tempfile.mkdtemp(prefix="update_get")) / "d", TABLES, TOOLS, seed=SEED)


@given(st.lists(st.tuples(st.sampled_from(["A0", "A1", "A2", "A3"]), st.integers(-5, 5)), max_size=6))
def test_an_update_after_a_get_is_the_update_alone(calls: list[tuple[str, int]]) -> None:
    d = _domain()
    with d.episode() as a, d.episode() as b:
        for key, n in calls:
            before = b.call("read", {"id": key})
            got: dict[str, Any] = a.call("after_get", {"id": key, "n": n})
            alone = b.call("alone", {"id": key, "n": n})
            assert got["got"] == before
            assert {"first": got["first"], "second": got["second"]} == alone
            assert type(got["second"]["vip"]) is bool
            assert got["first"] is not got["got"] and got["second"] is not got["first"]
        assert a.digest() == b.digest()
