"""`toolgym migrate`: old spellings rewritten in place, nothing else touched, behaviour identical."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from scoring import check_domain, load_domain
from simulator.format.lint import Spelling
from simulator.format.migrate import apply, plan, segments
from tests.conftest import FIXTURES
from toolgym.cli import app

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import golden_replays  # noqa: E402

runner = CliRunner()

#: operator spellings of the documentation before the one-tree language (as the bundled domains
#: were first written); `migrate` must bring them back to the new words
_WRITTEN_IN_OLD_DOCS = {"get_key:": "get:", "sum_of:": "sum:", "count_of:": "count:"}


def test_every_pinned_domain_migrates_and_replays_its_golden_record(tmp_path):
    """Copies of the bundled and fixture domains: after `migrate`, no old spelling is left, only the
    old words changed, and every gold call's outcome and every digest is the pinned one."""
    pinned = json.loads(golden_replays.FIXTURE.read_text(encoding="utf-8"))
    migrated = 0
    for source in golden_replays._folders(tmp_path / "sources"):
        folder = tmp_path / "copies" / source.name
        shutil.copytree(source, folder)
        # the bundled domains are migrated already: put back the spellings they were written in
        written = (folder / "domain.yaml").read_text(encoding="utf-8")
        for new_word, old_word in _WRITTEN_IN_OLD_DOCS.items():
            written = written.replace(new_word, old_word)
        (folder / "domain.yaml").write_text(written, encoding="utf-8")
        before = written
        spellings = check_domain(folder).spellings
        result = runner.invoke(app, ["migrate", str(folder)])
        assert result.exit_code == 0, result.output
        after = (folder / "domain.yaml").read_text(encoding="utf-8")
        report = check_domain(folder)
        assert report.errors == [] and report.spellings == [], source.name
        assert (after != before) == bool(spellings), source.name
        renames = {(s.old, s.new) for s in spellings}
        old_lines, new_lines = before.splitlines(), after.splitlines()
        assert len(old_lines) == len(new_lines)  # comments, blank lines, layout: all kept
        for old_line, new_line in zip(old_lines, new_lines, strict=True):
            if old_line != new_line:
                undone = new_line
                for old, new in renames:
                    undone = undone.replace(new, old)
                assert undone == old_line, (old_line, new_line)
        if spellings:
            migrated += 1
            domain = load_domain(folder)
            assert golden_replays.record_domain(domain) == pinned[domain.ref], domain.ref
    assert migrated >= 3  # the test exercises real rewrites (logistics, tau2-retail, stays today)


WRITTEN = """\
# a domain written with old spellings, comments and several styles
name: old
version: 1.0.0
tables:
  items:   # the only table
    primary_key: id
    columns:
      id: {type: string}
      code: {type: string}
      tags: {type: json, default: []}
tools:
  - name: find
    description: Find items by code prefix.
    kind: read
    input_schema: {type: object, properties: {code: {type: string}}}
    operation:
      - list: items
        where:
          - {column: code, op: prefix, value: $args.code}   # old filter spelling
        as: found
      - return:
          object:
            count: &counted
              "count": [$found.code, $args.code]   # quoted old operator key
            first: {get: [{at: [$found, 0]}, code]}
            again: *counted
            total:
              sum:
                - {len: $found.tags}
"""


def test_comments_quoting_styles_and_anchors_are_kept(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "domain.yaml").write_text(WRITTEN, encoding="utf-8")
    report = check_domain(folder)
    assert report.errors == []
    assert {(s.old, s.new) for s in report.spellings} == {
        ("prefix", "starts_with"),
        ("count", "count_of"),
        ("get", "get_key"),
        ("sum", "sum_of"),
    }
    assert all(
        w.message.endswith(f"write `{s.new}`") for w, s in zip(report.warnings, report.spellings, strict=True)
    )
    result = runner.invoke(app, ["migrate", str(folder)])
    assert result.exit_code == 0, result.output
    assert (folder / "domain.yaml").read_text(encoding="utf-8") == (
        WRITTEN.replace("op: prefix", "op: starts_with")
        .replace('"count": [', "count_of: [")
        .replace("{get: [", "{get_key: [")
        .replace("sum:\n", "sum_of:\n")
    )
    after = check_domain(folder)
    assert after.errors == [] and after.warnings == []


def test_check_and_dry_run_write_nothing(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "domain.yaml").write_text(WRITTEN, encoding="utf-8")
    dry = runner.invoke(app, ["migrate", str(folder), "--dry-run"])
    assert dry.exit_code == 0 and "+            first: {get_key: [" in dry.stdout
    check = runner.invoke(app, ["migrate", str(folder), "--check"])
    assert check.exit_code == 1 and "-          - {column: code, op: prefix" in check.stdout
    as_json = runner.invoke(app, ["migrate", str(folder), "--check", "--json"])
    body = json.loads(as_json.stdout)
    assert as_json.exit_code == 1 and body["written"] is False
    assert sorted(c["new"] for c in body["changes"]) == ["count_of", "get_key", "starts_with", "sum_of"]
    assert (folder / "domain.yaml").read_text(encoding="utf-8") == WRITTEN
    assert runner.invoke(app, ["migrate", str(folder)]).exit_code == 0
    clean = runner.invoke(app, ["migrate", str(folder), "--check"])
    assert clean.exit_code == 0 and "nothing to migrate" in clean.stderr


def test_a_domain_with_errors_is_not_migrated(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    broken = WRITTEN.replace("      code: {type: string}", "      code: {type: strng}")
    (folder / "domain.yaml").write_text(broken, encoding="utf-8")
    result = runner.invoke(app, ["migrate", str(folder)])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: domain.yaml:tables.items.columns.code.type")
    assert (folder / "domain.yaml").read_text(encoding="utf-8") == broken


@pytest.mark.parametrize(
    ("location", "parts"),
    [
        (
            "tools[3] (get-x).operation[2].set.total.add[0]",
            ["tools", 3, "operation", 2, "set", "total", "add", 0],
        ),
        ("fragments.pay.steps[0].where[1].op", ["fragments", "pay", "steps", 0, "where", 1, "op"]),
    ],
)
def test_locations_read_as_paths(location, parts):
    assert segments(location) == parts


def test_a_spelling_that_is_not_where_it_is_said_to_be_is_reported_not_guessed():
    text = "tools:\n  - operation: {let: x, value: {sum: $y}}\n"
    edits, missed = plan(text, [Spelling("tools[0] (t).operation[0].value", "sum", "sum_of"),
                                Spelling("tools[0] (t).operation[0].let", "count", "count_of")])  # fmt: skip
    assert apply(text, edits) == "tools:\n  - operation: {let: x, value: {sum_of: $y}}\n"
    assert [s.old for s in missed] == ["count"]


def test_the_shop_fixture_has_nothing_to_migrate():
    result = runner.invoke(app, ["migrate", str(FIXTURES / "shop"), "--check"])
    assert result.exit_code == 0 and result.stdout == ""


# ---------------------------------------------------------------------------------------------
# any expression, in any YAML style: migrate renames exactly the old operator spellings


Pair = tuple[Any, Any]  # (as written with old spellings, as migrated)

_LEAVES: st.SearchStrategy[Pair] = st.sampled_from(["$args.x", 3, "word", "$$sum"]).map(lambda v: (v, v))
_SPELLINGS = [("sum", "sum_of"), ("count", "count_of"), ("get", "get_key"), ("sum_of", "sum_of")]


def _node(inner: st.SearchStrategy[Pair]) -> st.SearchStrategy[Pair]:
    def unary(spelling: tuple[str, str], a: Pair) -> Pair:
        old, new = spelling
        if new == "sum_of":
            return {old: a[0]}, {new: a[1]}
        if new == "get_key":
            return {old: [a[0], "k"]}, {new: [a[1], "k"]}
        return {old: [a[0], a[0]]}, {new: [a[1], a[1]]}

    return st.one_of(
        st.builds(unary, st.sampled_from(_SPELLINGS), inner),
        st.builds(lambda a, b: ({"add": [a[0], b[0]]}, {"add": [a[1], b[1]]}), inner, inner),
        st.builds(lambda a: ({"not": a[0]}, {"not": a[1]}), inner),
        st.builds(  # field names that look like operators stay as they are
            lambda a, b: ({"object": {"sum": a[0], "get": b[0]}}, {"object": {"sum": a[1], "get": b[1]}}),
            inner,
            inner,
        ),
        st.builds(
            lambda a, b: (
                {"map": {"over": a[0], "as": "count", "to": b[0]}},
                {"map": {"over": a[1], "as": "count", "to": b[1]}},
            ),
            inner,
            inner,
        ),
    )


EXPRESSIONS = st.recursive(_LEAVES, _node, max_leaves=6)


def _domain(expression: Any) -> dict[str, Any]:
    return {
        "name": "d",
        "version": "1.0.0",
        "tables": {"t": {"primary_key": "id", "columns": {"id": {"type": "string"}}}},
        "tools": [
            {
                "name": "f",
                "description": "x",
                "kind": "read",
                "input_schema": {"type": "object", "properties": {"x": {}}},
                "operation": [
                    {"let": "v", "value": expression},
                    {"return": {"object": {"a": "$v", "b": expression}}},
                ],
            }
        ],
    }


@given(EXPRESSIONS, st.sampled_from([False, True, None]))
def test_any_expression_in_any_style_migrates_to_exactly_the_new_spellings(pair, style):
    written, migrated = pair
    text = yaml.safe_dump(_domain(written), default_flow_style=style, sort_keys=False)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "domain.yaml").write_text(text, encoding="utf-8")
        report = check_domain(tmp)
        assert report.errors == []
        edits, missed = plan(text, report.spellings)
        assert missed == []
        new = apply(text, edits)
        assert yaml.safe_load(new) == _domain(migrated)
        (Path(tmp) / "domain.yaml").write_text(new, encoding="utf-8")
        assert check_domain(tmp).spellings == []


def test_windows_line_endings_are_kept(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "domain.yaml").write_bytes(WRITTEN.replace("\n", "\r\n").encode())
    assert runner.invoke(app, ["migrate", str(folder)]).exit_code == 0
    data = (folder / "domain.yaml").read_bytes()
    assert (
        data.count(b"\r\n") == WRITTEN.count("\n")
        and b"get_key" in data
        and b"\n" not in data.replace(b"\r\n", b"")
    )
