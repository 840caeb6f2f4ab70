"""`toolgym generate SPEC... --out DIR`: domain folders that check, a report counting every operation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from scoring import check_domain, load_domain
from simulator.format.folders import BUNDLED
from toolgen.synth.run import synthesize_domain
from toolgym.cli import app

from .synth_kit import FIXTURES, SHOP, planned

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["generate", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("gen") / "out"
    code, stdout, stderr = run(
        str(FIXTURES), "--out", str(out), "--workers", "1", "--json", "--rows", "12", "--no-tasks"
    )
    assert code == 0, stderr
    return out, json.loads(stdout)


def test_every_kept_domain_is_a_folder_that_checks_clean_and_loads(generated):
    out, summary = generated
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    kept = [d for d in report["domain_results"] if d["kept"]]
    assert {d["name"] for d in kept} == {
        "tiny-shop-order-user",
        "weather-reading-station",
        "assorted-functions-toolbox",
    }
    for entry in kept:
        folder = Path(entry["folder"])
        assert {p.name for p in folder.iterdir()} >= {"domain.yaml", "seed", "policy.md", "README.md"}
        check = check_domain(folder)
        assert check.errors == [], check.errors
        domain = load_domain(folder)
        assert len(domain.spec.tools) == entry["tools"] and entry["rows"] > 0
        sizes = [len(f.read_text(encoding="utf-8").splitlines()) for f in (folder / "seed").glob("*.jsonl")]
        assert sizes and all(n <= 12 for n in sizes) and max(sizes) == 12  # --rows 12
    assert summary["domains"]["kept"] == 3 and summary["domains"]["toolboxes_kept"] == 1


def test_the_report_counts_every_operation_once_by_source_id(generated):
    out, summary = generated
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    ops = report["operations"]
    assert ops["total"] == 22 and ops["compiled"] + ops["skipped"] == ops["total"]
    # the toolbox's three computations (calculate_bmi, convert_currency, translate_text) name no
    # record: not modelled, each with its description, never a table of invented records
    assert ops["compiled"] == 19 and ops["skipped_by_reason"] == {"not modelled": 3}
    assert sorted(s["reason"] for s in report["skipped"]) == [
        "not modelled: Calculate the body mass index.",
        "not modelled: Convert an amount between currencies.",
        "not modelled: Translate text into another language.",
    ]
    compiled_as = ops["compiled_as"]
    assert compiled_as["status"] == 1 and compiled_as["event"] == 1 and sum(compiled_as.values()) == 19
    assert summary["operations"] == ops and "domain_results" not in summary
    assert report["tasks"] == {"kept": 0, "rejected": 0, "rejected_by_reason": {}}


def test_readme_names_sources_and_their_declared_licenses_and_policy_states_the_rules(generated):
    out, _ = generated
    shop = out / "tiny-shop-order-user"
    readme = (shop / "README.md").read_text(encoding="utf-8")
    assert "shop_openapi.yaml" in readme and "| Apache-2.0 |" in readme
    weather = (out / "weather-reading-station" / "README.md").read_text(encoding="utf-8")
    assert "weather_tools.json` | unknown |" in weather  # a function list declares no license
    policy = (shop / "policy.md").read_text(encoding="utf-8")
    assert (
        "- `cancel_order` sets an order's status to cancelled; it refuses one already cancelled, and one "
        "that is delivered (a final state)." in policy
    )
    assert (
        "- `update_user` changes only the fields given of a user; its email given as null is cleared."
        in policy
    )
    assert "- `delete_user` deletes a user for good; it refuses one that does not exist." in policy


def test_a_table_is_printed_without_json(tmp_path):
    code, stdout, stderr = run(str(SHOP), "--out", str(tmp_path / "o"), "--workers", "1", "--no-tasks")
    assert code == 0, stderr
    assert "compiled (tools of kept domains)" in stdout and "domains kept" in stdout
    assert (tmp_path / "o" / "report.json").is_file()


def test_no_output_named_is_a_usage_error(tmp_path):
    code, _, stderr = run(str(SHOP))
    assert code == 2 and "--plan PLAN.json, --out DIR, or both" in stderr


def test_an_unknown_executor_is_a_usage_error(tmp_path):
    code, _, stderr = run(str(SHOP), "--out", str(tmp_path / "o"), "--executor", "dask")
    assert code == 2 and "'--executor': 'dask' is not one of local, ray" in stderr
    assert not (tmp_path / "o").exists()


def test_two_local_workers_write_the_same_folders_as_one(generated, tmp_path):
    out, _ = generated
    code, _, stderr = run(
        str(FIXTURES), "--out", str(tmp_path / "o"), "--workers", "2", "--rows", "12", "--no-tasks"
    )
    assert code == 0, stderr
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        assert _folder_bytes(folder) == _folder_bytes(tmp_path / "o" / folder.name), folder.name


def test_output_inside_the_bundled_domains_is_refused(tmp_path):
    code, _, stderr = run(str(SHOP), "--out", str(BUNDLED / "generated-here"))
    assert code == 2 and "inside the bundled domains" in stderr
    assert not (BUNDLED / "generated-here").exists()


def test_plan_and_out_together_write_both(tmp_path):
    code, stdout, stderr = run(
        str(SHOP), "--plan", str(tmp_path / "p.json"), "--out", str(tmp_path / "o"), "--json", "--no-tasks"
    )
    assert code == 0, stderr
    assert json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))["domains"]
    assert json.loads(stdout)["plan"] == str(tmp_path / "p.json")


def _folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@settings(max_examples=3, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
def test_the_same_seed_gives_byte_identical_folders(tmp_path_factory, seed):
    plan, ops = planned(SHOP)
    a, b = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    first = synthesize_domain(plan, ops, a, {}, seed=seed, rows=6, with_tasks=False)
    second = synthesize_domain(plan, ops, b, {}, seed=seed, rows=6, with_tasks=False)
    assert first.kept and second.kept, (first.reason, second.reason)
    assert _folder_bytes(a / plan.name) == _folder_bytes(b / plan.name)


def test_the_benchmark_measures_the_compiled_share_on_written_domains(tmp_path):
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    report_path = tmp_path / "bench.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(root / "benchmarks" / "toolgen.py"),
            str(FIXTURES),
            "--workers",
            "1",
            "--out",
            str(tmp_path / "out"),
            "--no-tasks",
            "--json",
            str(report_path),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rates = json.loads(report_path.read_text(encoding="utf-8"))["synth"]
    assert rates["operations"]["total"] == 22 and rates["operations"]["compiled"] == 19  # 3 not modelled
    assert rates["domains"]["kept"] == 3 and rates["domains_failing_check"] == []
    assert rates["tasks"]["valid"] == sum(
        len((p / "tasks.jsonl").read_text(encoding="utf-8").splitlines())
        for p in (tmp_path / "out").iterdir()
        if (p / "tasks.jsonl").is_file()
    )
    assert "operations compiled into tools of kept domains: 19 / 22 (86.4%)" in proc.stdout


def test_fuzzing_every_generated_tool_finds_nothing_but_precise_tool_errors(generated):
    from scoring.validation.fuzz import fuzz_domain

    out, _ = generated
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        findings = [(f.tool, f.findings) for f in fuzz_domain(load_domain(folder), 15) if f.findings]
        assert findings == [], folder.name


def test_licenses_are_read_as_declared_from_files_and_archive_members(tmp_path):
    import tarfile

    from toolgen.synth.folder import source_licenses

    archive = tmp_path / "specs.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(SHOP, arcname="a/shop.yaml")
        tar.add(FIXTURES / "weather_tools.json", arcname="b/weather.json")
    as_json = tmp_path / "spec.json"
    as_json.write_text(json.dumps({"openapi": "3.0.0", "info": {"title": "t", "license": {"name": "MIT"}}}))
    found = source_licenses(
        [f"{archive}!a/shop.yaml", f"{archive}!b/weather.json", str(as_json), str(tmp_path / "gone")]
    )
    assert found == {
        f"{archive}!a/shop.yaml": "Apache-2.0",
        f"{archive}!b/weather.json": "unknown",
        str(as_json): "MIT",
        str(tmp_path / "gone"): "unknown",
    }


def _stage(kept: int):
    """A task stage writing `kept` real read-only tasks (list_users, answered by a user's name)."""
    from simulator.builders import call

    def make_tasks(builder, folder, schema, toolset, *, seed, domain=None):
        for i in range(kept):
            builder.task(
                f"t-{i}", "Who are the users?", [call("list_users", {"limit": i + 1})], answer_facts=[]
            )
        builder.write(folder, overwrite=True)
        return kept, {"no-op-passes": 2}

    return make_tasks


def test_a_domain_keeps_its_tasks_or_is_left_out_below_five(tmp_path):
    plan, ops = planned(SHOP)
    kept = synthesize_domain(plan, ops, tmp_path / "a", {}, rows=5, tasks=_stage(5))
    assert kept.kept and kept.tasks_kept == 5 and kept.tasks_rejected == {"no-op-passes": 2}
    assert len((tmp_path / "a" / plan.name / "tasks.jsonl").read_text(encoding="utf-8").splitlines()) == 5
    short = synthesize_domain(plan, ops, tmp_path / "b", {}, rows=5, tasks=_stage(4))
    assert not short.kept and short.reason == "fewer than 5 valid tasks: 4"
    assert not (tmp_path / "b" / plan.name).exists()
    assert {s.id for s in short.not_compiled} == set(plan.operations) and short.compiled == {}


def test_domain_yaml_has_no_aliases(generated):
    out, _ = generated
    for path in out.glob("*/domain.yaml"):
        text = path.read_text(encoding="utf-8")
        assert "&id0" not in text and "*id0" not in text, path


def test_a_generated_domain_is_served_to_the_official_mcp_client(generated, tmp_path):
    import asyncio
    import os
    import sys

    from mcp import ClientSession, StdioServerParameters, stdio_client

    out, _ = generated
    folder = out / "tiny-shop-order-user"
    domain = load_domain(folder)
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "FASTMCP_CHECK_FOR_UPDATES": "off"}
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-c",
            "from toolgym.cli import main; main()",
            "serve",
            str(folder),
            "--runs",
            str(tmp_path / "runs"),
        ],
        env=env,
        cwd=str(root),
    )

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            assert [t.name for t in tools.tools] == [t.name for t in domain.tool_specs()] + ["submit_answer"]
            created = await session.call_tool(
                "create_user", {"name": "Edsger Dijkstra", "email": "ew@example.com"}
            )
            assert not created.is_error, created
            found = await session.call_tool("list_users", {"q": "dijkstra"})
            assert not found.is_error and "ew@example.com" in json.dumps(found.model_dump(mode="json"))
            refused = await session.call_tool("get_user", {"userId": "nobody"})
            assert refused.is_error and "No user with userId nobody" in json.dumps(
                refused.model_dump(mode="json")
            )

    asyncio.run(main())


def test_with_tasks_a_kept_domain_has_five_valid_tasks_and_the_report_counts_them(tmp_path):
    code, stdout, stderr = run(str(SHOP), "--out", str(tmp_path / "o"), "--workers", "1", "--json")
    summary = json.loads(stdout)
    if code == 0:
        report = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
        (entry,) = report["domain_results"]
        lines = (Path(entry["folder"]) / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) == entry["tasks_kept"] == summary["tasks"]["kept"] >= 5
        assert check_domain(Path(entry["folder"])).errors == []
    else:  # left out: every operation counted as skipped, nothing written, exit 1
        assert code == 1 and "no domain was generated" in stderr, stderr
        ops = summary["operations"]
        assert ops["compiled"] == 0 and ops["skipped"] == ops["total"]
        assert not (tmp_path / "o").exists()
    assert summary["tasks"]["rejected"] == sum(summary["tasks"]["rejected_by_reason"].values())


def test_the_ray_executor_writes_the_same_folder(generated, tmp_path):
    pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")
    out, _ = generated
    code, _, stderr = run(
        str(SHOP),
        "--out",
        str(tmp_path / "o"),
        "--executor",
        "ray",
        "--workers",
        "1",
        "--rows",
        "12",
        "--no-tasks",
    )
    assert code == 0, stderr
    name = "tiny-shop-order-user"
    assert _folder_bytes(out / name) == _folder_bytes(tmp_path / "o" / name)


def test_without_toolboxes_the_plans_too_small_operations_stay_skipped(tmp_path):
    code, stdout, stderr = run(
        str(FIXTURES), "--out", str(tmp_path / "o"), "--no-toolboxes", "--no-tasks", "--json"
    )
    assert code == 0, stderr
    ops = json.loads(stdout)["operations"]
    assert (ops["total"], ops["compiled"], ops["skipped"]) == (22, 16, 6)
    assert ops["skipped_by_reason"] == {"too small and unrelated": 6}
    assert not (tmp_path / "o" / "assorted-functions-toolbox").exists()


@pytest.fixture(scope="module")
def with_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shop spec generated with validated tasks: the kept domain's folder."""
    out = tmp_path_factory.mktemp("gen-tasks") / "out"
    code, _, stderr = run(str(SHOP), "--out", str(out), "--workers", "1", "--json")
    assert code == 0, stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (entry,) = [d for d in report["domain_results"] if d["kept"]]
    return Path(entry["folder"])


def test_generated_tasks_served_over_http_score_one_with_gold_calls_and_fail_with_none(with_tasks, tmp_path):
    """`toolgym serve FOLDER --transport http` in a subprocess, the official MCP client playing each
    task's gold calls (ids resolved from the results it gets) and, in another session, no call;
    `toolgym score --runs` on the transcripts the server wrote: 1.0 and below 1.0."""
    import asyncio

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from scoring.calls import resolve_arguments
    from scoring.validation.validate import gold_message

    from .helpers import records, text
    from .test_server_e2e import http_server, wait_for_ends

    domain = load_domain(with_tasks)
    tasks = domain.tasks[:4]
    assert tasks and any(len(t.calls) >= 3 for t in domain.tasks)
    runs = tmp_path / "runs"

    async def play(url: str, task, gold: bool) -> None:
        async with (
            streamable_http_client(f"{url}?task={task.id}") as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            assert init.instructions is not None and task.instruction in init.instructions
            results: list = []
            for call in task.calls if gold else []:
                args = resolve_arguments(call.arguments, results, task.id, len(task.calls))
                got = await session.call_tool(call.name, args)
                assert got.is_error == call.expect_error, text(got)
                results.append(None if got.is_error else json.loads(text(got)))
            answer = gold_message(task) if gold else "done"
            assert not (await session.call_tool("submit_answer", {"answer": answer})).is_error

    async def main(url: str) -> None:
        for task in tasks:
            await play(url, task, gold=True)
            await play(url, task, gold=False)

    with http_server(str(with_tasks), runs) as (url, _):
        asyncio.run(main(url))
        assert len(wait_for_ends(runs, 2 * len(tasks))) == 2 * len(tasks)
    results = tmp_path / "results.jsonl"
    scored = runner.invoke(
        app, ["score", "--runs", str(runs), "--domain", str(with_tasks), "--out", str(results), "--json"]
    )
    assert scored.exit_code == 0, scored.stderr
    lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 2 * len(tasks)
    rewards: dict[tuple[str, bool], float] = {}
    for line in lines:
        played = any(r["type"] == "call" for r in records(Path(line["transcript"])))
        rewards[(line["task"], played)] = line["reward"]
    for task in tasks:
        assert rewards[(task.id, True)] == 1.0, task.id
        assert rewards[(task.id, False)] is not None and rewards[(task.id, False)] < 1.0, task.id


def test_with_tasks_two_workers_write_the_same_bytes_and_fingerprints_as_one(with_tasks, tmp_path):
    """(The fixtures plan several domains, so two worker processes share them.)"""
    code, _, stderr = run(str(FIXTURES), "--out", str(tmp_path / "o"), "--workers", "2", "--json")
    assert code == 0, stderr
    report = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    assert sum(d["kept"] for d in report["domain_results"]) >= 2
    again = tmp_path / "o" / with_tasks.name
    assert (again / "tasks.jsonl").is_file()
    assert _folder_bytes(with_tasks) == _folder_bytes(again)
    assert load_domain(with_tasks).fingerprint() == load_domain(again).fingerprint()
