"""Every gate in one command: lint, formatting and types run as part of `python -m pytest`.

CI runs only the README's test command, so ruff, `ruff format` and mypy are run here as
subprocesses of the same interpreter. Their caches (.ruff_cache, .mypy_cache) are git-ignored;
a cold mypy run takes about 20 s.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINTED = ["simulator", "scoring", "toolgen", "toolgym", "tests", "benchmarks", "scripts", "examples"]
TYPED = ["simulator", "scoring", "toolgen", "toolgym"]


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["ruff", "check", *LINTED], id="ruff-check"),
        pytest.param(["ruff", "format", "--check", *LINTED], id="ruff-format"),
        pytest.param(["mypy", *TYPED], id="mypy"),
        # the public API (`toolgym`'s exports and all they reach) under --strict, in a cache of its own
        pytest.param(
            ["mypy", "--strict", "--cache-dir", ".mypy_cache/strict", "toolgym/__init__.py"], id="mypy-strict"
        ),
    ],
)
def test_gate_passes(args: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, f"`{' '.join(args)}` failed:\n{proc.stdout}{proc.stderr}"


#: the most lines a shipped module's docstring may take: what the module is for, not its history
DOCSTRING_LINES = 10


def test_module_docstrings_say_what_a_module_is_for_in_a_few_lines() -> None:
    """Measurements and history go to docs/, dated; a module's docstring stays short."""
    import ast

    long = []
    for package in TYPED:
        for path in sorted((ROOT / package).rglob("*.py")):
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
            if doc is not None and len(doc.splitlines()) > DOCSTRING_LINES:
                long.append(f"{path.relative_to(ROOT)}: {len(doc.splitlines())} lines")
    assert not long, long


#: the most lines a shipped module may take before its docstring must say why it is one module
MODULE_LINES = 500


def test_a_module_over_500_lines_says_why_in_its_docstring() -> None:
    """One module a concept (docs/architecture.md); a longer one names its reason."""
    import ast

    unexplained = []
    for path in sorted(p for package in TYPED for p in (ROOT / package).rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        doc = ast.get_docstring(ast.parse(text)) or ""
        if len(text.splitlines()) > MODULE_LINES and f"Over {MODULE_LINES} lines" not in doc:
            unexplained.append(f"{path.relative_to(ROOT)}: {len(text.splitlines())} lines")
    assert not unexplained, unexplained
