"""Task validation: a task is a candidate until it passes every check.

The checks of one task, in order (`broken-gold`, `flaky`, `network`, `no-op-passes`,
`unreachable-answer`, `weak-verifier`, `weak-answer`, `order-sensitive`, `unreachable-fact`):
the first failure names the status. `fuzz_unit` fuzzes one tool. `scoring.validation.domains`
runs both over every task and tool of many domains, in worker processes or on Ray.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

from simulator import Domain, Episode, TaskError
from simulator.errors import CallFailed

from ..calls import call_references, resolve_arguments
from ..expected import expected_state
from ..facts import RuledOut, fact_text
from ..rollout import Rollout, RolloutCall
from ..score import score_rollout
from ..tasks import Task, load_domain, task_of
from .fuzz import ToolFuzz, fuzz_tool, pools
from .gold import GoldOutcome, replay_gold
from .mutate import key_values, mutations
from .orders import Footprint, ReadTrace, alternative_orders
from .reach import identifiers, unreachable, unreachable_answers
from .sandbox import NetworkBlocked, no_network

#: A task's verdict: valid, or the first check (in this order: most serious first) it fails.
Status = Literal[
    "valid",
    "broken-gold",
    "flaky",
    "network",
    "no-op-passes",
    "unreachable-answer",
    "weak-verifier",
    "weak-answer",
    "order-sensitive",
    "unreachable-fact",
]
ORDER: list[Status] = [s for s in get_args(Status) if s != "valid"]


class Finding(BaseModel):
    """One failed check and why."""

    check: Status
    message: str


class TaskValidation(BaseModel):
    """One task's verdict."""

    task: str
    status: Status
    findings: list[Finding] = Field(default_factory=list)
    digest: str | None = Field(default=None, description="final state digest of the gold replay")
    rerun_digests: list[str] = Field(default_factory=list)
    mutations_tried: int = 0
    orders_tried: int = 0
    seconds: float = 0.0

    @property
    def valid(self) -> bool:
        return self.status == "valid"


# -- the checks of one task (run inside a worker) -----------------------------------------------


@lru_cache(maxsize=8)
def _domain(path: str) -> Domain:
    return load_domain(Path(path))


#: what the checks of every task of a domain share: its seed's identifiers, and key -> its table's keys
DomainIds = tuple[frozenset[str], dict[Any, list[Any]]]


def domain_ids(domain: Domain) -> DomainIds:
    """The seed's identifiers and keys the checks use: worked out once per domain, not per task."""
    return frozenset(identifiers(domain)), key_values(domain)


@lru_cache(maxsize=8)
def _ids(path: str) -> DomainIds:
    return domain_ids(_domain(path))


def fuzz_unit(path: str, tool: str, calls: int) -> ToolFuzz:
    """Fuzz one tool of a domain (in this process, network blocked)."""
    domain = _domain(path)
    with no_network():
        return fuzz_tool(domain, tool, calls, _pools(path))


@lru_cache(maxsize=8)
def _pools(path: str) -> dict[str, list[Any]]:
    return pools(_domain(path))


def gold_message(task: Task) -> str:
    """A final message that states every answer fact (what a correct agent would say)."""
    return " ; ".join(fact_text(f) for f in task.answer_facts)


def _rollout(task: Task, calls: list[tuple[str, dict[str, Any]]], message: str | None, seed: int) -> Rollout:
    return Rollout(
        format="toolgym",
        task=task.id,
        seed=seed,
        calls=[RolloutCall(name=n, arguments=a) for n, a in calls],
        final_message=message,
    )


def _traced_gold(domain: Domain, task: Task, seed: int) -> tuple[Episode, list[GoldOutcome], list[Footprint]]:
    """Replay the gold calls, recording what each read and wrote. The episode is returned open: it
    holds the expected state (the caller closes it)."""
    reads = ReadTrace()
    ep = domain.episode(seed=seed, observer=reads)
    prints: list[Footprint] = []
    written = ep.changes()

    def trace(i: int, outcome: GoldOutcome) -> None:
        nonlocal written
        now = ep.changes()
        refs = {r.index for r in call_references(task.calls[i].arguments) if r.index is not None}
        prints.append(Footprint(reads=reads.take(), writes=now - written, refs=refs))
        written = now

    try:
        outcomes = replay_gold(ep, task, after=trace)
    except TaskError:
        ep.close()
        raise
    except Exception as exc:  # an engine error escaped a gold call: the task is broken, with the message
        ep.close()
        i = len(prints)
        name = task.calls[i].name if i < len(task.calls) else "?"
        raise TaskError(
            f"task {task.id}: gold call {i} ({name}) hit an engine error: {error_text(exc)}"
        ) from exc
    except BaseException:
        ep.close()
        raise
    reads.stop()
    return ep, outcomes, prints


def error_text(exc: BaseException, limit: int = 300) -> str:
    """`Type: message`, cut to `limit` characters (an error may echo a huge value)."""
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _rerun_in_order(
    domain: Domain, task: Task, order: list[int], seed: int
) -> list[tuple[str, dict[str, Any]]]:
    """The gold calls in another order, references resolved against this order's results."""
    with domain.episode(seed=seed) as ep:
        results: dict[int, Any] = {}
        calls = []
        for k in order:
            call = task.calls[k]
            args = resolve_arguments(
                call.arguments, [results.get(i) for i in range(len(task.calls))], task.id, len(task.calls)
            )
            calls.append((call.name, args))
            try:
                results[k] = ep.call(call.name, args)
            except CallFailed:  # a call failing in another order is what the scorer judges
                results[k] = None
        return calls


def check_task(path: str, task_id: str, deep: bool = True) -> TaskValidation:
    """Run the checks of one task (in this process). `deep=False`: only the gold replay and digest.

    Never raises for what a task does: whatever escapes its checks (an engine error in a gold call,
    or in a call a check derives from it) makes the task `broken-gold`, with the message."""
    started = time.perf_counter()
    try:
        domain = _domain(path)
        return _check_task(domain, task_of(domain, task_id), deep, started, lambda: _ids(path))
    except Exception as exc:
        message = f"checking task {task_id} raised {error_text(exc)}"
        return _verdict(task_id, [Finding(check="broken-gold", message=message)], None, started)


@dataclass
class CheckCounter:
    """What `check_loaded_task` did in this process: tasks checked, how many valid, seconds and CPU
    seconds spent (the generator reads the difference around a domain's task stage for its profile)."""

    tasks: int = 0
    valid: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0


#: this process's counter
CHECKED = CheckCounter()


def check_loaded_task(
    domain: Domain, task: Task, deep: bool = True, ids: DomainIds | None = None
) -> TaskValidation:
    """`check_task` on a domain already loaded and a task that need not be in its tasks.jsonl (the
    generator's candidates): the same checks and verdicts, without loading the folder again. `ids`
    (`domain_ids(domain)`), given once for many tasks of a domain, is not worked out again."""
    started, cpu = time.perf_counter(), time.process_time()
    try:
        verdict = _check_task(domain, task, deep, started, lambda: ids or domain_ids(domain))
    except Exception as exc:
        message = f"checking task {task.id} raised {error_text(exc)}"
        verdict = _verdict(task.id, [Finding(check="broken-gold", message=message)], None, started)
    CHECKED.tasks += 1
    CHECKED.valid += verdict.valid
    CHECKED.seconds += time.perf_counter() - started
    CHECKED.cpu_seconds += time.process_time() - cpu
    return verdict


def _check_task(
    domain: Domain, task: Task, deep: bool, started: float, ids: Callable[[], DomainIds]
) -> TaskValidation:
    task_id = task.id
    findings: list[Finding] = []
    with no_network() as attempts:
        try:
            expected, outcomes, prints = _traced_gold(domain, task, task.seed)
        except TaskError as exc:
            cause = exc.__cause__
            if isinstance(cause, NetworkBlocked) or attempts:
                findings.append(
                    Finding(
                        check="network", message=f"network access attempted: {'; '.join(attempts) or cause}"
                    )
                )
            else:
                findings.append(Finding(check="broken-gold", message=str(exc)))
            return _verdict(task_id, findings, None, started)  # the rest needs a gold run
        tried = {"mutations": 0, "orders": 0}
        try:
            digest = expected.digest()
            if deep:
                findings += _deep_checks(ids, domain, task, expected, outcomes, prints, tried)
        finally:
            expected.close()
        if attempts:
            findings.append(
                Finding(check="network", message=f"network access attempted: {'; '.join(attempts)}")
            )
    return _verdict(task_id, findings, digest, started, tried)


def _deep_checks(
    domain_ids: Callable[[], DomainIds],
    domain: Domain,
    task: Task,
    expected: Episode,
    outcomes: list[GoldOutcome],
    prints: list[Footprint],
    tried: dict[str, int],
) -> list[Finding]:
    findings: list[Finding] = []
    seed = task.seed
    try:  # seed independence: the gold calls must work under another seed's generated ids
        with domain.episode(seed=seed + 1) as other:
            replay_gold(other, task)
    except TaskError as exc:
        findings.append(
            Finding(
                check="flaky",
                message=f"the gold calls only work under seed {seed}: with seed {seed + 1}, {exc}",
            )
        )
    gold_calls = [(o.name, o.arguments) for o in outcomes]
    message = gold_message(task)

    state = expected_state(domain, task, seed, replayed=expected)  # shared with scoring

    def reward(calls: list[tuple[str, dict[str, Any]]], final: str | None) -> float | None:
        return score_rollout(domain, _rollout(task, calls, final, seed), task, seed, expected=state).reward

    full = reward(gold_calls, message)
    if full != 1.0:
        findings.append(Finding(check="broken-gold", message=f"the gold solution itself scores {full}"))
        return findings
    if reward([], "") == 1.0:
        findings.append(
            Finding(
                check="no-op-passes",
                message="doing nothing scores 1.0: the state cannot tell, and no answer fact is required",
            )
        )
    findings += [
        Finding(check="unreachable-answer", message=m)
        for m in unreachable_answers(domain, task, outcomes, expected)
    ]
    findings += _shotgun_plant(task, state.ruled, lambda text: reward(gold_calls, text), message)
    ids, keys = domain_ids()
    for i, (call, outcome) in enumerate(zip(task.calls, outcomes, strict=True)):
        if not domain.tools[call.name].writes or call.expect_error:
            continue
        dropped = [c for k, c in enumerate(gold_calls) if k != i]
        if reward(dropped, message) == 1.0:
            findings.append(
                Finding(
                    check="weak-verifier",
                    message=f"leaving out gold call {i} ({call.name}) still scores 1.0",
                )
            )
        for m in mutations(domain, call.name, outcome.arguments, call.free, keys):
            tried["mutations"] += 1
            corrupted = [*gold_calls[:i], (call.name, m.arguments), *gold_calls[i + 1 :]]
            if reward(corrupted, message) == 1.0:
                findings.append(
                    Finding(
                        check="weak-verifier",
                        message=f"gold call {i} ({call.name}) with {m.describe()} still scores 1.0",
                    )
                )
    for order in alternative_orders(prints):
        tried["orders"] += 1
        got = reward(_rerun_in_order(domain, task, order, seed), message)
        if got != 1.0:
            findings.append(
                Finding(
                    check="order-sensitive",
                    message=f"the gold calls in the order {order} (independent calls swapped) score {got}",
                )
            )
    findings += [
        Finding(check="unreachable-fact", message=m) for m in unreachable(domain, task, outcomes, set(ids))
    ]
    return findings


def _shotgun_plant(
    task: Task, ruled: RuledOut | None, reward: Callable[[str], float | None], message: str
) -> list[Finding]:
    """Plant a shotgun answer (the facts plus every value their columns hold): it must fail.
    `ruled`: what the task rules out (its expected state's)."""
    if not task.answer_facts or ruled is None:
        return []
    if not ruled.values:  # no column holds a fact: there are no candidates to list
        return []
    plant = message + " ; " + " ; ".join(fact_text(v) for v in ruled.values)
    if reward(plant) != 1.0:
        return []
    return [
        Finding(
            check="weak-answer",
            message=f"an answer listing, besides the facts, every other value of {', '.join(ruled.columns)} "
            f"({len(ruled.values)} value(s)) still scores 1.0: too few candidates to rule out a guess",
        )
    ]


def status_of(findings: list[Finding]) -> Status:
    for check in ORDER:
        if any(f.check == check for f in findings):
            return check
    return "valid"


def _verdict(
    task_id: str,
    findings: list[Finding],
    digest: str | None,
    started: float,
    tried: dict[str, int] | None = None,
) -> TaskValidation:
    tried = tried or {"mutations": 0, "orders": 0}
    return TaskValidation(
        task=task_id,
        status=status_of(findings),
        findings=findings,
        digest=digest,
        mutations_tried=tried["mutations"],
        orders_tried=tried["orders"],
        seconds=round(time.perf_counter() - started, 4),
    )
