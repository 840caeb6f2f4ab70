"""What a new user meets in their first hour: usage errors exit 2 naming the option, a misspelt
domain gets the nearest name, `validate` lists a domain's problems as `check` does, and a failed
command leaves no output folder behind (nor ever removes one the user had)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from scoring import load_domain
from tests.conftest import FIXTURES
from tests.test_cli_errors import one_error_line as errors_one_line
from toolgym.cli import app

runner = CliRunner()
SHOP = str(FIXTURES / "shop")
TOOLGYM = str(Path(sys.executable).parent / "toolgym")


def one_error_line(result: Any, code: int, *named: str) -> str:
    """The command exited `code` with exactly one `error: …` line on stderr, naming each of `named`."""
    assert result.exit_code == code, (result.exit_code, result.output)
    return errors_one_line(result, *named)


# ---------------------------------------------------------------------------------------------
# usage errors: exit 2, the option named, nothing done


def test_an_unknown_policy_through_the_real_command_is_a_usage_error(tmp_path):
    """The README's promise, through the console script: exit 2, the option named, no --out made."""
    out = tmp_path / "X"
    proc = subprocess.run(
        [TOOLGYM, "rollout", "bank", "--policy", "greedy", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: ") and "'--policy'" in line and "'greedy'" in line
    assert "gold-corrupt:N" in line  # the choices
    assert not out.exists()


ROLLOUT = ["rollout", "bank", "--out", "out/x"]
BAD_OPTION_VALUES = {
    "rollout --executor": ([*ROLLOUT, "--policy", "noop", "--executor", "dask"], "'--executor'"),
    "rollout --via": ([*ROLLOUT, "--policy", "noop", "--via", "carrier"], "'--via'"),
    "rollout --policy gold-corrupt": ([*ROLLOUT, "--policy", "gold-corrupt:x"], "'--policy'"),
    "rollout --policy openai": ([*ROLLOUT, "--policy", "openai:gpt"], "'--policy'"),
    "validate --executor": (["validate", "bank", "--executor", "dask"], "'--executor'"),
    "generate --executor": (["generate", SHOP, "--plan", "p.json", "--executor", "dask"], "'--executor'"),
    "generate --llm": (["generate", SHOP, "--out", "o", "--llm", "ftp://x"], "'--llm'"),
    "serve --log-level": (["serve", SHOP, "--log-level", "LOUD"], "'--log-level'"),
    "curate --mix": (["curate", "results.jsonl", "--mix", "bank=x"], "'--mix'"),
    "call arguments not JSON": (["call", SHOP, "get_customer", "{nope"], "not valid JSON"),
    "call arguments not an object": (["call", SHOP, "get_customer", "[1]"], "not a JSON object"),
    "tools --format": (["tools", SHOP, "--format", "xml"], "'--format'"),
    "export --task and --transcript": (
        ["export", "bank", "--task", "bank-001", "--transcript", "results.jsonl", "--out", "s.db"],
        "--task or --transcript",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_OPTION_VALUES))
def test_a_bad_option_value_exits_2_naming_the_option(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results.jsonl").write_text("", encoding="utf-8")
    args, named = BAD_OPTION_VALUES[case]
    one_error_line(runner.invoke(app, args), 2, named)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.jsonl"]  # nothing made


def test_an_existing_export_without_force_is_a_usage_error(tmp_path):
    out = tmp_path / "state.db"
    out.write_text("precious\n", encoding="utf-8")
    one_error_line(runner.invoke(app, ["export", "bank", "--out", str(out)]), 2, "'--out'", "--force")
    assert out.read_text(encoding="utf-8") == "precious\n"


def test_rollout_vias_are_the_runners():
    from scoring.rollouts.runner import VIAS
    from toolgym.commands.rollout import VIA_NAMES

    assert VIA_NAMES == VIAS


def test_a_log_level_in_capitals_is_accepted(tmp_path, busy_port):
    args = ["serve", SHOP, "--log-level", "WARNING", "--transport", "http", "--port", str(busy_port)]
    one_error_line(runner.invoke(app, [*args, "--runs", str(tmp_path / "runs")]), 1, "in use")


# ---------------------------------------------------------------------------------------------
# a domain that does not exist: the nearest one suggested, once, for every command


DOMAIN_COMMANDS = {
    "call": ["call", "{d}", "get_customer"],
    "check": ["check", "{d}"],
    "serve": ["serve", "{d}", "--runs", "{tmp}/runs"],
    "validate": ["validate", "{d}"],
    "export": ["export", "{d}", "--out", "{tmp}/s.db"],
    "tools": ["tools", "{d}"],
    "export-sft": ["export-sft", "{d}", "--out", "{tmp}/sft.jsonl"],
    "rollout": ["rollout", "{d}", "--policy", "noop", "--out", "{tmp}/rollouts"],
    "migrate": ["migrate", "{d}", "--dry-run"],
    "score --domain": ["score", "{run}", "--domain", "{d}"],
}


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from simulator.runtime.transcript import FileSink

    path = tmp_path_factory.mktemp("run") / "s1.jsonl"
    bank = load_domain("bank")
    sink = FileSink(path)
    with bank.episode(seed=0, task=bank.task("bank-001"), transcript=sink):
        pass
    sink.close()
    return path


@pytest.mark.parametrize("command", sorted(DOMAIN_COMMANDS))
def test_a_misspelt_domain_gets_the_nearest_name(command, tmp_path, transcript):
    args = [a.format(d="bnak", tmp=tmp_path, run=transcript) for a in DOMAIN_COMMANDS[command]]
    line = one_error_line(runner.invoke(app, args), 1, "bnak", "did you mean 'bank'?")
    assert "Traceback" not in line
    assert sorted(tmp_path.iterdir()) == []  # no output folder made


def test_a_misspelt_domain_folder_gets_the_folder_beside_it(tmp_path):
    shutil.copytree(FIXTURES / "shop", tmp_path / "myshop")
    one_error_line(
        runner.invoke(app, ["check", str(tmp_path / "myshp")]), 1, f"did you mean '{tmp_path / 'myshop'}'?"
    )


def test_a_name_near_nothing_lists_the_domains():
    line = one_error_line(runner.invoke(app, ["check", "zzzzzz"]), 1, "zzzzzz", "bank, ", "toolgym domains")
    assert "did you mean" not in line


# ---------------------------------------------------------------------------------------------
# validate lists a domain's problems as check does


def _broken_domain(folder: Path, text: str) -> Path:
    folder.mkdir()
    (folder / "domain.yaml").write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("name: Bad Name\nversion: one\ntables: {}\ntools: []\n", id="three-errors"),
        pytest.param("name: bad\nversion: 1.0.0\ntables: {}\ntools: []\n", id="one-error"),
    ],
)
def test_validate_lists_a_domains_problems_as_check_does(text, tmp_path):
    folder = _broken_domain(tmp_path / "bad", text)
    checked = runner.invoke(app, ["check", str(folder)])
    validated = runner.invoke(app, ["validate", str(folder)])
    assert checked.exit_code == validated.exit_code == 1
    assert validated.stderr == checked.stderr
    lines = validated.stderr.strip().splitlines()
    if len(lines) == 1:
        assert lines[0].startswith("error: domain.yaml:")
    else:
        assert lines[0] == f"{len(lines) - 1} errors in {folder}:"
        assert all(line.startswith("  error: domain.yaml:") for line in lines[1:]), lines
    assert "problem(s)" not in validated.stderr


# ---------------------------------------------------------------------------------------------
# output folders: checked before work, made on first write, removed again when the command fails


def test_a_failed_command_leaves_no_output_folder(tmp_path):
    new = tmp_path / "new"
    result = runner.invoke(app, ["validate", "no-such-domain", "--manifest-dir", str(new / "sub" / "dir")])
    one_error_line(result, 1, "no-such-domain")
    assert not new.exists()


def test_a_successful_command_makes_its_output_folder(tmp_path):
    folder = tmp_path / "new" / "sub" / "dir"
    args = ["validate", SHOP, "--manifest-dir", str(folder), "--reruns", "1", "--workers", "1", "--fuzz", "0"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads((folder / "shop@0.1.0.manifest.json").read_text(encoding="utf-8"))["domain"]


def test_a_folder_the_user_had_is_never_removed(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    result = runner.invoke(app, ["validate", "no-such-domain", "--manifest-dir", str(mine)])
    assert result.exit_code == 1 and mine.is_dir()
    result = runner.invoke(app, ["validate", "no-such-domain", "--manifest-dir", str(mine / "a" / "b")])
    assert result.exit_code == 1 and mine.is_dir() and list(mine.iterdir()) == []


def test_serve_that_cannot_listen_leaves_no_runs_folder_not_even_its_key(tmp_path, busy_port):
    runs = tmp_path / "new" / "runs"
    args = ["serve", SHOP, "--transport", "http", "--port", str(busy_port), "--runs", str(runs)]
    one_error_line(runner.invoke(app, args), 1, f"127.0.0.1:{busy_port}")
    assert not (tmp_path / "new").exists()


def test_serve_that_cannot_listen_keeps_a_runs_folder_the_user_had(tmp_path, busy_port):
    runs = tmp_path / "runs"
    runs.mkdir()
    args = ["serve", SHOP, "--transport", "http", "--port", str(busy_port), "--runs", str(runs)]
    one_error_line(runner.invoke(app, args), 1, f"127.0.0.1:{busy_port}")
    assert runs.is_dir()


def test_an_output_under_a_file_is_refused_before_any_work(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x\n", encoding="utf-8")
    result = runner.invoke(app, ["validate", "bank", "--manifest-dir", str(afile / "sub")])
    one_error_line(result, 2, "'--manifest-dir'", f"{afile} is a file")
    assert "validating" not in result.stderr


def test_score_reports_each_bad_transcript_and_scores_the_rest(tmp_path):
    """`toolgym score A B C`: a hostile or broken file is one error line; the others are scored."""
    good = tmp_path / "good.json"
    good.write_text(
        json.dumps(
            {
                "domain": "bank",
                "task": "bank-001",
                "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "done"}],
            }
        ),
        encoding="utf-8",
    )
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "header", "domain": "bank"\n', encoding="utf-8")
    hostile = tmp_path / "deep.json"
    hostile.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    result = runner.invoke(app, ["score", str(broken), str(hostile), str(good), "--domain", "bank", "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["task"] == "bank-001"  # the good one, scored
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert [e.split(":", 2)[1].strip() for e in errors[:2]] == [str(broken), str(hostile)]
    assert "2 of 3 transcripts could not be scored" in errors[-1]


def test_an_executor_whose_extra_is_missing_says_how_to_install_it():
    if importlib.util.find_spec("ray") is not None:
        pytest.skip("Ray is installed here: nothing is missing")
    result = runner.invoke(app, ["validate", "bank", "--executor", "ray", "--fuzz", "0", "--json"])
    line = one_error_line(result, 1, "needs Ray", "pip install 'toolgym[ray]'")
    assert "internal error" not in line
