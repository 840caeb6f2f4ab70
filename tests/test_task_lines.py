"""The runtime reads task views; the grading side reads whole tasks; the fingerprint agrees.

`simulator.load_domain` keeps of each tasks.jsonl line a `TaskView` and the line's canonical text,
which must be the text the grading side's model gives (`Task.model_dump_json(exclude_defaults=True)`,
what the fingerprint hashed when the runtime held whole tasks): else every manifest's fingerprint
would change. `scoring.load_domain` gives a `GradedDomain` of the same domain.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scoring import GradedDomain, Task, check_domain
from scoring import load_domain as load_graded
from scoring.tasks import graded
from simulator import Domain, TaskError, load_domain
from simulator.errors import SpecError
from simulator.format._loadtasks import CALL_FIELDS, LINE_FIELDS, canonical_text
from simulator.format.loader import check_domain as check_runtime
from simulator.format.taskviews import TaskView
from simulator.serve.serving import serving_domain

from .conftest import ROOT

BUNDLED = ("bank", "logistics", "office", "tau2-retail")

EDGE_LINES: list[dict[str, Any]] = [
    {"id": "a", "instruction": "x"},
    {"id": "a", "instruction": "x", "seed": 0, "calls": [], "answers": None, "tags": [], "difficulty": None},
    {"id": "a", "instruction": "x", "seed": 3.0, "notes": ["é ünïcode ☃"], "answers": "any"},
    {
        "id": "a",
        "instruction": "x",
        "seed": "7",
        "answer_facts": [1e16, 0.1, -0.0, 12, "t", None, {"b": 1, "a": [2]}],
    },
    {
        "seed": True,
        "instruction": "fields out of order",
        "id": "a",
        "calls": [
            {"arguments": {"z": 1, "a": {"y": [1, 2.5]}}, "name": "c"},
            {"name": "c", "expect_error": "true", "free": []},
            {"name": "c", "expect_error": 1, "free": ["memo"], "arguments": {}},
            {"name": "c", "expect_error": False, "arguments": {"s": "$$lit", "r": "$calls.0.id"}},
        ],
        "ignore_columns": ["t.c"],
    },
]


def test_the_field_tables_are_the_task_models_fields() -> None:
    from scoring.tasks import Call

    assert list(LINE_FIELDS) == list(Task.model_fields)
    assert list(CALL_FIELDS) == list(Call.model_fields)
    for name, info in Task.model_fields.items():
        if not info.is_required():
            assert info.get_default(call_default_factory=True) == LINE_FIELDS[name], name


@pytest.mark.parametrize("raw", EDGE_LINES)
def test_a_lines_canonical_text_is_the_task_models(raw: dict[str, Any]) -> None:
    assert canonical_text(raw) == Task.model_validate(raw).model_dump_json(exclude_defaults=True)


@pytest.mark.parametrize("name", BUNDLED)
def test_every_bundled_task_line_has_the_models_text(name: str) -> None:
    domain = load_graded(name)
    assert domain.path is not None
    lines = [json.loads(t) for t in (domain.path / "tasks.jsonl").read_text().split("\n") if t.strip()]
    assert [canonical_text(raw) for raw in lines] == [
        t.model_dump_json(exclude_defaults=True) for t in domain.tasks
    ]


@pytest.mark.parametrize("name", BUNDLED)
def test_the_runtime_domain_holds_views_and_the_same_fingerprint(name: str) -> None:
    runtime, full = load_domain(name), load_graded(name)
    assert type(runtime) is Domain and isinstance(full, GradedDomain)
    assert all(type(t) is TaskView for t in runtime.tasks)
    assert [TaskView.of(t) for t in full.tasks] == list(runtime.tasks)
    assert runtime.fingerprint() == full.fingerprint()
    assert type(serving_domain(full)) is Domain and serving_domain(full)._task_texts == ()


def test_graded_reads_a_runtime_domains_gold_from_its_folder_once() -> None:
    runtime = load_domain("bank")
    full = graded(runtime)
    assert isinstance(full, GradedDomain) and full.task("bank-001").calls
    assert graded(runtime) is full and graded(full) is full
    assert full.fingerprint() == runtime.fingerprint()


def test_graded_refuses_a_domain_whose_tasks_file_changed(tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "bank"
    shutil.copytree(ROOT / "domains" / "bank", folder)
    runtime = load_domain(folder)
    (folder / "tasks.jsonl").write_text("")
    with pytest.raises(TaskError, match="has changed since"):
        graded(runtime)


def test_a_gold_mistake_is_the_grading_sides_problem(tmp_path: Path) -> None:
    """A task naming an unknown tool loads for the runtime (it serves no gold) and is refused by
    the grading side's load and check, with the problem the loader always gave."""
    import shutil

    folder = tmp_path / "bank"
    shutil.copytree(ROOT / "domains" / "bank", folder)
    lines = (folder / "tasks.jsonl").read_text().splitlines()
    raw = json.loads(lines[0])
    raw["calls"] = [{"name": "no_such_tool"}]
    (folder / "tasks.jsonl").write_text("\n".join([json.dumps(raw), *lines[1:]]) + "\n")
    assert check_runtime(folder).errors == []
    report = check_domain(folder)
    assert report.domain is None
    assert [str(p) for p in report.errors] == [
        f"tasks.jsonl:line 1 (task {raw['id']}).calls[0]: unknown tool 'no_such_tool'"
    ]
    with pytest.raises(SpecError, match="unknown tool 'no_such_tool'"):
        load_graded(folder)
