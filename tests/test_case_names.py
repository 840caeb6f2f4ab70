"""Names SQLite would collide on: two columns of a table, or two tables, equal ignoring case.

`CREATE TABLE` fails on `Name` beside `name` ("duplicate column name"), and a second table
`Customers` beside `customers` ("already exists"); the loader reports either as a clear error,
with every other problem still reported (`test_every_problem_is_reported_at_once` style)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from scoring import check_domain
from tests.test_loader import copy_shop, edit_yaml, problems
from toolgym.cli import app

runner = CliRunner()


def _add_column(raw: dict) -> None:
    raw["tables"]["customers"]["columns"]["Name"] = {"type": "string", "nullable": True}


def _add_table(raw: dict) -> None:
    raw["tables"]["Customers"] = {"primary_key": "cid", "columns": {"cid": {"type": "string"}}}


def test_sqlite_really_collides_on_case():
    db = sqlite3.connect(":memory:")
    for sql, fragment in (
        ("CREATE TABLE t (name TEXT, Name TEXT)", "duplicate column name"),
        ("CREATE TABLE customers (a); CREATE TABLE Customers (b)", "already exists"),
    ):
        try:
            db.executescript(sql)
        except sqlite3.OperationalError as exc:
            assert fragment in str(exc)
        else:  # pragma: no cover - what this fix rests on
            raise AssertionError(sql)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            _add_column,
            "domain.yaml:tables.customers: table 'customers': columns 'name' and 'Name' differ only in case",
        ),
        (_add_table, "domain.yaml:tables: tables 'customers' and 'Customers' differ only in case"),
    ],
)
def test_names_differing_only_in_case_are_one_clear_error(tmp_path, edit, message):
    folder = copy_shop(tmp_path)
    edit_yaml(folder, edit)
    assert problems(folder) == [f"{message}, and SQLite treats names case-insensitively: rename one"]


def test_other_problems_are_still_reported(tmp_path):
    folder = copy_shop(tmp_path)

    def breakit(raw: dict) -> None:
        _add_column(raw)
        _add_table(raw)
        raw["tools"][0]["operation"]["get"] = "nowhere"

    edit_yaml(folder, breakit)
    found = problems(folder)
    assert len(found) == 3
    assert sum("differ only in case" in p for p in found) == 2
    assert any("nowhere" in p for p in found)


def test_case_distinct_arguments_are_fine(tmp_path):
    """Tool arguments are JSON keys, which are case-sensitive: `Name` and `name` stay apart."""
    folder = copy_shop(tmp_path)

    def two_args(raw: dict) -> None:
        tool = raw["tools"][0]
        tool["input_schema"]["properties"]["Customer_id"] = {"type": "string"}

    edit_yaml(folder, two_args)
    report = check_domain(folder)
    assert report.domain is not None, report.errors


def test_check_cli_names_both(tmp_path):
    folder = copy_shop(tmp_path)
    edit_yaml(folder, _add_column)
    result = runner.invoke(app, ["check", str(folder), "--json"])
    assert result.exit_code == 1
    errors = json.loads(result.stdout)["errors"]
    assert [e["message"] for e in errors] == [
        "table 'customers': columns 'name' and 'Name' differ only in case, "
        "and SQLite treats names case-insensitively: rename one"
    ]
    plain = runner.invoke(app, ["check", str(folder)])
    assert plain.exit_code == 1
    assert "'name' and 'Name' differ only in case" in plain.output
