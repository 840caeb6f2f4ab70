"""The public surface is small, declared in `__all__`, sorted, and every name in it exists."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("package", ["simulator", "scoring"])
def test_all_is_sorted_and_importable(package):
    module = importlib.import_module(package)
    names = module.__all__
    assert names == sorted(names), f"{package}.__all__ is not sorted"
    assert len(names) <= 20, f"{package} exposes {len(names)} names; keep the surface small"
    for name in names:
        assert hasattr(module, name), f"{package}.__all__ names {name}, which it does not define"
