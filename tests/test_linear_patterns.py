"""No agent input reaches a backtracking regex engine (the one-call freeze of a hostile pattern).

A `pattern` (or a `patternProperties` key) that RE2 cannot run — a lookaround, a backreference —
is a `check` problem and a load error in an authored domain; in a generated one it stays in the
argument's description as the spec's words, and no check runs it. Patterns RE2 runs are linear in
the input whatever their nesting.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simulator import SpecError
from simulator.codegen.fastschema import BacktrackingPattern, compile_check, input_validator, search_pattern
from toolgen.synth.inputs import clean_schema
from toolgym.cli import app

from .test_language import make, tool

#: the review's pattern: exponential on Python's `re` (each character doubles the time)
HOSTILE = "^(a+)+(?!b)$|@"
LIST = {"list": "people", "as": "rows"}


@pytest.mark.parametrize(
    "schema",
    [
        {"name": {"type": "string", "pattern": HOSTILE}},
        {"tags": {"type": "array", "items": {"type": "string", "pattern": "(a)\\1"}}},
        {"meta": {"type": "object", "patternProperties": {"^(?=x)": {"type": "string"}}}},
    ],
    ids=["lookahead", "backreference-in-items", "patternProperties-key"],
)
def test_a_pattern_re2_cannot_run_is_a_load_error_at_its_tool(tmp_path, schema):
    with pytest.raises(SpecError) as caught:
        make(tmp_path, [tool("people_list", [LIST, {"return": "$rows"}], props=schema)])
    (problem,) = [p for p in caught.value.problems if "backtracking" in p.message]
    assert problem.file == "domain.yaml" and problem.location == "tools[0] (people_list).input_schema"
    assert "only patterns a linear-time engine (RE2) runs are allowed" in problem.message


def test_check_lists_it_and_exits_1(tmp_path):
    with pytest.raises(SpecError):
        make(tmp_path, [tool("people_list", [LIST, {"return": "$rows"}], props={"n": {"pattern": HOSTILE}})])
    result = CliRunner().invoke(app, ["check", str(tmp_path / "lang")])
    assert result.exit_code == 1
    assert "needs a backtracking regex engine" in result.output and "^(a+)+(?!b)$|@" in result.output


def test_no_validator_path_runs_it():
    schema = {"type": "object", "properties": {"n": {"type": "string", "pattern": HOSTILE}}}
    assert compile_check(schema) is None  # not the fast path...
    with pytest.raises(BacktrackingPattern):  # ...nor the reference path: refused, never run
        input_validator(schema).is_valid({"n": "a" * 40 + "!"})
    keyed = {"type": "object", "patternProperties": {"(?<=a)b": {}}}
    with pytest.raises(BacktrackingPattern):
        input_validator(keyed).is_valid({"ab": 1})


def test_pattern_properties_run_on_re2_and_still_validate():
    schema = {"type": "object", "patternProperties": {"^x-": {"type": "integer"}}}
    validator = input_validator(schema)
    assert validator.is_valid({"x-a": 1, "other": "s"})
    assert not validator.is_valid({"x-a": "not a number"})
    assert [e.path[0] for e in validator.iter_errors({"x-a": "s", "x-b": 2})] == ["x-a"]


def test_nested_quantifiers_stay_linear_on_re2():
    assert not search_pattern("^(a+)+$")("a" * 100_000 + "!")
    assert search_pattern("^(?:[^|]*\\|?)+$")("x|" * 50_000)


def test_a_generated_argument_keeps_such_a_pattern_as_words_only():
    cleaned = clean_schema({"type": "string", "description": "The code.", "pattern": HOSTILE})
    assert "pattern" not in cleaned
    assert cleaned["description"] == f"The code. Must match the pattern {HOSTILE}."
    assert clean_schema({"type": "string", "pattern": "^[A-Z]{3}$"})["pattern"] == "^[A-Z]{3}$"


def test_generate_from_a_spec_with_lookaheads_makes_domains_that_load(tmp_path: Path):
    item = {"type": "object", "properties": {"id": {"type": "string"}, "code": {"type": "string"}}}
    hostile = {"type": "string", "pattern": HOSTILE, "description": "A code."}
    paths: dict[str, object] = {}
    for noun in ("widgets", "gadgets", "gizmos"):
        paths[f"/{noun}"] = {
            "get": {"operationId": f"list_{noun}", "responses": {"200": {"description": "ok",
                    "content": {"application/json": {"schema": {"type": "array", "items": item}}}}}},
            "post": {"operationId": f"create_{noun}", "requestBody": {"content": {"application/json": {
                    "schema": {"type": "object", "properties": {"code": hostile}, "required": ["code"]}}}},
                     "responses": {"201": {"description": "ok"}}},
        }  # fmt: skip
    spec = {"openapi": "3.0.0", "info": {"title": "Widgets", "version": "1"}, "paths": paths}
    (tmp_path / "widgets.json").write_text(json.dumps(spec), encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["generate", str(tmp_path / "widgets.json"), "--out", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    folders = [p.parent for p in out.rglob("domain.yaml")]
    assert folders
    for folder in folders:
        assert CliRunner().invoke(app, ["check", str(folder)]).exit_code == 0
        text = (folder / "domain.yaml").read_text(encoding="utf-8")
        assert "(?!b)" not in text.replace("Must match the pattern ^(a+)+(?!b)$|@", "")
