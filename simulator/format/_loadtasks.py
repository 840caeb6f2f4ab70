"""The loader's reading of tasks.jsonl: what the runtime needs of each task, nothing of its grading.

Each line gives a `TaskView` (id, instruction, seed) and its canonical text, what the domain's
fingerprint hashes of it: the line's fields in the task format's order, those at their defaults
left out, as compact JSON (the text `scoring.tasks.Task.model_dump_json(exclude_defaults=True)`
gives; a test holds the two together). The gold calls, answer facts and columns to ignore are
read and checked by the grading side (`scoring.tasks`), from the same file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pydantic_core
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from ..errors import Problem
from ._loadspec import _validate
from .specbase import SpecModel
from .taskviews import TaskView

#: the file of a domain's tasks, one JSON object a line
TASKS_FILE = "tasks.jsonl"


M = TypeVar("M", bound=BaseModel)

#: A field a task line must give.
_REQUIRED: Any = object()
#: A task line's fields, in the task format's order, and their defaults (`scoring.tasks.Task`).
LINE_FIELDS: dict[str, Any] = {
    "id": _REQUIRED,
    "instruction": _REQUIRED,
    "calls": [],
    "answer_facts": [],
    "answers": None,
    "ignore_columns": [],
    "difficulty": None,
    "tags": [],
    "notes": [],
    "seed": 0,
}
#: A call's fields, in order, and their defaults (`scoring.tasks.Call`).
CALL_FIELDS: dict[str, Any] = {"name": _REQUIRED, "arguments": {}, "expect_error": False, "free": []}
#: the fields whose values the format coerces (a seed of `3.0` is 3), and how
_COERCED: dict[str, TypeAdapter[Any]] = {"seed": TypeAdapter(int), "expect_error": TypeAdapter(bool)}


class TaskHead(SpecModel):
    """The part of a task line the runtime reads (the rest is the grading side's to check)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str
    instruction: str
    seed: int = 0


def _coerced(name: str, value: Any) -> Any:
    adapter = _COERCED.get(name)
    if adapter is None:
        return value
    try:
        return adapter.validate_python(value)
    except ValidationError:
        return value  # not a valid line: the grading side's check reports it


def _fields(raw: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, default in fields.items():
        if name not in raw:
            continue
        value = _coerced(name, raw[name])
        if name == "calls" and isinstance(value, list):
            value = [_fields(c, CALL_FIELDS) if isinstance(c, dict) else c for c in value]
        if default is _REQUIRED or value != default:
            out[name] = value
    return out


def canonical_text(raw: dict[str, Any]) -> str:
    """A valid task line's canonical text: what the fingerprint hashes of it."""
    return pydantic_core.to_json(_fields(raw, LINE_FIELDS)).decode()


def task_lines(folder: Path, model: type[M], problems: list[Problem]) -> Iterator[tuple[int, Any, M]]:
    """(line number, JSON value, `model` of it) of each line of tasks.jsonl that is JSON, a valid
    `model` and a task id not seen before; each other non-blank line is a problem."""
    path = folder / TASKS_FILE
    if not path.is_file():
        return
    ids: dict[str, int] = {}
    for lineno, text in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not text.strip():
            continue
        where = f"line {lineno}"
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(Problem(TASKS_FILE, where, f"not valid JSON: {exc.msg}"))
            continue
        task = _validate(model, raw, TASKS_FILE, where, problems)
        if task is None:
            continue
        task_id = raw["id"]  # (a valid line's id is a string, whichever model read it)
        if task_id in ids:
            message = f"duplicate task id {task_id!r} (first on line {ids[task_id]})"
            problems.append(Problem(TASKS_FILE, where, message))
            continue
        ids[task_id] = lineno
        yield lineno, raw, task


def read_task_lines(folder: Path, problems: list[Problem]) -> tuple[list[TaskView], list[str]]:
    """tasks.jsonl's tasks as views, and their canonical texts; a line that is not JSON, gives no
    id, instruction or seed of the right type, or repeats an id is a problem."""
    views: list[TaskView] = []
    texts: list[str] = []
    for _, raw, head in task_lines(folder, TaskHead, problems):
        views.append(TaskView(head.id, head.instruction, head.seed))
        texts.append(canonical_text(raw))
    return views, texts
