"""Seed values from costly `pattern`s (toolgen/synth/pattern_draw.py): bounded work, values that match.

A spec's patterns can be costly two ways. A `*` / `+` repeats up to 100 times, so nested repeats
ask for ~10,000-character draws; and Python's backtracking `re` then took exponential time to find
that such a draw misses the pattern (image-charts' axis-label pattern below held one generated
domain of the scale corpus past its 900 s budget). Now a draw is abandoned past PATTERN_DRAW_BUDGET
units of work (counted, so the same in every process), the column's later values skip the pattern,
and whether a value meets a pattern is asked on RE2 as the server asks it.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from simulator.builders import column, dump_jsonl
from simulator.codegen.fastschema import search_pattern
from toolgen.synth import pattern_draw, texts
from toolgen.synth.seed import seed_rows
from toolgym.cli import app

#: image-charts' `chxs` (axis label styles), as the scale corpus has it
AXIS = (
    r"^^(?:[0-9]+(?:N[^\*]*\*(?:[f|p|e]|(?:c[a-z]{3}))?(?:[0-9]+)?(?:[zs]{1,2}?)?(?:[x|y])?\*(?:[^,]*)?)?"
    r"(?:,[0-9A-Fa-f]{6}(?:[0-9A-Fa-f]{2})?)?(?:,[0-9.]+(?:,-?[0|1](?:,(?:(?:[l|t]t?)|_)(?:,[0-9A-Fa-f]{6}"
    r"(?:[0-9A-Fa-f]{2})?(?:,[0-9A-Fa-f]{6}(?:[0-9A-Fa-f]{2})?)?)?)?)?)?(?:,(?:s))?"
    r"(?:,(?:((?:min|max)[-0-9]{1,3}){1,2}))?\|?)+$$"
)
COSTLY = {
    "axis_style": AXIS,
    "legend": r"^(?:[^\|]*\|?)+\|$",  # nested repeats of a negated class
    "title": r"^[一-龿]+$",  # 20,000 candidates per character
    "data": r"^((a+)+,?)+;$",
}
CHEAP = {"size": r"^[1-9][0-9]{0,2}x[1-9][0-9]{0,2}$", "code": r"^[A-Z]{3}-[0-9]{4}$"}


class _Counting:
    """Records each draw's length and whether it was abandoned."""

    draws: list[tuple[int, bool]] = []

    def __call__(self, pattern: str, rng: random.Random, budget: int) -> str:
        try:
            drawn = pattern_draw.draw(pattern, rng, budget)
        except pattern_draw.TooCostly:
            self.draws.append((budget, True))
            raise
        self.draws.append((len(drawn), False))
        return drawn


def _seed(monkeypatch: pytest.MonkeyPatch, seed: int) -> tuple[list[dict[str, Any]], list[tuple[int, bool]]]:
    draws: list[tuple[int, bool]] = []
    monkeypatch.setattr(_Counting, "draws", draws)
    monkeypatch.setattr(texts, "draw_pattern", _Counting())
    patterns = {**COSTLY, **CHEAP}
    columns = {"id": column("string"), **{name: column("string") for name in patterns}}
    hints = {name: {"type": "string", "pattern": p} for name, p in patterns.items()}
    rows = seed_rows(
        {"charts": {"primary_key": "id", "columns": columns}}, {"charts": hints}, seed=seed, rows=40
    )
    return rows["charts"], draws


def test_costly_patterns_are_drawn_within_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    rows, draws = _seed(monkeypatch, seed=3)
    assert len(rows) == 40
    # the work is bounded: no draw makes more than the budget's characters
    assert draws and max(work for work, _ in draws) <= texts.PATTERN_DRAW_BUDGET
    abandoned = sum(1 for _, over in draws if over)
    # these shapes do go over it, but once per column, not once per row
    assert 1 <= abandoned <= len(COSTLY)
    for name, pattern in CHEAP.items():  # patterns that cost little are still met, row after row
        matches = search_pattern(pattern)
        assert all(r[name] is None or matches(r[name]) for r in rows), name
    for name in COSTLY:  # a value is bounded by the budget whatever the pattern asks for
        assert all(r[name] is None or len(r[name]) <= texts.PATTERN_DRAW_BUDGET for r in rows), name


def test_costly_patterns_seed_deterministically(monkeypatch: pytest.MonkeyPatch) -> None:
    first, draws = _seed(monkeypatch, seed=5)
    again, draws_again = _seed(monkeypatch, seed=5)
    assert dump_jsonl(first) == dump_jsonl(again)
    assert draws == draws_again


def test_a_value_is_checked_against_its_pattern_in_linear_time() -> None:
    """`^(a+)+$` on 40 a's and a '!' backtracks for hours in Python's `re`; on RE2 it is instant,
    and the maker redraws from the pattern."""
    realistic = "a" * 40 + "!"
    make = texts._bounded_string(lambda d: realistic, {"pattern": "^(a+)+$"})
    draw = texts.Draw(fake=None, rng=random.Random(1), clock=None)  # type: ignore[arg-type]
    value = make(draw)
    assert value != realistic and search_pattern("^(a+)+$")(value)


_PATTERNS = [
    r"^[A-Z]{3}-[0-9]{4}$",
    r"^[a-z0-9_.-]+@[a-z]+\.(com|org)$",
    r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}",
    r"^(?:[xytr])(,(?:[xytr]))*$",
    r"^[LMQH]{1}(?:\|[0-9]+)?$",
    r"^\w+\s\d*[^abc]?.$",
    r"^(foo|ba+r)-(\1)?$",
]


@given(pattern=st.sampled_from(_PATTERNS), seed=st.integers(0, 2**32 - 1))
def test_a_draw_matches_its_pattern_and_depends_on_the_seed_alone(pattern: str, seed: int) -> None:
    drawn = pattern_draw.draw(pattern, random.Random(seed), texts.PATTERN_DRAW_BUDGET)
    assert re.search(pattern, drawn), (pattern, drawn)
    assert pattern_draw.draw(pattern, random.Random(seed), texts.PATTERN_DRAW_BUDGET) == drawn


@pytest.mark.parametrize(
    "pattern",
    [r"a{2,1}", "(", "[a-", r"\x4", r"(?P=nope)", r"(?<name", r"[z-a]", r"\2(a)", "(" * 300 + ")" * 300],
)
def test_a_pattern_it_cannot_draw_from_is_said_to_be_unsupported(pattern: str) -> None:
    with pytest.raises(pattern_draw.Unsupported):
        pattern_draw.draw(pattern, random.Random(0), texts.PATTERN_DRAW_BUDGET)


def test_a_negated_class_draws_the_same_in_every_process() -> None:
    """What `[^abc]` leaves is taken in the printable characters' order, not a set's."""
    code = "import random; from toolgen.synth.pattern_draw import draw; print(draw('[^abc]{40}', random.Random(7), 1000))"
    runs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": str(hash_seed)},
        ).stdout
        for hash_seed in (1, 2, 3)
    }  # fmt: skip
    assert len(runs) == 1 and not set(runs.pop().strip()) & set("abc")


def _chart_spec() -> dict[str, Any]:
    """A tiny OpenAPI spec whose record has image-charts' kind of patterns: the shape that ran past
    the budget, in miniature."""
    props: dict[str, Any] = {"id": {"type": "string"}, "name": {"type": "string"}}
    props |= {name: {"type": "string", "pattern": p} for name, p in {**COSTLY, **CHEAP}.items()}
    chart = {"type": "object", "properties": props}
    ref = {"$ref": "#/components/schemas/Chart"}
    body = {"required": True, "content": {"application/json": {"schema": ref}}}
    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": ref}}}}
    many = {"type": "array", "items": ref}
    listed = {"200": {"description": "ok", "content": {"application/json": {"schema": many}}}}
    path_id = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
    return {
        "openapi": "3.0.0",
        "info": {"title": "Charts", "version": "1", "license": {"name": "CC0-1.0"}},
        "paths": {
            "/charts": {
                "get": {"operationId": "listCharts", "responses": listed},
                "post": {"operationId": "createChart", "requestBody": body, "responses": ok},
            },
            "/charts/{id}": {
                "parameters": path_id,
                "get": {"operationId": "getChart", "responses": ok},
                "patch": {"operationId": "updateChart", "requestBody": body, "responses": ok},
                "delete": {"operationId": "deleteChart", "responses": ok},
            },
        },
        "components": {"schemas": {"Chart": chart}},
    }


def test_a_spec_with_costly_patterns_generates_within_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    draws: list[tuple[int, bool]] = []
    monkeypatch.setattr(_Counting, "draws", draws)
    monkeypatch.setattr(texts, "draw_pattern", _Counting())  # --workers 1 generates in this process
    spec = tmp_path / "charts.json"
    spec.write_text(json.dumps(_chart_spec()), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["generate", str(spec), "--out", str(out), "--workers", "1", "--json"])
    assert result.exit_code == 0, result.output
    [domain] = json.loads((out / "report.json").read_text())["domain_results"]
    assert domain["kept"], domain["reason"]
    assert domain["compiled"] == domain["operations"] == 5 and domain["tasks_kept"] >= 5
    assert draws and max(work for work, _ in draws) <= texts.PATTERN_DRAW_BUDGET
    assert 1 <= sum(1 for _, over in draws if over) <= len(COSTLY)


@given(
    pattern=st.text(alphabet=st.sampled_from(list("ab\\[]()^$-|*+?{},.0123dwsDWSuxPN<>=!:")), max_size=30),
    seed=st.integers(0, 2**16),
)
def test_any_pattern_draws_a_string_or_says_why_not(pattern: str, seed: int) -> None:
    """A spec's pattern is untrusted: the draw gives a string, or `Unsupported` / `TooCostly`,
    never another error, and its work stays within a small budget."""
    try:
        drawn = pattern_draw.draw(pattern, random.Random(seed), 5_000)
    except (pattern_draw.Unsupported, pattern_draw.TooCostly):
        return
    assert isinstance(drawn, str) and len(drawn) <= 5_000
