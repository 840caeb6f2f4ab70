"""benchmarks/faithfulness.py: its detectors on small hand-made folders and specs, and a run over a
domain generated from a spec whose kinds are declared."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load():
    spec = importlib.util.spec_from_file_location("faithfulness", ROOT / "benchmarks" / "faithfulness.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["faithfulness"] = module
    spec.loader.exec_module(module)
    return module


faith = _load()

OPENAPI = {
    "openapi": "3.0.0",
    "info": {"title": "Files", "version": "1"},
    "paths": {
        "/folders/{folder_id}/items": {"get": {"responses": {}}},
        "/files/{fileId}": {"get": {"responses": {}}, "delete": {"responses": {}}},
        "/files/{fileId}/export": {"post": {"responses": {}}},
        "/#Action=CreateUser": {"get": {"responses": {}}},
    },
    "components": {
        "schemas": {
            "FileVersion": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "owner": {"type": "object"},
                    "likes": {"type": "integer"},
                },
            },
            "ObjectiveCLibrary": {"type": "object", "properties": {"name": {"type": "string"}}},
            "TimeToLiveDescription": {"type": "object", "properties": {"name": {"type": "string"}}},
        }
    },
}


@pytest.fixture
def openapi_source(tmp_path: Path):
    path = tmp_path / "files.json"
    path.write_text(json.dumps(OPENAPI), encoding="utf-8")
    return str(path), faith.read_source(str(path))


def test_nouns_of_a_spec(openapi_source):
    _, src = openapi_source
    assert ("file", "version") in src.nouns  # a schema name
    assert ("folder",) in src.nouns and ("item",) in src.nouns  # collections, an id stem
    assert ("owner",) in src.nouns  # an object field
    assert ("like",) not in src.nouns  # a count is an attribute, not a thing
    assert ("export",) not in src.nouns  # the last segment of a path without a GET


@pytest.mark.parametrize(
    ("table", "verdict"),
    [
        ("files", "ok"),
        ("file_versions", "ok"),
        ("file_versions_2", "ok"),
        ("csvs", "format"),
        ("file_pdfs", "format"),
        ("a1b2c3s", "hash"),
        ("objective_c_libraries", "ok"),  # a letter the spec says beside the same word
        ("q_files", "hash"),
        ("exports", "verb"),
        ("reactivate_lines", "verb"),
        ("archiveds", "verb"),
        ("to_human_agents", "function word"),
        ("times_to_live", "ok"),  # a plural head before its qualifier, as the spec names it
        ("airplane_modes", "not a noun of the spec"),
    ],
)
def test_table_verdicts(openapi_source, table, verdict):
    _, src = openapi_source
    assert faith.table_verdict(table, src.nouns, src.noun_words) == verdict


def test_declared_kinds_are_found_by_the_operation_ids_hash(openapi_source):
    source, src = openapi_source
    get = src.ops[faith.op_hash(source, "/paths/~1files~1{fileId}/get")]
    delete = src.ops[faith.op_hash(source, "/paths/~1files~1{fileId}/delete")]
    post = src.ops[faith.op_hash(source, "/paths/~1files~1{fileId}~1export/post")]
    action = src.ops[faith.op_hash(source, "/paths/~1#Action=CreateUser/get")]
    assert (get, delete, post, action) == ("read", "write", None, None)


@pytest.mark.parametrize(
    ("name", "column", "control"),
    [
        ("limit", {}, True),
        ("next_marker", {}, True),
        ("NextToken", {}, True),
        ("LastEvaluatedKey", {}, True),
        ("ExclusiveStartTableName", {}, True),
        ("LastName", {}, False),
        ("sortBy", {}, True),
        ("format", {"description": "The format of the response."}, True),
        ("format", {"description": "The file's format, e.g. png."}, False),
        ("owner", {}, False),
    ],
)
def test_control_columns(name, column, control):
    assert (faith.control_reason(name, column) is not None) == control


def test_a_selection_name_the_spec_gives_as_an_object_is_data():
    """OpenDataSoft's record `fields: {…}`: an object property of the spec, so not a selection."""
    assert faith.control_reason("fields", {"type": "json"}, {"fields"}) is None
    assert faith.control_reason("fields", {"type": "string"}, {"fields"}) == "fields"
    assert faith.control_reason("fields", {"type": "json"}, set()) == "fields"


def test_a_generated_domain_is_measured(tmp_path: Path):
    """A tool list declaring its kinds, generated into a folder: every declared kind agrees."""
    from toolgen.pipeline import generate
    from toolgen.synth.run import synthesize

    tools = [
        {"name": f"{verb}_line", "type": kind, "description": f"{verb} a line.",
         "parameters": [{"name": "line_id", "type": "string", "required": True, "description": "The line."}]}
        for verb, kind in (("get", "READ"), ("suspend", "WRITE"), ("reactivate", "WRITE"), ("check", "READ"))
    ] + [
        {"name": "list_lines", "type": "READ", "description": "Every line.",
         "parameters": [{"name": "limit", "type": "integer", "required": False, "description": "At most."}]},
        {"name": "create_line", "type": "WRITE", "description": "A new line.",
         "parameters": [{"name": "number", "type": "string", "required": True, "description": "Its number."}]},
    ]  # fmt: skip
    spec = tmp_path / "telecom_tools.json"
    spec.write_text(json.dumps({"telecom": {"description": "lines", "tools": tools}}), encoding="utf-8")
    generated = generate([spec], min_tools=2, max_tools=40, seed=0, workers=1)
    out = tmp_path / "out"
    synthesize(generated.plan.domains, generated.operations, out, seed=0, workers=1, with_tasks=False)
    figures = faith.measure(out)
    assert figures.declared == len(tools) and figures.agree == figures.declared, figures.disagree
    assert figures.controls == []
    assert "reactivate" not in json.dumps(figures.verdicts)


def test_a_letter_a_title_says_beside_its_word_is_no_hash(tmp_path: Path):
    tools = [{"tool_name": "Objective-C Code Compiler", "api_list": [{"api_name": "Objective-C Versions"}]}]
    path = tmp_path / "Tools.json"
    path.write_text(json.dumps(tools), encoding="utf-8")
    src = faith.read_source(str(path))
    assert ("objective", "c", "version") in src.titles or ("objective", "c", "versions") in src.titles
    assert faith.table_verdict("objective_c_versions", src.nouns, src.noun_words, src.titles) != "hash"
    assert faith.table_verdict("objective_c_versions", src.nouns, src.noun_words) == "hash"
