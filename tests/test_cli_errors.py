"""The CLI never answers with a traceback: every error is one line naming what and where.

The walk at the bottom enumerates the app's registered commands and their parameters (so a new
command or option is covered without editing this file, once it has a baseline invocation) and
feeds each one unwritable outputs, missing or malformed inputs and bad values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
import typing
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.models import ArgumentInfo, CommandInfo, OptionInfo
from typer.testing import CliRunner

from scoring import load_domain
from scoring.batch import BatchScorer
from scoring.validation.manifest import Manifest
from simulator.runtime.transcript import FileSink
from tests.conftest import FIXTURES, ROOT
from toolgym.app import ToolgymGroup, fail, output_dir, output_file
from toolgym.cli import app

runner = CliRunner()
SHOP = str(FIXTURES / "shop")


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace: a gold transcript of bank-001, its results, a manifest, a file, a folder, junk."""
    root = tmp_path_factory.mktemp("cli")
    bank = load_domain("bank")
    task = bank.task("bank-001")
    (root / "runs").mkdir()
    sink = FileSink(root / "runs" / "s1.jsonl")
    with bank.episode(seed=0, task=task, transcript=sink) as ep:
        for call in task.calls:
            ep.call(call.name, call.arguments)
    sink.close()
    line = BatchScorer().score(root / "runs" / "s1.jsonl")
    (root / "results.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    manifest = Manifest(
        domain=bank.ref, fingerprint=bank.fingerprint(), valid_tasks=[t.id for t in bank.tasks]
    )
    (root / "bank.manifest.json").write_text(manifest.model_dump_json(), encoding="utf-8")
    rows = [  # samples of bank and office tasks, half of them passed (for `curate`)
        {"domain": d.ref, "task": t.id, "status": "scored", "reward": reward}
        for d in (bank, load_domain("office"))
        for t in d.tasks[:4]
        for reward in (1.0, 0.0)
    ]
    (root / "mixed-results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (root / "afile").write_text("a regular file\n", encoding="utf-8")
    (root / "adir").mkdir()
    (root / "junk.jsonl").write_text("this is not json\n", encoding="utf-8")
    return root


def one_error_line(result: Any, *named: str) -> str:
    """The result failed with exactly one `error: …` line on stderr, naming each of `named`."""
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text
    assert result.exit_code in (1, 2), (result.exit_code, text)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert "internal error" not in lines[0], lines[0]
    for name in named:
        assert name in lines[0], (name, lines[0])
    return lines[0]


# ---------------------------------------------------------------------------------------------
# the cases the issue names


def test_score_out_in_a_new_folder_is_made_when_written(ws, tmp_path):
    out = tmp_path / "newdir" / "deeper" / "r.jsonl"
    result = runner.invoke(app, ["score", "--runs", str(ws / "runs"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text().splitlines()[0])["task"] == "bank-001"


def test_score_one_transcript_writes_out(ws, tmp_path):
    out = tmp_path / "one" / "r.jsonl"
    result = runner.invoke(app, ["score", str(ws / "runs" / "s1.jsonl"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(x["task"], x["status"]) for x in lines] == [("bank-001", "scored")]


def test_score_out_under_a_file_fails_before_any_work(ws):
    result = runner.invoke(app, ["score", "--runs", str(ws / "runs"), "--out", f"{ws / 'afile'}/r.jsonl"])
    line = one_error_line(result, "--out", f"{ws / 'afile'}/r.jsonl")
    assert result.exit_code == 2 and "is a file" in line


def test_report_html_in_a_new_folder(ws, tmp_path):
    page = tmp_path / "newdir" / "h.html"
    result = runner.invoke(app, ["report", str(ws / "runs"), "--html", str(page)])
    assert result.exit_code == 0, result.output
    assert page.read_text().lstrip().lower().startswith("<!doctype html")


def test_curate_out_under_a_file(ws):
    result = runner.invoke(app, ["curate", str(ws / "results.jsonl"), "--out", f"{ws / 'afile'}/x"])
    one_error_line(result, "--out", f"{ws / 'afile'}/x")


def test_serve_runs_a_file(ws):
    one_error_line(
        runner.invoke(app, ["serve", SHOP, "--runs", str(ws / "afile")]), "--runs", str(ws / "afile")
    )


def test_validate_manifest_dir_a_file_fails_before_validating(ws):
    result = runner.invoke(app, ["validate", "bank", "--manifest-dir", str(ws / "afile")])
    one_error_line(result, "--manifest-dir", str(ws / "afile"))
    assert "validating" not in result.stderr


def test_serve_port_out_of_range():
    result = runner.invoke(app, ["serve", SHOP, "--transport", "http", "--port", "99999"])
    assert result.exit_code == 2
    one_error_line(result, "--port", "99999")


def test_serve_port_in_use_is_one_line_and_no_announcement(ws, busy_port, tmp_path):
    """Through the real console script: the port is checked before "serving … on …" is printed."""
    script = Path(sys.executable).parent / "toolgym"
    proc = subprocess.run(
        [
            str(script),
            "serve",
            SHOP,
            "--transport",
            "http",
            "--port",
            str(busy_port),
            "--runs",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert "serving" not in proc.stderr and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"127.0.0.1:{busy_port}" in lines[0] and "in use" in lines[0], lines


def test_serve_manifest_of_another_domain_says_so(ws, busy_port, tmp_path):
    result = runner.invoke(
        app,
        ["serve", SHOP, "--manifest", str(ws / "bank.manifest.json"), "--transport", "http"]
        + ["--port", str(busy_port), "--runs", str(tmp_path)],
    )
    line = one_error_line(result, "another domain's", "bank@", "shop")
    assert "changed since validation" not in line


def test_score_refuses_a_manifest_of_another_domain(ws, tmp_path):
    shop = load_domain(SHOP)
    path = tmp_path / "shop.manifest.json"
    path.write_text(
        Manifest(domain=shop.ref, fingerprint=shop.fingerprint(), valid_tasks=[]).model_dump_json()
    )
    result = runner.invoke(app, ["score", str(ws / "runs" / "s1.jsonl"), "--manifest", str(path)])
    one_error_line(result, "no validated manifest for bank@", "shop@")


def test_toolgym_domains_may_name_a_domain_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("TOOLGYM_DOMAINS", os.pathsep.join([SHOP, str(tmp_path)]))
    listed = runner.invoke(app, ["domains", "--json"])
    assert listed.exit_code == 0, listed.output
    assert "shop" in {r["name"] for r in json.loads(listed.stdout)}
    assert str(tmp_path) in listed.stderr and "neither a domain folder" in listed.stderr
    called = runner.invoke(app, ["call", "shop", "get_customer", '{"customer_id": "C-0001"}'])
    assert called.exit_code == 0 and json.loads(called.stdout)["name"] == "Customer 1"


def test_piped_tables_keep_every_column(ws):
    """Through the real console script with stdout a pipe: no column cut, no cell shortened."""
    script = Path(sys.executable).parent / "toolgym"
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run(
        [str(script), "stats", str(ws / "runs")], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr
    header = next(line for line in proc.stdout.splitlines() if " session " in line)
    for column in (
        "session",
        "task",
        "calls",
        "ok",
        "tool",
        "injected",
        "infra",
        "p50 us",
        "p90 us",
        "p99 us",
    ):
        assert f" {column} " in header, header
    assert len(header) > 80 and "…" not in proc.stdout
    assert "bank-001" in proc.stdout


def test_tables_are_not_cut_when_not_a_terminal(ws):
    result = runner.invoke(app, ["domains"])
    assert result.exit_code == 0 and str(ROOT / "domains" / "tau2-retail") in result.stdout


def test_library_errors_and_bugs_become_one_line(tmp_path):
    """The boundary itself: OSError, ValueError and ToolgymError lines; a bug names where it was."""
    demo = typer.Typer(cls=ToolgymGroup, add_completion=False)

    @demo.command()
    def read(path: Path) -> None:
        path.read_text()

    @demo.command()
    def value(text: str) -> None:
        raise ValueError(f"bad value {text!r}\nsecond line")

    @demo.command()
    def bug() -> None:
        raise KeyError("oops")

    @demo.command()
    def failing() -> None:
        raise fail("a chosen message")

    missing = tmp_path / "missing.txt"
    line = one_error_line(runner.invoke(demo, ["read", str(missing)]), str(missing))
    assert line.endswith("no such file or directory")
    line = one_error_line(runner.invoke(demo, ["value", "x" * 5000]), "bad value", "more characters")
    assert len(line) < 1200
    result = runner.invoke(demo, ["bug"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.count("\n") == 1 and "internal error at test_cli_errors.py:" in result.stderr
    assert "KeyError" in result.stderr
    one_error_line(runner.invoke(demo, ["failing"]), "a chosen message")


# ---------------------------------------------------------------------------------------------
# every command's help example runs (where it can offline)

#: Commands whose example cannot run here, and why.
EXAMPLE_SKIPS = {
    "serve": "serves until stopped",
    "validate": "validates two domains three times (~17 s on 2 cores); tests/test_validate.py runs the command",
    "generate": "reads a folder of API specs; tests/test_toolgen_cli.py runs the command on real ones",
}


def command_name(info: CommandInfo) -> str:
    """A registered command's name, as typer derives it."""
    assert info.callback is not None
    return info.name or info.callback.__name__.replace("_", "-")


def examples() -> list[tuple[str, str]]:
    found = []
    for info in app.registered_commands:
        name = command_name(info)
        for line in (info.callback.__doc__ or "").splitlines():
            if line.strip().startswith("Example: toolgym "):
                found.append((name, line.strip().removeprefix("Example: toolgym ")))
    return found


def test_every_command_has_an_example():
    names = {name for name, _ in examples()}
    commands = {command_name(i) for i in app.registered_commands}
    assert names == commands


def example_folder(ws: Path, folder: Path) -> Path:
    """A folder holding what the examples name: domains/, runs/, run.jsonl, results (mixed passes)."""
    import shutil

    folder.mkdir()
    (folder / "domains").symlink_to(ROOT / "domains")
    shutil.copytree(ws / "runs", folder / "runs")
    shutil.copy(ws / "runs" / "s1.jsonl", folder / "run.jsonl")
    shutil.copy(ws / "results.jsonl", folder / "runs-results.jsonl")
    shutil.copy(ws / "mixed-results.jsonl", folder / "results.jsonl")
    return folder


def test_help_examples_run(ws, tmp_path, monkeypatch):
    """Each example runs as written, in a fresh folder holding the files it names."""
    import shlex

    ran = []
    for i, (command, example) in enumerate(examples()):
        if command in EXAMPLE_SKIPS:
            continue
        monkeypatch.chdir(example_folder(ws, tmp_path / str(i)))
        result = runner.invoke(app, shlex.split(example))
        assert result.exit_code == 0, (example, result.output)
        assert "Traceback" not in result.output
        ran.append(command)
    assert {"call", "check", "domains", "score", "stats", "curate", "report"} <= set(ran)


# ---------------------------------------------------------------------------------------------
# the walk: every registered command, every parameter, bad values of each kind


def baselines(ws: Path, busy: int, tmp: Path) -> dict[str, dict[str, Any]]:
    """A valid invocation of each command (parameter name -> value), quick to refuse when broken."""
    return {
        "domains": {},
        "check": {"path": SHOP},
        "migrate": {"path": SHOP, "dry_run": True},
        "export": {"domain": SHOP, "out_file": str(tmp / "state.db")},
        "call": {"domain": SHOP, "tool": "get_customer", "arguments": '{"customer_id": "C-0001"}'},
        "serve": {
            "domain": SHOP,
            "transport": "http",
            "port": busy,
            "runs": str(tmp / "serve-runs"),
        },
        "stats": {"runs": str(ws / "runs")},
        "tools": {"domain": SHOP, "form": "anthropic"},
        "export-sft": {"domains": [SHOP], "out_file": str(tmp / "sft.jsonl")},
        "score": {"transcripts": [str(ws / "runs" / "s1.jsonl")], "out_file": str(tmp / "r.jsonl")},
        "validate": {"domains": [SHOP], "reruns": 1, "workers": 1, "manifest_dir": str(tmp / "m")},
        "curate": {"results": str(ws / "results.jsonl"), "output": str(tmp / "mix.json")},
        "generate": {
            "specs": [str(FIXTURES / "synth" / "shop_openapi.yaml")],
            "plan": str(tmp / "plan.json"),
            "workers": 1,
        },
        "report": {
            "runs": str(ws / "runs"),
            "results": str(ws / "results.jsonl"),
            "html_out": str(tmp / "h.html"),
        },
        "rollout": {
            "domains": ["bank"],
            "policy": ["noop"],
            "k": 1,
            "tasks": ["bank-007"],
            "runs": str(tmp / "rollouts"),
        },
        "quality": {
            "runs": str(ws / "results.jsonl"),
            "html_out": str(tmp / "q.html"),
            "manifest_dir": str(tmp / "kept"),
        },
    }


#: Values of plain text parameters that must be refused (exit 1, 2 if in USAGE, and the value named).
BAD_TEXT = {
    ("call", "domain"): "no-such-domain",
    ("call", "tool"): "no_such_tool",
    ("call", "arguments"): "{nope",
    ("check", "path"): "no-such-domain",
    ("migrate", "path"): "no-such-domain",
    ("export", "domain"): "no-such-domain",
    ("export", "task"): "no-such-task",
    ("serve", "domain"): "no-such-domain",
    ("serve", "task"): "no-such-task",
    ("serve", "log_level"): "loud",
    ("tools", "domain"): "no-such-domain",
    ("tools", "form"): "xml",
    ("export-sft", "domains"): "no-such-domain",
    ("score", "domain"): "no-such-domain",
    ("score", "task"): "no-such-task",
    ("validate", "domains"): "no-such-domain",
    ("validate", "executor"): "bogus",
    ("curate", "mix"): "bank=x",
    ("rollout", "domains"): "no-such-domain",
    ("rollout", "policy"): "bogus",
    ("rollout", "tasks"): "no-such-task",
    ("rollout", "executor"): "bogus",
    ("rollout", "via"): "bogus",
    ("generate", "executor"): "bogus",
    ("generate", "llm"): "ftp://nowhere",
}
#: Of BAD_TEXT, the option values refused as usage errors (exit 2), before any work.
USAGE = {
    ("call", "arguments"),
    ("serve", "log_level"),
    ("tools", "form"),
    ("validate", "executor"),
    ("curate", "mix"),
    ("rollout", "policy"),
    ("rollout", "executor"),
    ("rollout", "via"),
    ("generate", "executor"),
    ("generate", "llm"),
}


class Param(typing.NamedTuple):
    name: str
    info: ArgumentInfo | OptionInfo
    kind: type
    multiple: bool

    @property
    def flag(self) -> str:
        decls = [*(self.info.param_decls or ()), self.info.default]
        return next(
            (d for d in decls if isinstance(d, str) and d.startswith("--")),
            f"--{self.name.replace('_', '-')}",
        )


def params(callback: Any) -> list[Param]:
    out = []
    for name, hint in typing.get_type_hints(callback, include_extras=True).items():
        if name == "return" or typing.get_origin(hint) is not typing.Annotated:
            continue
        base, info = typing.get_args(hint)[:2]
        args = typing.get_args(base)
        if typing.get_origin(base) in (typing.Union, types.UnionType):
            base = next(a for a in args if a is not type(None))
        multiple = typing.get_origin(base) is list
        if multiple:
            base = typing.get_args(base)[0]
        out.append(Param(name, info, base, multiple))
    return out


def argv(command: str, values: dict[str, Any], ps: list[Param]) -> list[str]:
    args = [command]
    for p in ps:
        if p.name not in values:
            continue
        value = values[p.name]
        items = value if isinstance(value, list) else [value]
        if isinstance(p.info, ArgumentInfo):
            args += [str(v) for v in items]
        elif p.kind is bool:
            args += [p.flag] if value else []
        else:
            for v in items:
                args += [p.flag, str(v)]
    return args


def bad_values(ws: Path, command: str, p: Param) -> list[tuple[str, Any, str]]:
    """(what, value, the text the error must name) for one parameter."""
    info = p.info
    cases: list[tuple[str, Any, str]] = []
    if p.kind is Path:
        under = f"{ws / 'afile'}/sub/x.json"
        cases.append(("a path under a regular file", under, str(ws / "afile")))
        if info.exists:
            cases.append(("a missing input", str(ws / "missing.jsonl"), str(ws / "missing.jsonl")))
        if info.dir_okay is False:
            cases.append(("a folder where a file is expected", str(ws / "adir"), str(ws / "adir")))
            if info.exists:
                cases.append(("a malformed input", str(ws / "junk.jsonl"), str(ws / "junk.jsonl")))
        if info.file_okay is False or info.callback is output_dir:
            cases.append(("a file where a folder is expected", str(ws / "afile"), str(ws / "afile")))
        if info.callback is output_file:
            cases.append(("a folder where a file is to be written", str(ws / "adir"), str(ws / "adir")))
    elif p.kind in (int, float):
        cases.append(("not a number", "abc", "abc"))
        if info.min is not None:
            cases.append(("below the minimum", info.min - 1, str(info.min - 1)))
        if info.max is not None:
            cases.append(("above the maximum", info.max + 1, str(info.max + 1)))
    elif isinstance(p.kind, type) and issubclass(p.kind, Enum):
        cases.append(("not a choice", "bogus", "bogus"))
    elif (command, p.name) in BAD_TEXT:
        value = BAD_TEXT[(command, p.name)]
        cases.append(("a bad value", value, value))
    return [(what, [v] if p.multiple else v, named) for what, v, named in cases]


def test_every_command_has_a_baseline(ws, tmp_path):
    commands = {command_name(i) for i in app.registered_commands}
    assert commands == set(baselines(ws, 1, tmp_path)), "add the new command's baseline invocation"


def test_every_command_refuses_bad_input_in_one_line(ws, tmp_path, busy_port):
    """Unwritable outputs, missing and malformed inputs, bad values: exit 1 (2 for usage), one line,
    and no output (no folder the command would have made) left behind."""
    base = baselines(ws, busy_port, tmp_path)
    tried = 0
    for info in app.registered_commands:
        command = command_name(info)
        ps = params(info.callback)
        for p in ps:
            for what, value, named in bad_values(ws, command, p):
                args = argv(command, {**base[command], p.name: value}, ps)
                result = runner.invoke(app, args)
                try:
                    one_error_line(result, named)
                    if (command, p.name) in USAGE and what == "a bad value":
                        assert result.exit_code == 2, "a usage error exits 2"
                    assert list(tmp_path.iterdir()) == [], "a failed command leaves no output behind"
                except AssertionError as exc:
                    raise AssertionError(f"{command} {p.name} ({what}): {args}: {exc}") from None
                tried += 1
    assert tried >= 50


def test_a_transcript_of_a_domain_served_by_path_scores_with_domain_path(tmp_path, monkeypatch):
    """`serve ./mybank` writes a transcript that scores (reward 1.0) with `--domain ./mybank`, and
    without it from anywhere (the header names the folder); a folder gone since is named."""
    import asyncio
    import shutil

    from fastmcp import Client

    from simulator.serve.server import DomainServer

    folder = tmp_path / "mybank"
    shutil.copytree(ROOT / "domains" / "bank", folder)
    spec = folder / "domain.yaml"
    spec.write_text(
        spec.read_text(encoding="utf-8").replace("name: bank", "name: mybank", 1), encoding="utf-8"
    )
    domain = load_domain(folder)
    task = domain.task("bank-001")
    server = DomainServer(domain, task=task.id, runs=tmp_path / "runs")

    async def agent() -> None:
        async with Client(server.mcp) as client:
            for call in task.calls:
                await client.call_tool(call.name, call.arguments)
            await client.call_tool("submit_answer", {"answer": f"Your balance is {task.answer_facts[0]}."})

    asyncio.run(agent())
    (transcript,) = (tmp_path / "runs").glob("*.jsonl")
    monkeypatch.chdir(tmp_path / "runs")  # not where the domain folder is
    scored = runner.invoke(app, ["score", str(transcript), "--domain", str(folder), "--json"])
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.stdout)["reward"] == 1.0
    unnamed = runner.invoke(app, ["score", str(transcript), "--json"])
    assert unnamed.exit_code == 0 and json.loads(unnamed.stdout)["reward"] == 1.0, unnamed.output
    shutil.move(folder, tmp_path / "moved")
    one_error_line(runner.invoke(app, ["score", str(transcript)]), "mybank")
