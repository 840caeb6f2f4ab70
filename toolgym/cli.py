"""The `toolgym` command: a thin composition root over simulator, scoring and toolgen.

Library errors are converted at this boundary into one readable message and a non-zero exit.
Every command has `--help` with an example; most have `--json` for machines.
"""

from __future__ import annotations

import importlib

from .app import app

for _module in (
    "core",
    "score",
    "serve",
    "validate",
    "curate",
    "generate",
    "migrate",
    "export",
    "rollout",
    "quality",
    "tools",
    "sft",
):
    try:
        importlib.import_module(f"toolgym.commands.{_module}")
    except ModuleNotFoundError as exc:  # a command group not written yet
        if exc.name != f"toolgym.commands.{_module}":
            raise


def main() -> None:  # pragma: no cover - console entry
    app()


__all__ = ["app", "main"]
