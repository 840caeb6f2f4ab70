"""A generated policy.md says what the tools enforce and nothing they do not: each rule tried on
the domain (`toolgen.synth.policy.probe_policy`), on the shop fixture and on real dev specs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from toolgen.synth.policy import PolicyProbe, probe_policy
from toolgym.cli import app

from .conftest import shared_file
from .synth_kit import SHOP

runner = CliRunner()
#: dev specs with state changes, filtered deletes and nullable updates among their tools
DEV_SPECS = (
    "openapi/apis-guru/signl4.com/v1/openapi.yaml",
    "openapi/apis-guru/superset.apache.local/superset/v1/openapi.yaml",
    "openapi/apis-guru/amazonaws.com/dynamodb/2012-08-10/openapi.yaml",
)


def _generate(specs: list[Path], out: Path) -> list[Path]:
    result = runner.invoke(app, ["generate", *map(str, specs), "--out", str(out), "--workers", "1", "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return [Path(d["folder"]) for d in report["domain_results"] if d["kept"]]


def _probe(folders: list[Path]) -> PolicyProbe:
    found = PolicyProbe()
    for folder in folders:
        one = probe_policy(folder)
        found.probed, found.untried, found.false = (
            found.probed + one.probed,
            found.untried + one.untried,
            found.false + one.false,
        )
    return found


def test_every_rule_of_the_shop_policy_holds_when_tried(tmp_path):
    (folder,) = _generate([SHOP], tmp_path / "out")
    found = probe_policy(folder)
    assert found.false == [] and found.probed == 4 and found.untried == 0


def test_a_rule_the_tools_do_not_enforce_is_found(tmp_path):
    (folder,) = _generate([SHOP], tmp_path / "out")
    policy = folder / "policy.md"
    text = policy.read_text(encoding="utf-8")
    lies = text.replace("and one that is delivered (a final state)", "and one that is placed (a final state)")
    lies = lies.replace(
        "deletes a user for good; it refuses one that does not exist",
        "deletes for good the users its arguments match; none matching is no error",
    )
    assert lies != text
    policy.write_text(lies, encoding="utf-8")
    false = probe_policy(folder).false
    assert any("`cancel_order`" in f and "a row that is placed was changed" in f for f in false), false
    assert any("`delete_user`" in f and "a key that names no row was refused" in f for f in false), false


def test_every_rule_of_real_specs_policies_holds_when_tried(tmp_path):
    specs = [shared_file(f"corpus/dev/{name}") for name in DEV_SPECS]
    copied = tmp_path / "specs"
    copied.mkdir()
    for i, spec in enumerate(specs):
        shutil.copy(spec, copied / f"{i}-{spec.name}")
    found = _probe(_generate([copied], tmp_path / "out"))
    assert found.false == []
    assert found.probed >= 20, found
