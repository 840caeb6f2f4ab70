"""Fuzzing tools: schema-valid arguments reach deep, findings are exact and the same every run."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from typer.testing import CliRunner

from scoring import load_domain
from scoring.validation.domains import DomainValidation, ValidationReport
from scoring.validation.fuzz import ToolFuzz, fuzz_domain, fuzz_tool, pools, strategy
from simulator import Domain
from tests.conftest import FIXTURES
from toolgym.cli import app

BUNDLED = ("bank", "office", "logistics", "tau2-retail")


@dataclass
class _Bug:
    """A step with a bug in it: it divides by the length of the note (an empty note crashes it)."""

    bind: str | None = None
    yields: bool | None = False

    def run(self, rt: Any, env: dict[str, Any]) -> Any:
        return 100 // len(env["args"]["notes"])


@pytest.fixture()
def buggy(tmp_path) -> Domain:
    """The shop with a bug planted in set_note's operation (a fresh domain object)."""
    folder = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    domain = load_domain(folder)
    domain.tools["set_note"].steps.insert(0, _Bug())
    return domain


def test_fuzz_reports_a_tool_that_raises_a_non_tool_error(buggy):
    report = fuzz_tool(buggy, "set_note", 30)
    assert 0 < report.calls <= 30
    (finding,) = report.findings
    assert finding.tool == "set_note" and "ZeroDivisionError" in finding.error
    assert json.loads(finding.arguments)["notes"] == ""
    clean = [r for r in fuzz_domain(buggy, 10) if r.tool != "set_note"]
    assert clean and all(r.calls and not r.findings for r in clean)


def test_fuzz_is_seeded_and_bounded(buggy):
    first = fuzz_domain(buggy, 15)
    assert fuzz_domain(buggy, 15) == first
    assert all(r.calls <= 15 for r in first)
    assert fuzz_tool(buggy, "set_note", 0) == ToolFuzz(tool="set_note")


def test_fuzz_reaches_past_the_first_lookup():
    """Ids come from the seed: most cancel_order calls find their order and reach its checks."""
    shop = load_domain(FIXTURES / "shop")
    seen: list[str] = []
    report = fuzz_tool(shop, "cancel_order", 40)
    assert report.calls and not report.findings
    known = pools(shop)
    assert "O-0002" in known["order_id"] and "C-0001" in known[""]
    strat = strategy(shop.tools["cancel_order"].spec.input_schema, None, known)

    @settings(max_examples=60, derandomize=True, database=None)
    @given(strat)
    def draw(args: dict[str, Any]) -> None:
        seen.append(args["order_id"])

    draw()
    assert sum(s in known["order_id"] for s in seen) > len(seen) // 4


@given(strategy(load_domain(FIXTURES / "shop").tools["place_order"].spec.input_schema))
def test_drawn_arguments_satisfy_the_schema(args):
    assert load_domain(FIXTURES / "shop").validators["place_order"].is_valid(args)


def test_strict_fails_on_tool_findings(buggy):
    tools = fuzz_domain(buggy, 10)
    domain = DomainValidation(
        domain=buggy.ref, fingerprint="f", path="p", tasks=[], tools=tools, fuzz_calls=10
    )
    report = ValidationReport(domains=[domain], reruns=1, workers=1, executor="local", fuzz=10)
    assert report.failures == 1 and domain.tool_findings[0].tool == "set_note"


def test_validate_reports_fuzzed_tools_and_fuzz_zero_skips():
    runner = CliRunner()
    base = ["validate", str(FIXTURES / "shop"), "--reruns", "1", "--workers", "1", "--json"]
    fuzzed = runner.invoke(app, [*base, "--fuzz", "5", "--strict"])
    assert fuzzed.exit_code == 0, fuzzed.output
    (domain,) = json.loads(fuzzed.stdout)["domains"]
    assert domain["fuzz_calls"] == 5 and len(domain["tools"]) == len(load_domain(FIXTURES / "shop").tools)
    assert all(0 < t["calls"] <= 5 and t["findings"] == [] for t in domain["tools"])
    skipped = runner.invoke(app, ["validate", str(FIXTURES / "shop"), "--reruns", "1", "--fuzz", "0"])
    assert skipped.exit_code == 0 and "tool findings" in skipped.stdout and "skipped" in skipped.stdout


def test_no_bundled_tool_raises_a_non_tool_error():
    """The issue's "done when": fuzzing every bundled domain finds no tool raising a non-tool error."""
    findings = [f for name in BUNDLED for r in fuzz_domain(load_domain(name), 12) for f in r.findings]
    assert findings == []
