"""`import toolgym` gives the names a user needs, imported on first use; the packages are typed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import toolgym

ROOT = Path(__file__).resolve().parent.parent


def test_the_top_level_names_are_the_packages_own() -> None:
    import scoring
    import simulator
    from toolgym.env import Environment

    assert toolgym.Environment is Environment
    assert toolgym.load_domain is scoring.load_domain  # a domain with its tasks' gold
    assert toolgym.ToolgymError is simulator.ToolgymError
    assert toolgym.score_rollout is scoring.score_rollout
    assert set(toolgym.__all__) <= set(dir(toolgym))


def test_importing_toolgym_imports_none_of_them() -> None:
    code = "import sys, toolgym; print(any(m in sys.modules for m in ('simulator.format.loader', 'scoring', 'toolgym.env')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_every_package_ships_py_typed() -> None:
    for package in ("simulator", "scoring", "toolgen", "toolgym"):
        assert (ROOT / package / "py.typed").is_file()
