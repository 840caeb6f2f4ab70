"""Gold solutions as OpenAI chat transcripts for supervised warm-up (`toolgym export-sft`).

Each task's gold calls are resolved (`$calls.N` references, by `scoring.validation.gold`) and
replayed step by step on an `Environment` episode, so every tool message holds the tool's real
result; the answer goes through `submit_answer` (or a final assistant message where the domain has
no answer channel). A transcript is kept only when the environment scores it 1.0, which is the
reward `toolgym score` gives the written transcript.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from scoring.tasks import Task
from scoring.validation.gold import replay_gold
from simulator import Domain
from simulator.errors import TaskError

from .environment import Environment

#: what a gold solution says when its task asks for no values
DONE = "Done: your request has been carried out."


@dataclass(frozen=True)
class Exported:
    """One task's export: the transcript, or why there is none."""

    task: str
    transcript: dict[str, Any] | None = None
    reason: str | None = None


def gold_answer(task: Task) -> str:
    """The final answer of a gold solution: the task's answer facts, in order."""
    return "; ".join(str(fact) for fact in task.answer_facts) if task.answer_facts else DONE


def export_domain(domain: Domain, task_ids: Iterable[str] | None = None) -> Iterator[Exported]:
    """The gold-solution transcript of each task (default: all of the domain's), in task order."""
    with Environment(domain, tasks=task_ids) as env:
        for task in env.tasks:
            yield export_task(env, task)


def export_task(env: Environment, task: Task) -> Exported:
    try:
        with env.domain.episode(seed=task.seed) as scratch:
            calls = [(o.name, o.arguments) for o in replay_gold(scratch, task)]
    except TaskError as exc:
        return Exported(task.id, reason=f"broken gold: {exc}")
    obs = env.reset(task.id)
    for name, arguments in calls:
        env.step(name, arguments)
    if env.answer_tool:
        env.answer(gold_answer(task))
    else:
        env.say(gold_answer(task))
    report = env.score()
    if report.reward != 1.0:
        return Exported(
            task.id, reason=f"the gold solution scores {report.reward}: {' '.join(report.explanation)}"
        )
    return Exported(task.id, transcript={**env.transcript(), "tools": obs.tools["openai"]})
