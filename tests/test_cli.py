from __future__ import annotations

import json

from typer.testing import CliRunner

from tests.conftest import FIXTURES
from toolgym.cli import app

runner = CliRunner()
SHOP = str(FIXTURES / "shop")


def test_domains_json_lists_bundled_domains():
    result = runner.invoke(app, ["domains", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert all({"name", "path", "ok"} <= set(r) for r in rows)


def test_check_ok_and_json():
    result = runner.invoke(app, ["check", SHOP, "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["domain"] == "shop@0.1.0"


def test_check_lists_problems_and_fails(tmp_path):
    (tmp_path / "domain.yaml").write_text("name: Bad Name\nversion: one\ntables: {}\ntools: []\n")
    result = runner.invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 1
    assert "tables" in result.stderr


def test_call_prints_result_or_error():
    ok = runner.invoke(app, ["call", SHOP, "get_customer", '{"customer_id": "C-0001"}'])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["name"] == "Customer 1"
    bad = runner.invoke(app, ["call", SHOP, "get_customer", '{"customer_id": 1}'])
    assert bad.exit_code == 1 and "1 is not of type 'string'" in bad.stderr
    broken = runner.invoke(app, ["call", SHOP, "get_customer", "{nope"])
    assert broken.exit_code == 2 and "not valid JSON" in broken.stderr  # a usage error


def test_every_command_has_help_with_an_example():
    for name in ("domains", "check", "call", "serve", "stats", "score", "validate", "curate", "report"):
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0 and "Example" in result.stdout


def test_help_keeps_paragraphs_and_examples_apart():
    """Help is rendered as paragraphs rewrapped to the terminal: no line cut where the source
    was, each example on its own line, nothing in angle brackets lost."""
    for name in ("generate", "export", "score", "serve"):
        text = runner.invoke(app, [name, "--help"], env={"COLUMNS": "100"}).stdout
        lines = [line.strip() for line in text.splitlines()]
        assert sum(line.count("Example:") for line in lines) == sum(
            line.startswith("Example:") for line in lines
        ), name
    generate = runner.invoke(app, ["generate", "--help"], env={"COLUMNS": "100"}).stdout
    assert "\n From real records:" in generate
    assert "RUNS/<session>.jsonl" in runner.invoke(app, ["serve", "--help"], env={"COLUMNS": "100"}).stdout


def test_no_arguments_prints_the_help():
    result = runner.invoke(app, [])
    assert "Usage" in result.output and "Traceback" not in result.output
    assert "error:" not in result.stderr


def test_unknown_command_is_one_line():
    result = runner.invoke(app, ["nosuch"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == ["error: No such command 'nosuch' (see `toolgym --help`)"]
