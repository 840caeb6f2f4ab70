"""Loading a domain folder: parse, validate, compile, and report every problem at once.

`load_domain(ref)` takes a bundled domain's name or a folder path and returns a `Domain`, or
raises `SpecError` listing every problem with its file and location. `check_domain(ref)` returns
the same errors and the warnings (`lint.py`) without raising. Each mistake is reported once, at
its source. Design notes: docs/design/engine.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from ..codegen.fastschema import bound_inputs, input_validator
from ..errors import Problem, SpecError
from ..plan.tables import build_tables
from ..runtime.domain import Domain
from ._loadtasks import read_task_lines
from ._loadtools import ToolChecker, _check_schema
from ._seedrows import SeedReader
from .folders import BUNDLED, domain_folders, domain_search_path, list_domain_dirs, local_roots, resolve
from .lint import Spelling
from .spec import Table, Tool

__all__ = [
    "BUNDLED",
    "CheckReport",
    "ToolsRead",
    "check_domain",
    "domain_folders",
    "domain_search_path",
    "list_domain_dirs",
    "load_domain",
    "local_roots",
    "resolve",
]


class _Loader(ToolChecker, SeedReader):
    def __init__(self, folder: Path, generated: bool = True):
        self.folder = folder
        self.generated = generated  # the tools' code generated (False: the reference path)
        self.problems: list[Problem] = []
        self.tables: dict[str, Table] = {}
        self.warnings: list[Problem] = []
        self.spellings: list[Spelling] = []  # old spellings in domain.yaml (also among the warnings)
        self.tool_positions: list[int] = []  # index in domain.yaml of each valid tool
        # what is wrong is reported once, at its source; these keep it from showing up again elsewhere
        self.stand_ins: dict[str, set[str]] = {}  # table -> columns whose definition is wrong
        self.invalid_tools: set[str] = set()  # tools whose definition is wrong
        self.stand_in_tools: list[tuple[str, Tool]] = []  # (label, what of it is right) of each
        self.rejected: dict[str, list[tuple[dict[str, Any], int]]] = {}  # table -> seed rows refused, lines
        self.seen: set[tuple[str, str]] = set()  # (location, message) of compile problems reported


@dataclass(frozen=True)
class ToolsRead:
    """What the grading side checks gold calls against: the tools' names, the input validators
    of those whose schema is valid, the tools whose definition is wrong (reported there), tables."""

    names: set[str]
    validators: dict[str, Any]
    invalid: set[str]
    tables: dict[str, Table]


@dataclass
class CheckReport:
    """What loading a domain found: the domain (None when there are errors), every error (each
    independent mistake once, at its source) and every warning (the domain loads, but a value is
    lost, or a spelling is old)."""

    folder: Path
    domain: Domain | None
    errors: list[Problem]
    warnings: list[Problem]
    spellings: list[Spelling] = field(default_factory=list)  # in domain.yaml, for `toolgym migrate`
    #: the tools as read (None: tasks.jsonl was not read, the spec or its tables being unusable)
    tools: ToolsRead | None = None


def reference_forced() -> bool:
    """Whether `TOOLGYM_REFERENCE=1` puts every domain loaded on the reference path."""
    return os.environ.get("TOOLGYM_REFERENCE") == "1"


def check_domain(ref: str | Path, warnings: bool = True, *, generated: bool = True) -> CheckReport:
    """Load and compile a domain folder (or a bundled domain by name), collecting errors and (unless
    `warnings` is false) warnings. `generated=False` (or `TOOLGYM_REFERENCE=1`): every tool call
    runs the plain interpreted path, no generated code (the reference the generated code equals)."""
    folder = resolve(ref)
    loader = _Loader(folder, generated and not reference_forced())
    spec = loader.read_spec()
    if spec is None:
        return CheckReport(folder, None, loader.problems, loader.warnings, loader.spellings)
    # every input array and free-text string gets a size bound (what agents see, too): `maxItems`
    # and `maxLength` where none was given
    tools_bounded = [t.model_copy(update={"input_schema": bound_inputs(t.input_schema)}) for t in spec.tools]
    spec = spec.model_copy(update={"tools": tools_bounded})
    loader.tables = dict(spec.tables)
    if not spec.tables:
        return CheckReport(folder, None, loader.problems, loader.warnings, loader.spellings)
    _, infos = build_tables(loader.check_tables(spec), loader.generated)
    loader.check_snapshot(spec)
    tools = loader.compile_tools(spec, infos)
    if warnings:
        loader.lint(spec)
    validators: dict[str, jsonschema.Draft202012Validator] = {}
    for tool in spec.tools:
        try:
            _check_schema(tool.input_schema)
        except jsonschema.SchemaError:
            continue
        validators.setdefault(tool.name, input_validator(tool.input_schema))
    seed = loader.read_seed(spec, infos)
    views, texts = read_task_lines(folder, loader.problems)
    read = ToolsRead({t.name for t in spec.tools}, validators, set(loader.invalid_tools), loader.tables)
    if loader.problems:
        return CheckReport(folder, None, loader.problems, loader.warnings, loader.spellings, read)
    policy_file = folder / "policy.md"
    policy = policy_file.read_text(encoding="utf-8") if policy_file.is_file() else (spec.policy or "")
    domain = Domain(
        spec=spec,
        path=folder,
        policy=policy,
        tables=infos,
        tools=tools,
        validators=validators,
        seed_rows=seed,
        tasks=views,
        generated=loader.generated,
        _task_texts=tuple(texts),
    )
    return CheckReport(folder, domain, loader.problems, loader.warnings, loader.spellings, read)


def load_domain(ref: str | Path, *, generated: bool = True) -> Domain:
    """Load and compile a domain folder (or a bundled domain by name). Raises SpecError with every
    problem. `generated=False` (or `TOOLGYM_REFERENCE=1`): the reference path (`check_domain`)."""
    report = check_domain(ref, warnings=False, generated=generated)
    if report.domain is None:
        raise SpecError(report.errors)
    return report.domain
