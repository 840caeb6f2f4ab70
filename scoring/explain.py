"""Sentences that say why a rollout got its reward: every zero can be explained.

One sentence for the verdict, one per differing row (the first `LIMIT`), one per missing answer
fact (saying when it was stated in an earlier message), one per failed call of the agent with its
error, one for calls whose replayed result differs from the recorded one, and one for the partial
credit. A JSON value that differs is shown by the paths of its differing elements
(`payment_history[1].amount is 55, expected 5`), never as cut-off JSON.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .matching import same
from .report import ColumnDiff, Divergence, FactResult, RowDiff, StateDiff, show

LIMIT = 20
#: How many differing elements of one JSON value, and how many failed calls, are named.
PATHS = 4
CALLS = 10
ERROR_CHARS = 200

#: Stands for an element one side of a JSON comparison does not have.
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if _NAME.match(key) else f"{path}[{show(key)}]"


def json_differences(expected: Any, actual: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(path, expected, actual) of each differing element of two JSON values (`MISSING`: absent).

    Walked without recursion, in document order; numbers compare within 1e-9 (`matching.same`).
    """
    stack: list[tuple[str, Any, Any]] = [(path, expected, actual)]
    while stack:
        where, exp, act = stack.pop()
        if isinstance(exp, dict) and isinstance(act, dict):
            keys = list(exp) + [k for k in act if k not in exp]
            stack.extend(
                (_key_path(where, str(k)), exp.get(k, MISSING), act.get(k, MISSING)) for k in reversed(keys)
            )
        elif isinstance(exp, list) and isinstance(act, list):
            n = max(len(exp), len(act))
            stack.extend(
                (
                    f"{where}[{i}]",
                    exp[i] if i < len(exp) else MISSING,
                    act[i] if i < len(act) else MISSING,
                )
                for i in reversed(range(n))
            )
        elif exp is MISSING or act is MISSING or not same(exp, act):
            yield where, exp, act


def _shown(value: Any) -> str:
    return "missing" if value is MISSING else show(value)


def versus(column: str, expected: Any, actual: Any) -> str:
    """`column is A, expected E`; for JSON values, the same for each differing element's path."""
    if isinstance(expected, dict | list) and isinstance(actual, dict | list):
        found = []
        for n, (path, exp, act) in enumerate(json_differences(expected, actual, column)):
            if n == PATHS:
                found.append("... (more elements differ)")
                break
            found.append(f"{path} is {_shown(act)}, expected {_shown(exp)}")
        if found:
            return "; ".join(found)
    return f"{column} is {show(actual)}, expected {show(expected)}"


def _cells(row: RowDiff, limit: int = 6) -> str:
    parts = [
        f"{c.column}={show(c.expected if row.status == 'missing' else c.actual)}" for c in row.columns[:limit]
    ]
    more = len(row.columns) - limit
    return "{" + ", ".join(parts) + (f", ... {more} more" if more > 0 else "") + "}"


def _versus(row: RowDiff) -> str:
    return "; ".join(versus(c.column, c.expected, c.actual) for c in row.columns)


def _should_be(c: ColumnDiff) -> str:
    if isinstance(c.expected, dict | list) and isinstance(c.actual, dict | list):
        return versus(c.column, c.expected, c.actual)
    return f"{c.column} should be {show(c.expected)} (is {show(c.actual)})"


def row_sentence(row: RowDiff) -> str:
    """One sentence naming the table, the row and the columns that differ."""
    where = f"{row.table} {show(row.key)}"
    if row.status == "wrong":
        if row.change == "create":
            agent = "" if row.actual_key in (None, row.key) else f" (the agent's {show(row.actual_key)})"
            return f"{where}{agent}, a created row, differs: {_versus(row)}."
        if row.change == "delete":
            return f"{where} should be deleted, but the agent changed it instead: {_cells(row)}."
        if row.actual_change == "delete":
            return f"{where} should be updated, but the agent deleted it."
        return f"{where} differs: {_versus(row)}."
    if row.status == "missing":
        if row.change == "create":
            return f"{row.table}: a row {_cells(row)} should be created, but the agent did not create it."
        if row.change == "delete":
            return f"{where} should be deleted, but the agent left it."
        changes = "; ".join(_should_be(c) for c in row.columns)
        return f"{where} was not changed: {changes}."
    if row.change == "create":
        return (
            f"{row.table}: the agent created {show(row.key)} {_cells(row)}, which the task does not create."
        )
    if row.change == "delete":
        return f"{where} was deleted, which the task does not do."
    changes = "; ".join(f"{c.column} is {show(c.actual)}, was {show(c.initial)}" for c in row.columns)
    return f"{where} was changed, which the task does not do: {changes}."


@dataclass
class Scored:
    """What the explanation of a scored rollout draws on."""

    reward: float
    partial: float
    diff: StateDiff
    facts: list[FactResult]
    has_message: bool
    answers: str = "final"
    earlier: set[int] = field(default_factory=set)  # indexes of missing facts stated earlier
    failed: list[str] = field(default_factory=list)  # one sentence per failed call of the agent
    truncated: bool = False
    divergences: list[Divergence] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)  # one clause per transient fault
    counterfactual: float | None = None
    # how many failed calls and divergences there are, when the lists hold only the first ones
    failed_count: int | None = None
    divergence_count: int | None = None


def call_sentence(index: int, name: str, error: str | None, how: str = "failed") -> str:
    """`call 3 (update_order) failed: <error>` with the error cut to a bounded length."""
    text = " ".join((error or "no error message").split())
    if len(text) > ERROR_CHARS:
        text = text[:ERROR_CHARS] + "..."
    return f"call {index} ({name}) {how}: {text}"


def _fact_sentences(s: Scored) -> list[str]:
    n_facts = len(s.facts)
    if n_facts and not s.has_message:
        return [f"There is no final message, so none of the {n_facts} answer facts could be found."]
    where = "any assistant message" if s.answers == "any" else "the final message"
    out = []
    for i, f in enumerate(s.facts):
        if f.found:
            continue
        sentence = f"Answer fact {show(f.fact)} is not in {where}"
        if i in s.earlier:
            sentence += (
                " (it was stated in an earlier assistant message; this task takes its answer from the "
                "final message only)"
            )
        out.append(sentence + ".")
    return out


def _verdict_problems(s: Scored, rows: list[RowDiff]) -> list[str]:
    n_facts, found = len(s.facts), sum(f.found for f in s.facts)
    ignoring = f", ignoring {', '.join(s.diff.ignored_columns)}" if s.diff.ignored_columns else ""
    where = "any assistant message" if s.answers == "any" else "the final message"
    problems = []
    if rows:
        problems.append(f"{len(rows)} row(s) differ from the expected state{ignoring}")
    if found < n_facts:
        problems.append(f"{n_facts - found} of {n_facts} answer facts are missing from {where}")
    return problems


def explain(s: Scored) -> list[str]:
    """The explanation of a scored rollout."""
    n_facts, found = len(s.facts), sum(f.found for f in s.facts)
    ignoring = f", ignoring {', '.join(s.diff.ignored_columns)}" if s.diff.ignored_columns else ""
    rows = list(s.diff.rows())
    out: list[str] = []
    if s.reward == 1.0:
        where = "any assistant message" if s.answers == "any" else "the final message"
        facts_text = (
            f"all {n_facts} answer facts are in {where}" if n_facts else "no answer facts are required"
        )
        out.append(
            f"Reward 1.0: the final state matches the expected state ({s.diff.expected_changes} expected row "
            f"changes{ignoring}) and {facts_text}."
        )
    else:
        problems = _verdict_problems(s, rows)
        if s.truncated:
            problems.insert(
                0, "the harness cut the rollout off (truncated), which scores 0.0 whatever the state"
            )
        out.append(f"Reward 0.0: {' and '.join(problems) or 'the rollout did not pass'}.")
        out.extend(row_sentence(r) for r in rows[:LIMIT])
        if len(rows) > LIMIT:
            out.append(f"... and {len(rows) - LIMIT} more differing rows (see the diff).")
        out.extend(_fact_sentences(s))
    if s.faults:
        decided = (
            "carried out as if they had succeeded, the rollout still would not pass, so the fault did not "
            "decide the outcome and it is scored normally"
            if s.counterfactual is not None
            else "the rollout passed anyway"
        )
        out.append(f"Faults not of the agent's making: {'; '.join(s.faults)}; {decided}.")
    out.extend(f"{sentence[0].upper()}{sentence[1:]}." for sentence in s.failed[:CALLS])
    failed = len(s.failed) if s.failed_count is None else s.failed_count
    if failed > CALLS:
        out.append(f"... and {failed - CALLS} more failed calls.")
    if s.divergences:
        named = ", ".join(f"call {d.call} ({d.tool})" for d in s.divergences[:CALLS])
        diverged = len(s.divergences) if s.divergence_count is None else s.divergence_count
        more = f" and {diverged - CALLS} more" if diverged > CALLS else ""
        out.append(
            f"The replay differs from what the transcript recorded at {named}{more}: the environment scored "
            "is not the one the agent saw (see `divergences`)."
        )
    if s.reward != 1.0:
        out.append(
            f"Partial credit {s.partial:.2f}: {s.diff.credit:.4g} of {s.diff.expected_changes} expected row changes made"
            + (f", {found} of {n_facts} answer facts found" if n_facts else "")
            + f", minus {len(s.diff.unexpected)} collateral change(s)."
        )
    return out
