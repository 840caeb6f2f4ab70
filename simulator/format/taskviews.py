"""What the runtime knows of a task: its id, its instruction and the seed its episode starts at.

A domain loaded by `simulator.load_domain` holds `TaskView`s; the gold calls, answer facts and
columns to ignore are the grading side's (`scoring.tasks.Task`, read from the same tasks.jsonl).
`TaskLike` is what the runtime asks of a task, so that a graded domain's full tasks serve too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["TaskLike", "TaskView"]


@runtime_checkable
class TaskLike(Protocol):
    """A task as the runtime reads it: an id, an instruction, a seed."""

    @property
    def id(self) -> str: ...

    @property
    def instruction(self) -> str: ...

    @property
    def seed(self) -> int: ...


@dataclass(frozen=True)
class TaskView:
    """What the server knows of a task: what the agent may read, and the seed its episode starts at."""

    id: str
    instruction: str
    seed: int = 0

    @classmethod
    def of(cls, task: TaskLike) -> TaskView:
        return cls(task.id, task.instruction, task.seed)
