"""Scoring a rollout: replay it, replay the gold calls, diff the states, check the answer facts.

Gives a reward, partial credit and a status (`scored`, `incomplete` or `failed-infra`). The
calls are replayed as they are read, and what is kept of them is bounded.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import heapq
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from simulator import Domain, Episode, TaskError
from simulator.errors import ErrorKind, ToolgymError
from simulator.serve import labels as server_labels

from .diff import diff_states
from .errors import TranscriptError
from .expected import ExpectedState, expected_state
from .explain import CALLS, MISSING, Scored, call_sentence, explain, json_differences
from .facts import NAMED, find_facts, shotgun, shotgun_sentence
from .replay import Calls, Replayed, RolloutCalls, Stepper
from .report import Divergence, FactResult, ScoreReport, StateDiff, show
from .rollout import TRANSIENT_FAULTS, Format, Rollout, RolloutCall, unknown_tool
from .stream import open_transcript
from .tasks import Task, load_domain, task_of
from .trust import bind_faults, domain_warnings, label_warnings

#: How many divergences a report lists (the first, by call).
DIVERGENCES = 100


def check_domain(domain: Domain, rollout: Rollout) -> None:
    """Refuse a transcript recorded on another domain (TranscriptError naming both domains)."""
    if rollout.domain is not None and not names_domain(rollout.domain, domain, rollout.fingerprint):
        recorded = rollout.domain[:80]
        raise TranscriptError(
            f"{rollout.source or 'the transcript'} is for domain {recorded!r}, not {domain.name!r} "
            f"(recorded on {recorded!r}; leave out --domain to score it there)"
        )


def resolve_task(domain: Domain, rollout: Rollout, task: Task | str | None) -> Task:
    """The task to score on: the given one, else the transcript's (after `check_domain`)."""
    check_domain(domain, rollout)
    if isinstance(task, Task):
        return task
    name = task or rollout.task
    if name is None:
        raise TaskError(f"{rollout.source or 'the transcript'} names no task: pass one (--task)")
    return task_of(domain, name)


def resolve_seed(rollout: Rollout, task: Task, seed: int | None = None) -> int:
    """The seed to replay with: the given one, else the transcript's, else the task's."""
    if seed is not None:
        return seed
    return rollout.seed if rollout.seed is not None else task.seed


def names_domain(named: str, domain: Domain, fingerprint: str | None = None) -> bool:
    """Whether a transcript's domain reference names this domain.

    The same fingerprint, the same name (`name` or `name@version`), or a folder path: the domain's
    own folder, a folder whose `domain.yaml` names it, or a folder of its name elsewhere.
    """
    if fingerprint is not None and fingerprint == domain.fingerprint():
        return True
    if named.rpartition("@")[0] == domain.name or named == domain.name:
        return True
    path = Path(named)
    try:
        if domain.path is not None and path.resolve() == Path(domain.path).resolve():
            return True
        spec = path / "domain.yaml"
        if spec.is_file() and spec.stat().st_size < 2**24:
            loaded = yaml.safe_load(spec.read_text(encoding="utf-8"))
            return isinstance(loaded, dict) and loaded.get("name") == domain.name
    except (OSError, ValueError, yaml.YAMLError):
        return False
    return ("/" in named or "\\" in named) and path.name == domain.name


def _warnings(domain: Domain, rollout: Rollout) -> list[str]:
    warnings = domain_warnings(domain, rollout)
    if not warnings and rollout.version is not None and rollout.version != domain.version:
        warnings.append(
            f"the transcript was recorded on {rollout.domain}@{rollout.version}; scoring on {domain.ref}"
        )
    return warnings + label_warnings(rollout)


def answers_mode(domain: Domain, task: Task) -> str:
    """Where the task's answer facts may appear: the task's `answers`, else the domain's."""
    return task.answers or domain.spec.answers


@dataclass
class _Run:
    """One replay of the rollout, diffed and checked."""

    reward: float
    partial: float
    diff: StateDiff
    facts: list[FactResult]
    earlier: set[int]
    shotgun: list[Any]


def _facts(rollout: Rollout, gold: Task, answers: str) -> tuple[list[bool], set[int]]:
    """Which facts were found, and which missing ones an earlier assistant message stated."""
    found = find_facts(rollout.final_message, gold.answer_facts)
    stated = [False] * len(gold.answer_facts)
    for message in rollout.messages:
        stated = [a or b for a, b in zip(stated, find_facts(message, gold.answer_facts), strict=True)]
    if answers == "any":
        return [a or b for a, b in zip(found, stated, strict=True)], set()
    return found, {i for i, (f, s) in enumerate(zip(found, stated, strict=True)) if s and not f}


def _replay(
    domain: Domain,
    calls: Calls,
    seed: int,
    views: dict[int, RolloutCall],
    carry_faults: bool,
    tally: _Tally | None = None,
) -> Episode:
    """The calls replayed on a fresh episode as they are read (`tally`: each checked once final)."""
    actual = domain.episode(seed=seed)
    try:
        if tally is None:
            stepper = Stepper(actual, lambda i, r: None, views, carry_faults)
            calls.play(stepper.call, lambda i, c: None)
        else:
            stepper = Stepper(actual, tally.done, views, carry_faults)
            calls.play(stepper.call, tally.final)
        stepper.finish()
        if tally is not None:
            tally.check()
    except BaseException:
        actual.close()
        raise
    return actual


def _judge(
    rollout: Rollout, gold: Task, expected: Episode | ExpectedState, answers: str, actual: Episode
) -> _Run:
    """The replayed state diffed against the expected one, and the answer facts checked."""
    diff = diff_states(expected, actual, gold.ignore_columns)
    found, earlier = _facts(rollout, gold, answers)
    facts = [FactResult(fact=f, found=ok) for f, ok in zip(gold.answer_facts, found, strict=True)]
    graded = [rollout.final_message, *(rollout.messages if answers == "any" else [])]
    ruled = expected.ruled if isinstance(expected, ExpectedState) else expected
    stated_out = shotgun(ruled, gold, graded) if all(found) and ruled is not None else []  # fails the check
    reward = 1.0 if diff.empty and all(found) and not stated_out and not rollout.truncated else 0.0
    units = diff.expected_changes + len(facts)
    made = diff.credit + (0 if stated_out else sum(found)) - len(diff.unexpected)
    partial = min(1.0, max(0.0, made / units)) if units else float(not diff.unexpected)
    return _Run(reward, round(partial, 6), diff, facts, earlier, stated_out)


def _normal(value: Any) -> Any:
    """A value as JSON would carry it (tuples as lists, other types as strings)."""
    try:
        return json.loads(json.dumps(value, default=str))
    except (ValueError, RecursionError):
        return str(value)


def _recorded(call: RolloutCall) -> tuple[bool, Any]:
    """(comparable, value) of a call's recorded result: chat text is parsed as JSON where possible."""
    if not isinstance(call.result, str) or call.result == "":
        return True, _normal(call.result)
    try:
        return True, json.loads(call.result)
    except (ValueError, RecursionError):
        return True, call.result.strip()


def divergence(i: int, call: RolloutCall, result: Replayed) -> Divergence | None:
    """How call `i`'s replayed outcome or result differs from the one the transcript recorded, if it does."""
    if result.skipped or call.outcome == "unknown":
        return None
    base: dict[str, Any] = {"call": i, "tool": call.name, "where": call.where}
    if call.outcome == "ok" and not result.ok:
        return Divergence(
            **base,
            recorded="ok",
            replayed=result.error,
            detail="succeeded in the transcript but failed on replay",
        )
    if call.failed and result.ok:
        return Divergence(
            **base,
            recorded=call.error,
            replayed="ok",
            detail="failed in the transcript but succeeded on replay",
        )
    if call.outcome != "ok" or not call.has_result:
        return None
    comparable, recorded = _recorded(call)
    replayed = _normal(result.result)
    if isinstance(recorded, str) and not isinstance(replayed, str):
        comparable = False  # free text of a client log: nothing to compare it with
    first = next(json_differences(replayed, recorded, ""), None) if comparable else None
    if first is None:
        return None
    path, exp, act = first
    return Divergence(
        **base,
        path=path or "(the whole result)",
        recorded=None if act is MISSING else act,
        replayed=None if exp is MISSING else exp,
        detail=f"the recorded result differs at {path or 'the top'}: "
        f"{'nothing' if act is MISSING else show(act)} recorded, "
        f"{'nothing' if exp is MISSING else show(exp)} on replay",
    )


def divergences(rollout: Rollout, done: list[Replayed]) -> list[Divergence]:
    """Every call whose replayed outcome or result differs from the one the transcript recorded."""
    found = (divergence(i, c, r) for i, (c, r) in enumerate(zip(rollout.calls, done, strict=True)))
    return [d for d in found if d is not None]


def failed_sentence(i: int, call: RolloutCall, result: Replayed) -> str | None:
    """The sentence of call `i` if it is a failed call of the agent's (faults are named apart)."""
    if call.malformed:
        return call_sentence(i, call.name, call.malformed, "was malformed and not run")
    if call.voided:
        return call_sentence(i, call.name, call.error, "did not happen")
    if call.outcome != "fault" and not result.ok:
        return call_sentence(i, call.name, result.error)
    return None


class _First:
    """The first `n` items by call index of those added in any order, and how many were added."""

    def __init__(self, n: int):
        self.n, self.count = n, 0
        self.heap: list[tuple[int, Any]] = []

    def add(self, index: int, item: Any) -> None:
        self.count += 1
        heapq.heappush(self.heap, (-index, item))
        if len(self.heap) > self.n:
            heapq.heappop(self.heap)

    def items(self) -> list[Any]:
        return [item for _, item in sorted(self.heap, key=lambda pair: -pair[0])]


class _Tally:
    """What scoring keeps of the replayed calls: failed calls counted, the first divergences and
    failed-call sentences, and the first call that succeeded with a tool the domain does not have.
    A replayed outcome waits here only until its call is final."""

    def __init__(self, domain: Domain, source: str | None, views: dict[int, RolloutCall]):
        self.known, self.ref, self.source, self.views = set(domain.tools), domain.ref, source, views
        self.waiting: dict[int, Replayed] = {}
        self.failed = 0
        self.divergences = _First(DIVERGENCES)
        self.sentences = _First(CALLS)
        self.unknown: tuple[int, RolloutCall] | None = None

    def done(self, index: int, result: Replayed) -> None:
        self.waiting[index] = result
        self.failed += not result.ok

    def final(self, index: int, call: RolloutCall) -> None:
        call = self.views.get(index, call)
        self.see(index, call)
        result = self.waiting.pop(index)
        found = divergence(index, call, result)
        if found is not None:
            self.divergences.add(index, found)
        sentence = failed_sentence(index, call, result)
        if sentence is not None:
            self.sentences.add(index, sentence)

    def see(self, index: int, call: RolloutCall) -> None:
        """Note the call if it is the first so far that succeeded with an unknown tool."""
        call = self.views.get(index, call)
        if (
            call.name not in self.known
            and not call.failed
            and (self.unknown is None or index < self.unknown[0])
        ):
            self.unknown = (index, call)

    def check(self) -> None:
        """Raise TranscriptError for the first call that succeeded with a tool the domain does not have."""
        if self.unknown is not None:
            raise unknown_tool(self.source, *self.unknown, self.ref)


def check_tools(domain: Domain, rollout: Rollout, calls: Calls, views: dict[int, RolloutCall]) -> None:
    """`Rollout.check_tools` over calls as they are read, without replaying them."""
    tally = _Tally(domain, rollout.source, views)
    calls.play(lambda i, c: None, tally.see)
    tally.check()


def _fault_clauses(faults: list[tuple[int, RolloutCall]]) -> list[str]:
    return [
        f"call {i} ({c.name}) hit {'an' if c.fault is ErrorKind.INJECTED else 'a'} {c.fault} fault"
        for i, c in faults
    ]


def _not_scored(status: str, said: list[str], base: dict[str, Any]) -> ScoreReport:
    return ScoreReport(status=status, reward=None, partial=None, explanation=said, **base)  # type: ignore[arg-type]


def score_rollout(
    domain: Domain,
    rollout: Rollout,
    task: Task | str | None = None,
    seed: int | None = None,
    expected: Episode | ExpectedState | None = None,
) -> ScoreReport:
    """Score a rollout on a task (default: the one its transcript names).

    The seed defaults to the transcript's, then the task's. `expected` may pass a gold episode
    already replayed with that seed; by default the expected state comes from the process's cache
    (`scoring.expected.expected_state`: the gold calls are replayed once per task content, seed and
    domain fingerprint). Raises TaskError for an unknown or broken task and TranscriptError for a
    transcript that does not fit the domain.
    """
    return score_calls(domain, rollout, RolloutCalls(rollout), task, seed, expected)


def score_calls(
    domain: Domain,
    rollout: Rollout,
    calls: Calls,
    task: Task | str | None = None,
    seed: int | None = None,
    expected: Episode | ExpectedState | None = None,
) -> ScoreReport:
    """`score_rollout` of a rollout whose calls are `calls` (its own `calls` are not read): played
    once to replay and check them as they are read, again for the counterfactual replay."""
    gold = resolve_task(domain, rollout, task)
    # a fault labelled for another task is the agent's
    rollout, views = bind_faults(rollout, calls.faults, gold.id)
    faults = [(i, c) for i, c in sorted(views.items()) if c.outcome == "fault"]
    warnings = _warnings(domain, rollout)
    seed = resolve_seed(rollout, gold, seed)
    answers = answers_mode(domain, gold)
    base: dict[str, Any] = {
        "domain": domain.ref,
        "fingerprint": domain.fingerprint(),
        "task": gold.id,
        "seed": seed,
        "transcript": rollout.source,
        "format": rollout.format,
        "calls": calls.count,
        "warnings": warnings,
        "truncated": rollout.truncated,
        "answers": answers,
    }
    if not rollout.complete:
        check_tools(domain, rollout, calls, views)
        return _not_scored(
            "incomplete",
            [
                "Not scored: the server wrote this transcript (its header is signed) but no signed end record "
                "closes it, so the rollout may be cut short (the server was stopped or killed).",
                "An incomplete rollout is kept out of rewards (status incomplete), never scored 0.",
            ],
            base,
        )
    hard = [(i, c) for i, c in faults if c.fault not in TRANSIENT_FAULTS]
    if hard:
        check_tools(domain, rollout, calls, views)
        said = [
            f"Not scored: {call_sentence(i, c.name, c.error, f'failed with a {c.fault} fault')}."
            for i, c in hard
        ]
        said.append(
            "A rollout with an infrastructure fault is kept out of rewards (status failed-infra), never scored 0."
        )
        return _not_scored("failed-infra", said, base)

    tally = _Tally(domain, rollout.source, views)
    actual = _replay(domain, calls, seed, views, False, tally)
    try:
        gold_state = expected if expected is not None else expected_state(domain, gold, seed)
        run = _judge(rollout, gold, gold_state, answers, actual)
        if rollout.digest is not None and rollout.digest != actual.digest():
            warnings.append(
                "the replayed final state differs from the one the transcript recorded (its digest)"
            )
    finally:
        actual.close()
    counterfactual = None
    if faults and run.reward != 1.0 and not rollout.truncated:
        episode = _replay(domain, calls, seed, views, True)
        try:
            counterfactual = _judge(rollout, gold, gold_state, answers, episode).reward
        finally:
            episode.close()
    clauses = _fault_clauses(faults)
    if counterfactual == 1.0:
        return _not_scored(
            "failed-infra",
            [
                f"Not scored: {'; '.join(clauses)}; the rollout does not pass as it happened, but passes with "
                "the faulted call(s) carried out as if they had succeeded, so the fault decided the outcome.",
                "Such a rollout is kept out of rewards (status failed-infra), never scored 0.",
            ],
            {**base, "counterfactual": counterfactual},
        )
    found_divergences = tally.divergences.items()
    for d in found_divergences:
        if d.path is None:
            warnings.append(
                f"call {d.call} ({d.tool}) {d.detail}" + (f": {d.replayed}" if d.recorded == "ok" else "")
            )
    scored = Scored(
        reward=run.reward,
        partial=run.partial,
        diff=run.diff,
        facts=run.facts,
        has_message=rollout.final_message is not None or (answers == "any" and bool(rollout.messages)),
        answers=answers,
        earlier=run.earlier,
        failed=tally.sentences.items(),
        truncated=rollout.truncated,
        divergences=found_divergences,
        faults=clauses,
        counterfactual=counterfactual,
        failed_count=tally.sentences.count,
        divergence_count=tally.divergences.count,
    )
    return ScoreReport(
        status="scored",
        reward=run.reward,
        partial=run.partial,
        diff=run.diff,
        facts=run.facts,
        failed_calls=tally.failed,
        counterfactual=counterfactual,
        divergences=found_divergences,
        ruled_out_stated=run.shotgun[:NAMED],
        explanation=explain(scored)
        + ([shotgun_sentence(run.shotgun, len(gold.answer_facts))] if run.shotgun else []),
        **base,
    )


def score_transcript(
    path: str | Path,
    domain: Domain | str | Path | None = None,
    task: Task | str | None = None,
    seed: int | None = None,
    format: Format | None = None,
    key: server_labels.Key | None = None,
) -> ScoreReport:
    """Read a transcript (any format) a line at a time and score it; the domain defaults to the one
    it names. The calls are replayed as they are read (`scoring.stream`), never all held.

    `key` verifies the server's labels (default: the key beside the transcript).
    """
    rollout, calls = open_transcript(path, format=format, key=key)
    try:
        if domain is None:
            if rollout.domain is None:
                raise TranscriptError(f"{path} names no domain: pass one (--domain)")
            served = rollout.domain_path  # signed by the server, else None
            ref = (
                served if served is not None and (Path(served) / "domain.yaml").is_file() else rollout.domain
            )
            try:
                loaded: Domain = load_domain(ref)
            except ToolgymError as exc:
                if not rollout.distrusted:
                    raise
                raise TranscriptError(f"{path}: {'; '.join(rollout.distrusted)}; and {exc}") from None
        else:
            loaded = domain if isinstance(domain, Domain) else load_domain(domain)
        return score_calls(loaded, rollout, calls, task=task, seed=seed)
    finally:
        calls.close()
