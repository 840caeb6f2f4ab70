"""CI runs what the README tells a new user, as written: the install line, the main job, the tests."""

from __future__ import annotations

import re

from .conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def quick_start() -> list[str]:
    """The command lines of the README's Quick start (its first two blocks: set-up, tests), in order."""
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)[:2]
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_the_quick_start_is_install_serve_test():
    install, serve, tests = quick_start()
    assert install.startswith("python3 -m venv .venv && ") and "-c constraints.txt" in install
    assert serve.startswith(".venv/bin/toolgym serve bank ")
    assert tests == ".venv/bin/python -m pytest"


def test_ci_runs_the_quick_start_first_and_as_written():
    install, serve, tests = quick_start()
    at = [CI.index(line) for line in (install, serve, tests)]  # ValueError: a line CI does not run
    assert at == sorted(at)
    assert "pip install" not in CI[: at[0]], "CI installs something before the README's install line"
    loop = README.split("The whole loop, with a scripted agent standing in for yours:", 1)[1]
    agent = next(
        line.split("  #")[0].strip() for line in loop.splitlines() if "examples/mcp_agent.py" in line
    )
    assert at[1] < CI.index(agent) < at[2]


def test_the_constraints_pin_every_declared_dependency():
    pins = {
        line.split("==")[0].lower().replace("_", "-")
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    pyproject = (ROOT / "pyproject.toml").read_text()
    declared = {m.lower() for m in re.findall(r'^\s+"([A-Za-z0-9_.-]+)[=<>!~]', pyproject, flags=re.M)}
    assert declared and declared <= pins, sorted(declared - pins)
