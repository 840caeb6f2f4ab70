"""`toolgym generate`: real specs → PLAN.json, a summary table or JSON, one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolgym.cli import app

from .conftest import shared_file
from .synth_kit import SHOP

runner = CliRunner()
SAMPLE = [  # an OpenAPI 3.0 JSON spec, a Swagger 2.0 YAML one, an OpenAPI 3.0 YAML one, BFCL
    "openapi/vendor/paypal__paypal-rest-api-specifications/openapi/invoicing_v2.json",
    "openapi/apis-guru/mercedes-benz.com/configurator/1.0/swagger.yaml",
    "openapi/apis-guru/orbit.love/v1/openapi.yaml",
    "function_calling/bfcl_multi_turn_func_doc/gorilla_file_system.json",
]


@pytest.fixture(scope="module")
def specs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("specs")
    for i, rel in enumerate(SAMPLE):
        shutil.copy(shared_file(f"corpus/dev/{rel}"), folder / f"{i}-{Path(rel).name}")
    (folder / "broken.json").write_text('{"openapi": "3.0.0", "paths": {', encoding="utf-8")
    return folder


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["generate", *args])
    return result.exit_code, result.stdout, result.stderr


def test_generate_writes_a_plan_holding_every_operation_once(specs, tmp_path):
    plan_path = tmp_path / "plans" / "plan.json"
    code, stdout, stderr = run(str(specs), "--plan", str(plan_path), "--workers", "1", "--json")
    assert code == 1, stderr  # broken.json failed; the others are planned
    summary = json.loads(stdout)
    plan = json.loads(plan_path.read_text(encoding="utf-8"))
    placed = [i for d in plan["domains"] for i in d["operations"]] + [s["id"] for s in plan["skipped"]]
    assert len(placed) == len(set(placed)) == summary["operations"]["read"] > 50
    assert all(5 <= len(d["operations"]) <= 40 for d in plan["domains"])
    assert summary["domains"] == len(plan["domains"]) > 0
    assert [f["path"] for f in plan["failed_files"]] == [str(specs / "broken.json")]
    assert summary["specs"]["failed"] == 1
    assert set(summary["tools_per_domain"]) == {"min", "median", "p90", "max"}
    assert sum(summary["operations"]["by_kind"].values()) == summary["operations"]["normalized"]


def test_same_specs_and_seed_give_a_byte_identical_plan(specs, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run(str(specs), "--plan", str(a), "--seed", "7", "--json")[0] == 1  # broken.json
    assert run(str(specs), "--plan", str(b), "--seed", "7", "--workers", "1", "--json")[0] == 1
    assert a.read_bytes() == b.read_bytes()


def test_generate_prints_a_summary_table(specs, tmp_path):
    code, stdout, stderr = run(str(specs), "--plan", str(tmp_path / "p.json"), "--max-tools", "12")
    assert code == 1, stderr
    assert "tools per domain min / median / p90 / max" in stdout and "operations skipped" in stdout
    assert "broken.json" in stderr  # the failed file, with its reason
    plan = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    assert all(len(d["operations"]) <= 12 for d in plan["domains"])


def test_bounds_the_wrong_way_round_are_one_line(specs, tmp_path):
    code, _, stderr = run(
        str(specs), "--plan", str(tmp_path / "p.json"), "--min-tools", "9", "--max-tools", "5"
    )
    assert code == 2 and stderr.count("\n") == 1 and "--max-tools 5 is below --min-tools 9" in stderr
    assert not (tmp_path / "p.json").exists()


def test_a_missing_spec_is_one_line(tmp_path):
    code, _, stderr = run(str(tmp_path / "nope.yaml"), "--plan", str(tmp_path / "p.json"))
    assert code == 2 and stderr.startswith("error: ") and "nope.yaml" in stderr


def test_the_benchmark_reports_the_documented_figures(specs, tmp_path):
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(root / "benchmarks" / "toolgen.py"),
            str(specs),
            "--workers",
            "1",
            "--json",
            str(out),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["wall_s"] > 0 and report["peak_mib"]["summed"] > 0
    assert set(report["tools_per_domain"]) == {"min", "median", "p90", "max"}
    assert 0 <= report["single_api_share"] <= 1 and 0 <= report["skipped_share"] <= 1
    assert report["disconnected_domains"] == [] and report["out_of_bounds_domains"] == []
    assert 0 < len(report["sample"]) <= 10 and all(d["tools"] for d in report["sample"])
    assert "tools per domain min/median/p90/max" in proc.stdout


@pytest.fixture
def not_specs(tmp_path: Path) -> dict[str, Path]:
    """Inputs that cannot be used: a JSON object, a YAML list (neither an API spec), malformed JSON."""
    files = {
        "object": ("hello.json", '{"hello": 1}\n'),
        "list": ("list.yaml", "- a\n- b\n"),
        "broken": ("broken.json", '{"openapi": "3.0.0", "paths": {'),
    }
    folder = tmp_path / "inputs"
    folder.mkdir()
    for name, text in files.values():
        (folder / name).write_text(text, encoding="utf-8")
    return {key: folder / name for key, (name, _) in files.items()}


def test_every_input_that_cannot_be_used_is_listed_the_others_generated_and_the_exit_is_1(
    not_specs, tmp_path
):
    out = tmp_path / "new" / "out"
    inputs = [str(not_specs[k]) for k in ("object", "list", "broken")]
    code, _, stderr = run(*inputs, str(SHOP), "--out", str(out), "--workers", "1", "--no-tasks")
    assert code == 1, stderr
    lines = stderr.strip().splitlines()
    assert (
        f"not an API spec: {not_specs['object']}: an object with no `openapi` or `swagger` version" in stderr
    )
    assert "(keys: hello)" in stderr
    assert f"not an API spec: {not_specs['list']}: a list of 2 items, none of them a tool" in stderr
    assert f"failed: {not_specs['broken']}: invalid JSON" in stderr
    assert lines[-1] == "error: 3 of 4 input files could not be used (listed above)"
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))  # the shop was generated, kept
    assert len(report["failed_files"]) == 3
    assert (out / "tiny-shop-order-user" / "domain.yaml").is_file()


def test_when_nothing_is_generated_nothing_is_left_in_out(not_specs, tmp_path):
    out = tmp_path / "new" / "out"
    code, _, stderr = run(str(not_specs["object"]), str(not_specs["list"]), "--out", str(out), "--no-tasks")
    assert code == 1 and f"error: no domain was generated, so nothing was written to {out}" in stderr
    assert not (tmp_path / "new").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    code, _, stderr = run(str(not_specs["object"]), "--out", str(mine), "--json")
    assert code == 1 and "not an API spec" in stderr
    assert mine.is_dir() and list(mine.iterdir()) == []  # the user's folder stays, empty


def test_non_specs_found_in_a_folder_are_counted_not_failed(not_specs, tmp_path):
    """A corpus folder holds other data files (package.json, …): only files named are held to be specs."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    shutil.copy(not_specs["object"], folder)
    shutil.copy(SHOP, folder)
    code, stdout, stderr = run(str(folder), "--plan", str(tmp_path / "p.json"), "--json")
    assert code == 0, stderr
    assert json.loads(stdout)["specs"] | {"seconds": 0} == {
        "files": 2,
        "specs": 1,
        "not_specs": 1,
        "failed": 0,
        "seconds": 0,
    }
