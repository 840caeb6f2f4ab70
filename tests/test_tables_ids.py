"""Configurable id schemes: hash (the default), counter and pattern; deterministic per episode seed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.diff import diff_states
from simulator import Domain, ToolError
from simulator.errors import SpecError
from simulator.plan import ids
from simulator.plan.ids import IdMaker, generated_key

from .tables_kit import build, tool

S = {"type": "string"}


def _table(
    key: str, ids: dict[str, Any] | None = None, key_type: str = "string", **extra: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "primary_key": key,
        "columns": {key: {"type": key_type}, "note": {"type": "string"}},
        **extra,
    }
    if ids is not None:
        out["ids"] = ids
    return out


TABLES = {
    "certificates": _table(
        "certificate_id", {"scheme": "counter", "prefix": "certificate_", "start": 1000001}
    ),
    "invoices": _table("invoice_id", {"scheme": "counter", "prefix": "INV-", "width": 6}),
    "tickets": _table("ticket_no", {"scheme": "counter", "start": 1000}, key_type="integer"),
    "reservations": _table("code", {"scheme": "pattern", "pattern": "AAA999"}),
    "cases": _table("case_id", {"scheme": "pattern", "prefix": "CASE-", "pattern": "\\A-Xx9"}),
    "legacy": _table("legacy_id", id_prefix="LG-"),
    "hashed": _table("hashed_id", {"scheme": "hash", "prefix": "LG-"}),
}
TOOLS = [
    tool(f"new_{name}", "write", {"create": name, "values": {"note": "$args.note"}}, {"note": S})
    for name in TABLES
]
SEED = {
    "certificates": [
        {"certificate_id": "certificate_1000007", "note": "x"},
        {"certificate_id": "other", "note": "y"},
    ],
    "tickets": [{"ticket_no": 7, "note": "x"}],
}


@pytest.fixture(scope="module")
def domain(tmp_path_factory: pytest.TempPathFactory) -> Domain:
    return build(tmp_path_factory.mktemp("ids") / "d", TABLES, TOOLS, seed=SEED)


def _made(domain: Domain, table: str, count: int, seed: int = 0) -> list[Any]:
    with domain.episode(seed=seed) as ep:
        return [ep.call(f"new_{table}", {"note": str(i)})[domain.tables[table].pk] for i in range(count)]


def test_a_counter_continues_after_the_seed_and_is_the_same_in_every_seed(domain: Domain) -> None:
    assert _made(domain, "certificates", 2) == ["certificate_1000008", "certificate_1000009"]
    assert _made(domain, "certificates", 2, seed=9) == ["certificate_1000008", "certificate_1000009"]
    assert _made(domain, "invoices", 2) == ["INV-000001", "INV-000002"]
    assert _made(domain, "tickets", 2) == [1000, 1001]


def test_an_integer_counter_never_goes_below_the_keys_in_use(tmp_path: Path) -> None:
    domain = build(tmp_path / "d", TABLES, TOOLS, seed={"tickets": [{"ticket_no": 2000, "note": "x"}]})
    assert _made(domain, "tickets", 2) == [2001, 2002]


def test_the_default_scheme_is_todays_hash(domain: Domain) -> None:
    legacy, hashed = _made(domain, "legacy", 3, seed=4), _made(domain, "hashed", 3, seed=4)
    assert legacy == [generated_key(4, "legacy", "LG-", n) for n in (1, 2, 3)]
    assert hashed == [generated_key(4, "hashed", "LG-", n) for n in (1, 2, 3)]


@given(st.integers(0, 2**31), st.integers(0, 2**31))
def test_pattern_ids_are_deterministic_per_seed(domain: Domain, seed: int, other: int) -> None:
    first = _made(domain, "reservations", 3, seed=seed)
    assert _made(domain, "reservations", 3, seed=seed) == first
    assert all(re.fullmatch(r"[A-Z]{3}[0-9]{3}", code) for code in first)
    assert len(set(first)) == 3
    if other != seed:
        assert _made(domain, "reservations", 3, seed=other) != first
    cases = _made(domain, "cases", 2, seed=seed)
    assert all(re.fullmatch(r"CASE-A-[A-Z0-9][a-z0-9][0-9]", case) for case in cases)


@given(st.integers(0, 2**31), st.sampled_from(sorted(TABLES)))
def test_the_keys_scoring_expects_are_the_keys_an_episode_makes(
    domain: Domain, seed: int, table: str
) -> None:
    info = domain.tables[table]
    made = _made(domain, table, 3, seed=seed)
    if info.spec.columns[info.pk].type == "string":
        assert info.ids.candidates(seed, 3) == made


def test_created_rows_match_across_seeds_whatever_the_scheme(domain: Domain) -> None:
    with domain.episode(seed=1) as expected, domain.episode(seed=2) as actual:
        for ep in (expected, actual):
            for name in ("reservations", "certificates", "cases"):
                ep.call(f"new_{name}", {"note": "hello"})
        report = diff_states(expected, actual)
    assert report.expected_changes == 3 and report.credit == 3.0 and not report.unexpected


def test_a_pattern_that_runs_out_of_keys_is_the_agents_tool_error(tmp_path: Path) -> None:
    tables = {"tiny": _table("tiny_id", {"scheme": "pattern", "pattern": "9"})}
    domain = build(
        tmp_path / "d",
        tables,
        [tool("new_tiny", "write", {"create": "tiny", "values": {"note": "$args.note"}}, {"note": S})],
    )
    with domain.episode() as ep:
        made = {ep.call("new_tiny", {"note": "x"})["tiny_id"] for _ in range(10)}
        assert made == {str(d) for d in range(10)}
        before = ep.digest()
        with pytest.raises(ToolError, match="cannot create a tiny row: its id scheme found no free key"):
            ep.call("new_tiny", {"note": "x"})
        assert ep.digest() == before


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (_table("k", {"scheme": "hash", "prefix": "A-"}, id_prefix="B-"), "give the prefix as `ids.prefix`"),
        (_table("k", {"scheme": "pattern", "pattern": "AA"}, key_type="integer"), "only `scheme: counter`"),
        (_table("k", {"scheme": "pattern", "pattern": "CODE"}), "has no slot"),
        (_table("k", {"scheme": "counter", "width": -1}), "width"),
        (_table("k", {"scheme": "serial"}), "scheme"),
    ],
)
def test_bad_id_schemes_are_load_problems(tmp_path: Path, table: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as info:
        build(tmp_path / "d", {"things": table}, [])
    assert message in str(info.value) and "domain.yaml:tables.things.ids" in str(info.value)


def test_id_makers_are_plain_values() -> None:
    maker = IdMaker("t", scheme="counter", prefix="C", start=5, width=3)
    assert maker.candidates(0, 2) == ["C005", "C006"]
    assert maker.with_floor(["C009", "C12", "x"]).candidates(0, 1) == ["C013"]


def test_generated_keys_are_the_same_in_another_process() -> None:
    makers = [
        IdMaker("t", scheme="pattern", prefix="R-", slots=("AB", "0123456789", "-", "xyz")),
        IdMaker("t", prefix="T-"),
    ]
    here = [m.candidates(seed, 4) for m in makers for seed in (0, 7, 2**40)]
    code = (  # simulator/plan/ids.py alone (stdlib only), so the process starts fast
        "import importlib.util, json, sys; "
        f"spec = importlib.util.spec_from_file_location('ids', {str(Path(ids.__file__))!r}); "
        "m = sys.modules['ids'] = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); "
        "makers = [m.IdMaker('t', scheme='pattern', prefix='R-', slots=('AB', '0123456789', '-', 'xyz')), "
        "m.IdMaker('t', prefix='T-')]; "
        "print(json.dumps([k.candidates(s, 4) for k in makers for s in (0, 7, 2**40)]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert json.loads(done.stdout) == here
