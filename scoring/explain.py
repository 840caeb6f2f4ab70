"""Sentences that say why a rollout got its reward: every zero can be explained.

One sentence for the verdict, one per differing row (the first `LIMIT`), one per missing answer
fact, and one for the partial credit.
"""

from __future__ import annotations

from .report import FactResult, RowDiff, StateDiff, show

LIMIT = 20


def _cells(row: RowDiff, limit: int = 6) -> str:
    parts = [
        f"{c.column}={show(c.expected if row.status == 'missing' else c.actual)}" for c in row.columns[:limit]
    ]
    more = len(row.columns) - limit
    return "{" + ", ".join(parts) + (f", ... {more} more" if more > 0 else "") + "}"


def _versus(row: RowDiff) -> str:
    return "; ".join(f"{c.column} is {show(c.actual)}, expected {show(c.expected)}" for c in row.columns)


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
        changes = "; ".join(
            f"{c.column} should be {show(c.expected)} (is {show(c.actual)})" for c in row.columns
        )
        return f"{where} was not changed: {changes}."
    if row.change == "create":
        return (
            f"{row.table}: the agent created {show(row.key)} {_cells(row)}, which the task does not create."
        )
    if row.change == "delete":
        return f"{where} was deleted, which the task does not do."
    changes = "; ".join(f"{c.column} is {show(c.actual)}, was {show(c.initial)}" for c in row.columns)
    return f"{where} was changed, which the task does not do: {changes}."


def explain(
    reward: float,
    partial: float,
    diff: StateDiff,
    facts: list[FactResult],
    has_message: bool,
    failed_calls: int,
) -> list[str]:
    """The explanation of a scored rollout."""
    n_facts, found = len(facts), sum(f.found for f in facts)
    ignoring = f", ignoring {', '.join(diff.ignored_columns)}" if diff.ignored_columns else ""
    if reward == 1.0:
        facts_text = (
            f"all {n_facts} answer facts are in the final message"
            if n_facts
            else "no answer facts are required"
        )
        return [
            f"Reward 1.0: the final state matches the expected state ({diff.expected_changes} expected row "
            f"changes{ignoring}) and {facts_text}."
        ]
    problems = []
    rows = list(diff.rows())
    if rows:
        problems.append(f"{len(rows)} row(s) differ from the expected state{ignoring}")
    if found < n_facts:
        problems.append(f"{n_facts - found} of {n_facts} answer facts are missing from the final message")
    out = [f"Reward 0.0: {' and '.join(problems)}."]
    out.extend(row_sentence(r) for r in rows[:LIMIT])
    if len(rows) > LIMIT:
        out.append(f"... and {len(rows) - LIMIT} more differing rows (see the diff).")
    if n_facts and not has_message:
        out.append(f"There is no final message, so none of the {n_facts} answer facts could be found.")
    else:
        out.extend(f"Answer fact {show(f.fact)} is not in the final message." for f in facts if not f.found)
    if failed_calls:
        out.append(f"{failed_calls} of the agent's calls failed (and changed nothing).")
    out.append(
        f"Partial credit {partial:.2f}: {diff.credit:.4g} of {diff.expected_changes} expected row changes made"
        + (f", {found} of {n_facts} answer facts found" if n_facts else "")
        + f", minus {len(diff.unexpected)} collateral change(s)."
    )
    return out
