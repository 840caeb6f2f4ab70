"""Tasks as the grading side reads them: gold calls, answer facts, columns to ignore.

The runtime reads of tasks.jsonl only task views (id, instruction, seed). Here are the model of a
whole line (`Task`, `Call`), its checks against the tools (known tools, schema-valid arguments,
`$calls` references, replayed where they reach into results) and `load_domain`, which gives a
`GradedDomain` (`domain.task("bank-001").calls`); a server is never given one (`serving_domain`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from simulator import Domain
from simulator.errors import Problem, SpecError, TaskError
from simulator.format._loadtasks import TASKS_FILE, task_lines
from simulator.format.loader import CheckReport, ToolsRead
from simulator.format.loader import check_domain as check_runtime
from simulator.format.spec import Answers
from simulator.format.specbase import SpecModel as _Model

from .calls import CallRef, call_references, run_calls
from .errors import CallReferenceError

__all__ = ["Call", "GradedDomain", "Task", "check_domain", "graded", "load_domain", "task_of"]

#: how many calls of an unknown tool its problem names
MAX_PLACES = 11


class Call(_Model):
    """One tool call: a name and its arguments."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    expect_error: bool = Field(default=False, description="the correct behaviour is that this call fails")
    free: list[str] = Field(
        default_factory=list,
        description="arguments whose value the task leaves to the agent (e.g. a memo); validation does not mutate them",
    )


class Task(_Model):
    """One task: an instruction, the gold calls, answer facts, columns to ignore when diffing."""

    id: str
    instruction: str
    calls: list[Call] = Field(default_factory=list)
    answer_facts: list[Any] = Field(default_factory=list)
    answers: Answers | None = Field(
        default=None,
        description="where answer facts may appear: `final` (the last assistant message without tool calls) or `any` assistant message; null: the domain's `answers`",
    )
    ignore_columns: list[str] = Field(default_factory=list, description="`table.column` entries")
    difficulty: str | None = None
    tags: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="ungraded notes for people (e.g. rubric text)")
    seed: int = 0

    @model_validator(mode="after")
    def _ignore_shape(self) -> Task:
        for entry in self.ignore_columns:
            if entry.count(".") != 1:
                raise ValueError(f"ignore_columns entry {entry!r} is not `table.column`")
        return self


@dataclass
class GradedDomain(Domain):
    """A domain with its full tasks (gold calls, answer facts): what grading, validation and
    training read. A server is never given one: `serving_domain` makes a plain `Domain` of it."""

    tasks: Sequence[Task]

    def task(self, task_id: str) -> Task:
        task = super().task(task_id)
        assert isinstance(task, Task)
        return task


def _with_tasks(domain: Domain, tasks: Sequence[Task]) -> GradedDomain:
    """`domain` (the same compiled tools, tables, seed snapshot and fingerprint) with full tasks."""
    values = {f.name: getattr(domain, f.name) for f in dataclasses.fields(Domain) if f.init}
    return GradedDomain(**{**values, "tasks": list(tasks)})


def graded(domain: Domain) -> GradedDomain:
    """The domain with its full tasks: itself when it is graded, else its folder's tasks.jsonl
    read and checked against its tools (once per domain: the graded domain is kept with it).
    TaskError when the domain has no folder, or its tasks.jsonl no longer lists its tasks;
    SpecError when a task line is wrong."""
    if isinstance(domain, GradedDomain):
        return domain
    kept = domain.__dict__.get("_graded")
    if isinstance(kept, GradedDomain):
        return kept
    if domain.path is None:
        raise TaskError(
            f"{domain.ref} has no folder to read its tasks from: load it with scoring.load_domain"
        )
    tools = ToolsRead(set(domain.tools), domain.validators, set(), dict(domain.spec.tables))
    reader = _TaskReader(domain.path, tools)
    tasks = reader.read_tasks()
    if not reader.problems and [t.id for t in tasks] != [t.id for t in domain.tasks]:
        raise TaskError(
            f"{domain.path / TASKS_FILE} has changed since {domain.ref} was loaded: load it again"
        )
    full = _with_tasks(domain, tasks)
    if not reader.problems:
        reader.check_reference_paths(full)
    if reader.problems:
        raise SpecError(reader.problems)
    domain.__dict__["_graded"] = full
    return full


class _TaskReader:
    """tasks.jsonl read and checked against the tools."""

    def __init__(self, folder: Path, tools: ToolsRead):
        self.folder = folder
        self.tools = tools
        self.problems: list[Problem] = []
        self.lines: dict[str, int] = {}  # task id -> its line in tasks.jsonl

    def problem(self, where: str, message: str) -> None:
        self.problems.append(Problem(TASKS_FILE, where, message))

    def read_tasks(self) -> list[Task]:
        tasks: list[Task] = []
        unknown: dict[str, list[str]] = {}  # tool name -> the calls naming it
        for lineno, _, task in task_lines(self.folder, Task, self.problems):
            where = f"line {lineno}"
            self.lines[task.id] = lineno
            self._check_calls(task, where, unknown)
            for entry in task.ignore_columns:
                table, _, column = entry.partition(".")
                if table not in self.tools.tables or column not in self.tools.tables[table].columns:
                    self.problem(f"{where} (task {task.id}).ignore_columns", f"unknown column {entry!r}")
            tasks.append(task)
        for name, places in unknown.items():
            also = (
                f" (also {', '.join(places[1:MAX_PLACES])}{' and more' if len(places) > MAX_PLACES else ''})"
            )
            self.problem(places[0], f"unknown tool {name!r}" + (also if len(places) > 1 else ""))
        return tasks

    def _check_calls(self, task: Task, where: str, unknown: dict[str, list[str]]) -> None:
        validators = self.tools.validators
        for i, call in enumerate(task.calls):
            if call.name in self.tools.invalid:
                continue  # its definition is wrong, and reported there
            if call.name not in self.tools.names:  # (a renamed tool: one problem, naming every call)
                unknown.setdefault(call.name, []).append(f"{where} (task {task.id}).calls[{i}]")
                continue
            refs = call_references(call.arguments)
            for ref in refs:
                self._check_reference(task, i, ref, f"{where} (task {task.id}).calls[{i}].arguments")
            if call.expect_error or call.name not in validators or refs:
                continue
            for err in validators[call.name].iter_errors(call.arguments):
                self.problem(
                    f"{where} (task {task.id}).calls[{i}]",
                    f"arguments rejected by {call.name}'s input schema: {err.message}",
                )

    def _check_reference(self, task: Task, index: int, ref: CallRef, where: str) -> None:
        target = ref.target(index)
        if isinstance(target, str):
            self.problem(where, target)
        elif task.calls[target].expect_error:
            self.problem(
                where, f"{ref.text} refers to call {target}, which is expected to fail and has no result"
            )

    def check_reference_paths(self, domain: GradedDomain) -> None:
        """Replay the gold calls of each task that refers to earlier results, to find references to
        fields those results do not have (only such tasks are replayed: the check costs their calls).
        A gold call that misbehaves is validation's finding (broken-gold), not a load problem: the
        replay stops there."""
        for task in domain.tasks:
            if not any(call_references(call.arguments) for call in task.calls):
                continue
            with domain.episode(seed=task.seed) as ep:
                try:
                    for step in run_calls(ep, task.calls, task.id):
                        unguarded = getattr(step.error, "unguarded", False)
                        if unguarded or step.ok == task.calls[step.index].expect_error:
                            break
                except CallReferenceError as exc:
                    self.problem(f"line {self.lines[task.id]} (task {task.id})", str(exc))


def check_domain(ref: str | Path, warnings: bool = True, *, generated: bool = True) -> CheckReport:
    """`simulator.format.loader.check_domain` with the tasks checked in full: the report's domain (None
    when there are errors) is a `GradedDomain`; tasks.jsonl's problems are this module's (every
    one the runtime's reading finds, and the gold calls' own)."""
    report = check_runtime(ref, warnings, generated=generated)
    if report.tools is None:
        return report
    reader = _TaskReader(report.folder, report.tools)
    tasks = reader.read_tasks()
    errors = [p for p in report.errors if p.file != TASKS_FILE] + reader.problems
    domain = None if errors or report.domain is None else _with_tasks(report.domain, tasks)
    if domain is not None:
        reader.check_reference_paths(domain)
        if reader.problems:
            errors, domain = errors + reader.problems, None
    return dataclasses.replace(report, domain=domain, errors=errors)


def load_domain(ref: str | Path, *, generated: bool = True) -> GradedDomain:
    """A domain and its full tasks (`check_domain`); SpecError with every problem."""
    report = check_domain(ref, warnings=False, generated=generated)
    if report.domain is None:
        raise SpecError(report.errors)
    assert isinstance(report.domain, GradedDomain)
    return report.domain


def task_of(domain: Domain, task: Task | str) -> Task:
    """A task of the domain, with its gold, by id (a `Task` stands for itself); TaskError for an
    unknown id."""
    return task if isinstance(task, Task) else graded(domain).task(task)
