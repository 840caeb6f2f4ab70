"""Every import of the shipped packages is declared in pyproject.toml, and nothing declared is unused.

deptry reads pyproject.toml's `[tool.deptry]` (what ships, what is imported without an import
statement); a bare install runs the same imports, so an undeclared one fails here before a user.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEPTRY = Path(sys.executable).parent / "deptry"


def deptry(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(DEPTRY), ".", "--no-ansi"], cwd=project, capture_output=True, text=True, timeout=120
    )


def test_every_import_is_declared_and_every_dependency_used():
    result = deptry(ROOT)
    assert result.returncode == 0, result.stderr


def test_an_undeclared_import_is_found(tmp_path):
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for package in ("simulator", "scoring", "toolgen", "toolgym"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "toolgen" / "llm.py").write_text("import httpx\nimport yaml\n")
    result = deptry(tmp_path)
    assert result.returncode == 1
    assert "toolgen/llm.py:1:8: DEP001 'httpx' imported but missing" in result.stderr
    assert "'yaml' imported" not in result.stderr  # declared (pyyaml), so not reported


#: modules that import an extra's package at import time (tested in that extra's venv)
NEEDS_EXTRA = {"toolgym.adapters.openenv": "openenv"}


def test_every_shipped_module_imports_on_the_bare_install():
    """A bare `pip install -e .` runs these imports: one of an undeclared package fails here."""
    script = (
        "import importlib, pkgutil, sys\n"
        "skip = set(sys.argv[1:])\n"
        "for package in ('simulator', 'scoring', 'toolgen', 'toolgym'):\n"
        "    path = importlib.import_module(package).__path__\n"
        "    for info in pkgutil.walk_packages(path, package + '.'):\n"
        "        if info.name not in skip:\n"
        "            importlib.import_module(info.name)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, *NEEDS_EXTRA], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
