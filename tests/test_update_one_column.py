"""A one-column update by key (UpdateRun's written-out write) refuses what
SQLite refuses with the words of the general write: a unique or foreign-key constraint, a value
that cannot bind; and changes nothing then. Each case is held to the same update on the reference
path (`load_domain(..., generated=False)`: the general write), and to the same update with a
second, unchanged column."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from simulator import Domain, ToolError

from .tables_kit import build, tool

TABLES = {
    "groups": {"primary_key": "gid", "columns": {"gid": {"type": "string"}}},
    "items": {
        "primary_key": "id",
        "columns": {
            "id": {"type": "string"},
            "code": {"type": "string", "unique": True},
            "gid": {"type": "string", "references": "groups.gid"},
            "note": {"type": "string", "nullable": True},
        },
    },
}
SEED = {
    "groups": [{"gid": "g1"}, {"gid": "g2"}],
    "items": [{"id": f"i{n}", "code": f"c{n}", "gid": "g1", "note": None} for n in range(3)],
}
PROPS = {"id": {"type": "string"}, "value": {}}


def _update(name: str, column: str, also: bool) -> dict[str, Any]:
    sets: dict[str, Any] = {column: "$args.value"}
    if also:  # (two columns: the general write)
        sets["note"] = "$row.note"
    return tool(name, "write", {"update": "items", "key": {"id": "$args.id"}, "set": sets}, PROPS)


TOOLS = [
    _update(f"{c}_{'two' if also else 'one'}", c, also) for c in ("code", "gid") for also in (False, True)
]


@functools.cache
def _domain(generated: bool = True) -> Domain:
    folder = Path(tempfile.mkdtemp(prefix="update_one")) / "d"
    return build(folder, TABLES, TOOLS, seed=SEED, generated=generated)


def _outcome(ep: Any, name: str, args: dict[str, Any]) -> tuple[str, Any]:
    try:
        return ("ok", ep.call(name, args))
    except ToolError as exc:
        return ("error", str(exc))


VALUES = st.one_of(
    st.sampled_from(["c0", "c1", "new", "g1", "g2", "g9", "\ud800", 5, None]), st.text(max_size=3)
)


@given(st.sampled_from(["code", "gid"]), st.sampled_from(["i0", "i1", "i9"]), VALUES)
def test_a_one_column_update_fails_as_the_general_write(column: str, key: str, value: Any) -> None:
    d, reference = _domain(), _domain(generated=False)
    one = d.tools[f"{column}_one"].steps[0]
    assert getattr(one, "_simple", False) and not getattr(d.tools[f"{column}_two"].steps[0], "_simple", True)
    assert not getattr(reference.tools[f"{column}_one"].steps[0], "_simple", True)
    args = {"id": key, "value": value}
    with d.episode() as a, d.episode() as b, reference.episode() as c:
        got = _outcome(a, f"{column}_one", args)
        assert got == _outcome(b, f"{column}_two", args) == _outcome(c, f"{column}_one", args)
        assert a.digest() == b.digest() == c.digest()
