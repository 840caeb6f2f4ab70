"""The loader's task checks: each line of tasks.jsonl validated, its calls naming known tools with
arguments their schemas accept and `$calls` references to earlier calls that succeed; the tasks
whose references reach into results are replayed to check the paths they name.
"""

from __future__ import annotations

import json
from typing import Any

from ._loadspec import _validate
from ._loadtools import ToolChecker
from .calls import CallRef, call_references, run_calls
from .domain import Domain
from .errors import CallReferenceError
from .spec import Table, Task

#: how many calls of an unknown tool its problem names
MAX_PLACES = 11


class TaskReader(ToolChecker):
    """tasks.jsonl read and checked against the tools."""

    # set by the loader (simulator.loader)
    tables: dict[str, Table]
    lines: dict[str, int]

    def read_tasks(self, tools: set[str], validators: dict[str, Any]) -> list[Task]:
        path = self.folder / "tasks.jsonl"
        tasks: list[Task] = []
        if not path.is_file():
            return tasks
        file = "tasks.jsonl"
        unknown: dict[str, list[str]] = {}  # tool name -> the calls naming it
        ids: dict[str, int] = {}
        for lineno, text in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
            if not text.strip():
                continue
            where = f"line {lineno}"
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                self.problem(file, where, f"not valid JSON: {exc.msg}")
                continue
            task = _validate(Task, raw, file, where, self.problems)
            if task is None:
                continue
            if task.id in ids:
                self.problem(file, where, f"duplicate task id {task.id!r} (first on line {ids[task.id]})")
                continue
            ids[task.id] = lineno
            self.lines[task.id] = lineno
            for i, call in enumerate(task.calls):
                if call.name in self.invalid_tools:
                    continue  # its definition is wrong, and reported there
                if call.name not in tools:  # (a renamed tool: one problem, naming every call)
                    unknown.setdefault(call.name, []).append(f"{where} (task {task.id}).calls[{i}]")
                    continue
                refs = call_references(call.arguments)
                for ref in refs:
                    self._check_reference(task, i, ref, f"{where} (task {task.id}).calls[{i}].arguments")
                if call.expect_error or call.name not in validators or refs:
                    continue
                for err in validators[call.name].iter_errors(call.arguments):
                    self.problem(
                        file,
                        f"{where} (task {task.id}).calls[{i}]",
                        f"arguments rejected by {call.name}'s input schema: {err.message}",
                    )
            for entry in task.ignore_columns:
                table, _, column = entry.partition(".")
                if table not in self.tables or column not in self.tables[table].columns:
                    self.problem(
                        file, f"{where} (task {task.id}).ignore_columns", f"unknown column {entry!r}"
                    )
            tasks.append(task)
        for name, places in unknown.items():
            also = (
                f" (also {', '.join(places[1:MAX_PLACES])}{' and more' if len(places) > MAX_PLACES else ''})"
            )
            self.problem(file, places[0], f"unknown tool {name!r}" + (also if len(places) > 1 else ""))
        return tasks

    def _check_reference(self, task: Task, index: int, ref: CallRef, where: str) -> None:
        target = ref.target(index)
        if isinstance(target, str):
            self.problem("tasks.jsonl", where, target)
        elif task.calls[target].expect_error:
            self.problem(
                "tasks.jsonl",
                where,
                f"{ref.text} refers to call {target}, which is expected to fail and has no result",
            )

    def check_reference_paths(self, domain: Domain) -> None:
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
                    self.problem("tasks.jsonl", f"line {self.lines[task.id]} (task {task.id})", str(exc))
