"""Validating domains: the checks of every task and the fuzzing of every tool run as units in
worker processes (or on a Ray cluster, `--executor ray`), each task rerun in fresh processes,
and the verdicts combined into a report; a manifest lists a domain's valid tasks.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ..tasks import load_domain
from . import DEFAULT_CALLS
from .fuzz import ToolFinding, ToolFuzz
from .manifest import Manifest
from .validate import Finding, TaskValidation, check_task, fuzz_unit, status_of

if TYPE_CHECKING:
    from ..executor import Executor


class DomainValidation(BaseModel):
    """One domain's verdicts and summary."""

    domain: str = Field(description="name@version")
    fingerprint: str
    path: str
    tasks: list[TaskValidation]
    summary: dict[str, int] = Field(default_factory=dict, description="status -> number of tasks")
    weak_verifier_rate: float = 0.0
    fuzz_calls: int = Field(default=0, description="calls per tool the fuzz check made at most (0: skipped)")
    tools: list[ToolFuzz] = Field(
        default_factory=list, description="per tool: calls made with schema-valid arguments, and findings"
    )

    @property
    def valid_ids(self) -> list[str]:
        return [t.task for t in self.tasks if t.valid]

    @property
    def tool_findings(self) -> list[ToolFinding]:
        """Tools that raised anything but a precise tool error while fuzzed."""
        return [f for t in self.tools for f in t.findings]


class ValidationReport(BaseModel):
    """The report of `toolgym validate`."""

    domains: list[DomainValidation]
    reruns: int
    workers: int
    executor: str
    seconds: float = 0.0
    fuzz: int = Field(default=0, description="calls per tool of the fuzz check (0: skipped)")

    @property
    def failures(self) -> int:
        """Invalid tasks plus tool findings (what `validate --strict` fails on)."""
        return sum(1 for d in self.domains for t in d.tasks if not t.valid) + sum(
            len(d.tool_findings) for d in self.domains
        )


def _unit(kind: str, path: str, name: str, arg: Any) -> TaskValidation | ToolFuzz:
    """One unit of work for the executor: a task's checks, or the fuzzing of a tool."""
    return check_task(path, name, arg) if kind == "task" else fuzz_unit(path, name, arg)


def _combine(first: TaskValidation, reruns: list[TaskValidation]) -> TaskValidation:
    """Fold rerun digests into a task's verdict: any disagreement is `flaky`."""
    findings = list(first.findings)
    digests = [r.digest for r in reruns]
    broken = [r for r in [first, *reruns] if r.status == "broken-gold"]
    if broken and len(broken) < 1 + len(reruns):
        findings = [f for f in findings if f.check != "broken-gold"]
        findings.append(
            Finding(
                check="flaky",
                message=f"the gold calls failed in {len(broken)} of {1 + len(reruns)} runs: {broken[0].findings[0].message}",
            )
        )
    elif first.digest is not None and any(d != first.digest for d in digests):
        distinct = len({first.digest, *digests})
        findings.append(
            Finding(
                check="flaky",
                message=f"{1 + len(reruns)} runs in separate processes gave {distinct} different final states",
            )
        )
    return first.model_copy(
        update={
            "findings": findings,
            "status": status_of(findings),
            "rerun_digests": [d or "" for d in digests],
        }
    )


def validate_domains(
    refs: Sequence[str | Path],
    reruns: int = 2,
    workers: int = 1,
    executor: Executor = "local",
    on_result: Any = None,
    fuzz: int = DEFAULT_CALLS,
) -> ValidationReport:
    """Validate every task of every domain, and fuzz every tool with `fuzz` calls (0: skip).
    `on_result(domain, TaskValidation | None)` reports progress (None: a rerun or a fuzzed tool)."""
    from ..executor import run_units

    started = time.perf_counter()
    domains = [load_domain(r) for r in refs]
    paths = [str(d.path) for d in domains]
    units: list[tuple[str, str, str, Any]] = [
        ("task", path, t.id, True) for d, path in zip(domains, paths, strict=True) for t in d.tasks
    ]
    if fuzz > 0:
        units += [
            ("fuzz", path, name, fuzz) for d, path in zip(domains, paths, strict=True) for name in d.tools
        ]
    first: dict[tuple[str, str], TaskValidation] = {}
    fuzzed: dict[tuple[str, str], ToolFuzz] = {}
    for (_kind, path, name, _), result in run_units(_unit, units, workers, executor):
        if isinstance(result, ToolFuzz):
            fuzzed[(path, name)] = result
            if on_result:
                on_result(path, None)
            continue
        assert isinstance(result, TaskValidation)
        first[(path, name)] = result
        if on_result:
            on_result(path, result)
    again: dict[tuple[str, str], list[TaskValidation]] = {k: [] for k in first}
    for _ in range(max(0, reruns - 1)):  # each round: fresh worker processes
        shallow = [(path, task_id, False) for kind, path, task_id, _ in units if kind == "task"]
        for (path, task_id, _), result in run_units(check_task, shallow, workers, executor):
            again[(path, task_id)].append(result)
            if on_result:
                on_result(path, None)
    out = []
    for domain, path in zip(domains, paths, strict=True):
        verdicts = [_combine(first[(path, t.id)], again[(path, t.id)]) for t in domain.tasks]
        summary: dict[str, int] = {}
        for v in verdicts:
            summary[v.status] = summary.get(v.status, 0) + 1
        writes = sum(
            1 for v in verdicts if v.mutations_tried or any(f.check == "weak-verifier" for f in v.findings)
        )
        weak = sum(1 for v in verdicts if any(f.check == "weak-verifier" for f in v.findings))
        out.append(
            DomainValidation(
                domain=domain.ref,
                fingerprint=domain.fingerprint(),
                path=path,
                tasks=verdicts,
                summary=summary,
                weak_verifier_rate=round(weak / writes, 4) if writes else 0.0,
                fuzz_calls=max(0, fuzz),
                tools=[fuzzed[(path, name)] for name in sorted(domain.tools) if (path, name) in fuzzed],
            )
        )
    return ValidationReport(
        domains=out,
        reruns=reruns,
        workers=workers,
        executor=executor,
        seconds=round(time.perf_counter() - started, 3),
        fuzz=max(0, fuzz),
    )


def manifest(result: DomainValidation) -> Manifest:
    return Manifest(domain=result.domain, fingerprint=result.fingerprint, valid_tasks=result.valid_ids)
