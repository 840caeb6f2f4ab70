"""No shipped module reaches into another package's private names (read from the AST).

A private name is an attribute, a `getattr`/`hasattr`/`setattr` string or an imported module or
name with a leading underscore (not a dunder) that none of the project's packages defines. There
are none: the server uses only the public APIs of fastmcp, the MCP SDK and starlette (issue #27).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("simulator", "scoring", "toolgen", "toolgym")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _trees(root: Path) -> dict[str, ast.Module]:
    files = [p for pkg in PACKAGES for p in (root / pkg).rglob("*.py")]
    return {p.relative_to(root).as_posix(): ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in files}


def _defined(trees: dict[str, ast.Module]) -> set[str]:
    """Every name the project binds: functions, classes, attributes it sets, variables, arguments."""
    names: set[str] = set()
    for tree in trees.values():
        for n in ast.walk(tree):
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(n.name)
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store):
                names.add(n.attr)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
            elif isinstance(n, ast.arg):
                names.add(n.arg)
            elif isinstance(n, ast.keyword) and n.arg:
                names.add(n.arg)
    return names


def foreign_privates(root: Path = ROOT) -> set[tuple[str, str]]:
    trees = _trees(root)
    ours = _defined(trees)
    found: set[tuple[str, str]] = set()
    for module, tree in trees.items():
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and _private(n.attr) and n.attr not in ours:
                found.add((module, n.attr))
            elif (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name)
                and n.func.id in ("getattr", "hasattr", "setattr")
                and len(n.args) > 1
                and isinstance(n.args[1], ast.Constant)
                and isinstance(n.args[1].value, str)
                and _private(n.args[1].value)
                and n.args[1].value not in ours
            ):
                found.add((module, n.args[1].value))
            elif isinstance(n, ast.Import):
                found |= {(module, a.name) for a in n.names if any(map(_private, a.name.split(".")))}
            elif (
                isinstance(n, ast.ImportFrom)
                and n.level == 0
                and n.module
                and not n.module.startswith(PACKAGES)
            ):
                if any(map(_private, n.module.split("."))):
                    found.add((module, n.module))
                found |= {(module, a.name) for a in n.names if _private(a.name)}
    return found


def test_no_private_name_of_another_package() -> None:
    found = foreign_privates()
    assert not found, sorted(found)


def test_the_check_sees_attributes_getattr_strings_and_imports(tmp_path: Path) -> None:
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir()
    (tmp_path / "toolgen" / "bad.py").write_text(
        "import json\nimport re._parser\nfrom json import _private_thing\n"
        "class Mine:\n    def _ours(self): return self._ours\n"
        "x = json._default_decoder\ny = getattr(json, '_default_encoder')\n"
    )
    found = {name for _, name in foreign_privates(tmp_path)}
    assert found == {"re._parser", "_private_thing", "_default_decoder", "_default_encoder"}
