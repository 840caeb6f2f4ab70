"""The score report: reward, partial credit, a structured state diff, answer facts, explanation.

`ScoreReport` is the JSON contract (`schemas/score-report.schema.json`); `render` shows it to
people as rich tables. The diff lists rows both sides changed (`tables`), expected changes not
made (`missing`) and collateral changes (`unexpected`).
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, Field

Change = Literal["create", "update", "delete"]
RowStatus = Literal["wrong", "missing", "unexpected"]
Status = Literal["scored", "failed-infra", "incomplete"]


class ColumnDiff(BaseModel):
    """One column of one row: the expected value, the agent's, and the value before the rollout."""

    column: str
    expected: Any = None
    actual: Any = None
    initial: Any = Field(default=None, description="the value in the seed state (null for created rows)")


class RowDiff(BaseModel):
    """One row that differs from the expected state."""

    table: str
    key: Any = Field(description="the row's key (the expected key for created rows the agent also made)")
    actual_key: Any = Field(default=None, description="the agent's key of a created row, when it differs")
    change: Change = Field(description="what the gold solution does to the row (the agent, if unexpected)")
    actual_change: Change | None = Field(
        default=None, description="what the agent did to the row (null: nothing)"
    )
    status: RowStatus
    columns: list[ColumnDiff] = Field(default_factory=list)
    credit: float = Field(default=0.0, description="share of this expected change the agent made")


class KeyMatch(BaseModel):
    """A row the agent created, matched by content to a row the gold solution creates."""

    table: str
    actual: Any
    expected: Any


class StateDiff(BaseModel):
    """The final state vs the expected state, over the rows either side changed."""

    tables: dict[str, list[RowDiff]] = Field(default_factory=dict, description="wrong rows, by table")
    missing: list[RowDiff] = Field(default_factory=list)
    unexpected: list[RowDiff] = Field(default_factory=list)
    expected_changes: int = Field(default=0, description="rows the gold solution changes")
    matched: int = Field(default=0, description="expected changes the agent made exactly")
    credit: float = Field(
        default=0.0, description="expected changes made, with partial rows counted by share"
    )
    created: list[KeyMatch] = Field(default_factory=list)
    ignored_columns: list[str] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.tables and not self.missing and not self.unexpected

    def rows(self) -> Iterator[RowDiff]:
        """Every differing row: wrong, then missing, then unexpected."""
        for rows in self.tables.values():
            yield from rows
        yield from self.missing
        yield from self.unexpected


class FactResult(BaseModel):
    """An answer fact and whether the final message contains it."""

    fact: Any
    found: bool


class Divergence(BaseModel):
    """A call whose replayed outcome or result differs from what the transcript recorded."""

    call: int = Field(description="the call's index in the rollout")
    tool: str
    where: str = ""
    path: str | None = Field(default=None, description="where inside the result the values differ")
    recorded: Any = None
    replayed: Any = None
    detail: str = Field(description="the difference, in words")


class ScoreReport(BaseModel):
    """The score of one rollout on one task."""

    status: Status = Field(
        description="`failed-infra`: an infrastructure fault decided it; `incomplete`: a server-written "
        "transcript without its end record; both kept out of rewards"
    )
    reward: float | None = Field(
        description="1.0 on an exact match of state and facts, else 0.0; null if not scored"
    )
    partial: float | None = Field(
        description="(expected changes made + facts found - collateral changes) / (expected changes + facts), in [0, 1]"
    )
    domain: str = Field(description="name@version")
    fingerprint: str | None = Field(
        default=None, description="the domain's fingerprint (version + hash of schema, tools, seed, tasks)"
    )
    task: str
    seed: int
    transcript: str | None = None
    format: str | None = None
    calls: int = 0
    failed_calls: int = 0
    diff: StateDiff | None = None
    facts: list[FactResult] = Field(default_factory=list)
    truncated: bool = Field(default=False, description="the harness cut the rollout off: reward 0.0")
    answers: str = Field(
        default="final", description="where answer facts were looked for: final or any message"
    )
    counterfactual: float | None = Field(
        default=None,
        description="the reward with every injected / timed-out call carried out as if it had succeeded (when computed)",
    )
    divergences: list[Divergence] = Field(
        default_factory=list, description="calls whose replayed result differs from the recorded one"
    )
    ruled_out_stated: list[Any] = Field(
        default_factory=list,
        description="values the task rules out that the answer states (the first few), when they outnumber "
        "its answer facts: the answer check fails (a shotgun answer)",
    )
    warnings: list[str] = Field(default_factory=list)
    explanation: list[str] = Field(
        default_factory=list, description="why the reward is what it is, in sentences"
    )


def show(value: Any) -> str:
    """A value as compact JSON (strings quoted), for tables and sentences."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def render(report: ScoreReport) -> list[Any]:
    """Rich renderables for people: a summary line, the diff table, the facts, the explanation."""
    from rich.table import Table

    colour = {
        "scored": "green" if report.reward == 1.0 else "red",
        "failed-infra": "yellow",
        "incomplete": "yellow",
    }[report.status]
    reward = "null" if report.reward is None else f"{report.reward:.1f}"
    partial = "null" if report.partial is None else f"{report.partial:.2f}"
    head = (
        f"[bold {colour}]{report.status}[/] {report.transcript or ''}  task {report.task} on {report.domain} "
        f"(seed {report.seed}): reward [bold]{reward}[/], partial {partial}"
    )
    out: list[Any] = [head]
    if report.diff is not None and not report.diff.empty:
        table = Table(title="state diff", title_justify="left", show_lines=False)
        for name in ("status", "table", "key", "change", "column", "expected", "actual"):
            table.add_column(name)
        style = {"wrong": "red", "missing": "magenta", "unexpected": "yellow"}
        for row in report.diff.rows():
            key = show(row.key) + (
                "" if row.actual_key in (None, row.key) else f" (agent: {show(row.actual_key)})"
            )
            columns = row.columns or [ColumnDiff(column="(row)")]
            for i, col in enumerate(columns):
                first = i == 0
                table.add_row(
                    f"[{style[row.status]}]{row.status}[/]" if first else "",
                    row.table if first else "",
                    key if first else "",
                    row.change if first else "",
                    col.column,
                    show(col.expected),
                    show(col.actual),
                )
        out.append(table)
    if report.facts:
        facts = Table(title="answer facts", title_justify="left")
        facts.add_column("fact")
        facts.add_column("found")
        for f in report.facts:
            facts.add_row(show(f.fact), "[green]yes[/]" if f.found else "[red]no[/]")
        out.append(facts)
    out.extend(f"  - {line}" for line in [*report.explanation, *(f"warning: {w}" for w in report.warnings)])
    return out
