"""Package attributes imported on first use, so that `import simulator.errors` stays cheap.

A package maps each public name to the submodule that defines it; the submodule is imported the
first time the name is read (PEP 562 module `__getattr__`), then cached on the package. A public
name that is also a submodule's name (`scoring.replay`) keeps naming the function once the
submodule is imported, as it did when the package imported everything eagerly.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable


def lazy_exports(
    package: str, exports: dict[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose public names live in `exports` (name → module)."""

    class LazyPackage(types.ModuleType):
        def __setattr__(self, name: str, value: object) -> None:
            if (
                name in exports
                and isinstance(value, types.ModuleType)
                and value.__name__ == f"{package}.{name}"
            ):
                value = getattr(value, name)  # the submodule was imported: the name stays the export
            super().__setattr__(name, value)

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    sys.modules[package].__class__ = LazyPackage
    return __getattr__, __dir__
