"""The generator never writes two names SQLite takes for one (equal ignoring case).

AWS specs name a parent's id `usageplanId` in a path and `usagePlanId` in the record: two
spellings that `column_for` (which compares snake_case forms: `usageplan_id`, `usage_plan_id`)
kept apart, so the foreign key became a second column and `CREATE TABLE` failed ("duplicate
column name"). The fixture spec is that case in miniature, with `Id`/`id` and `Name`/`name` too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from scoring import check_domain, load_domain
from simulator.runtime.episode import Episode
from toolgen.synth.schema import infer_schema
from toolgen.synth.tools import compile_tools
from toolgym.cli import app

from .synth_kit import make_op, planned_from

SPEC = Path(__file__).resolve().parent / "fixtures" / "case_names" / "usage_openapi.yaml"
runner = CliRunner()


def _generate(out: Path) -> dict:
    result = runner.invoke(app, ["generate", str(SPEC), "--out", str(out), "--workers", "1", "--json"])
    assert result.exit_code == 0, result.stderr
    return json.loads((out / "report.json").read_text())


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("case") / "out"
    return out, _generate(out)


def _case_clashes(names: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    return [n for n in names if seen.setdefault(n.lower(), n) != n]


def test_the_domain_is_kept_checks_clean_and_loads(generated):
    out, report = generated
    [result] = report["domain_results"]
    assert result["kept"], result["reason"]
    assert result["compiled"] == result["operations"] == 7
    assert result["tasks_kept"] >= 5
    folder = Path(result["folder"])
    check = check_domain(folder)
    assert check.errors == [] and check.domain is not None
    domain = load_domain(folder)
    assert _case_clashes(list(domain.spec.tables)) == []
    for table in domain.spec.tables.values():
        assert _case_clashes(list(table.columns)) == []
    assert domain.tasks and len(domain.tasks) == result["tasks_kept"]


def test_the_path_parameter_is_the_records_foreign_key(generated):
    """`usageplanId` (the path) and `usagePlanId` (the record) are one column, the foreign key,
    and the tool filters on it: a plan's usage is found through the argument."""
    out, report = generated
    domain = load_domain(Path(report["domain_results"][0]["folder"]))
    usages = domain.spec.tables["usages"]
    assert usages.columns["usagePlanId"].references == "usageplans.id"
    tool = next(t for t in domain.spec.tools if t.name == "get_usage")
    assert "usageplanId" in tool.input_schema["properties"]
    with Episode(domain, seed=0) as episode:
        plan = episode.export()["usages"][0]["usagePlanId"]
        rows = episode.call("get_usage", {"usageplanId": plan, "startDate": "0000", "endDate": "9999"})
    found = rows if isinstance(rows, list) else next(v for v in rows.values() if isinstance(v, list))
    assert found and all(r["usagePlanId"] == plan for r in found)


def test_the_same_spec_gives_the_same_domain(generated, tmp_path):
    out, report = generated
    again = _generate(tmp_path / "again")
    first, second = Path(report["domain_results"][0]["folder"]), Path(again["domain_results"][0]["folder"])
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for rel in files:
        if rel.name != "README.md":  # (names the output folder)
            assert (first / rel).read_bytes() == (second / rel).read_bytes(), rel


_SPELLINGS = st.sampled_from(
    "gadgetId gadgetid GadgetId gadget_id GADGETID Name name NAME Id id tags Tags".split()
)


@given(st.lists(st.lists(_SPELLINGS, min_size=1, max_size=5, unique=True), min_size=1, max_size=3))
def test_inferred_columns_never_collide_ignoring_case(arguments):
    """Any mix of spellings of a parent's id, a name and an id: no table gets two names SQLite
    takes for one, and every argument bound to a column names a column of its table."""
    ops = [make_op("get_gadget", "read", {"gadget_id": {"type": "string"}}, ["gadget_id"], entity="gadget")]
    for i, props in enumerate(arguments):
        ops.append(
            make_op(f"set_widget_{i}", "update", {p: {"type": "string"} for p in props}, entity="widget")
        )
    schema = infer_schema(*planned_from(*ops))
    assert _case_clashes(list(schema.tables)) == []
    for table in schema.tables.values():
        assert _case_clashes(list(table.columns)) == [], table.columns
    for bindings in schema.bindings.values():
        for b in bindings:
            if b.table is not None and b.column is not None:
                assert b.column in schema.tables[b.table].columns
    compile_tools(schema)
