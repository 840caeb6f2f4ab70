"""Every planned domain turned into a folder, in worker processes: schema → tools → seed → folder → check.

    results = synthesize(generated, out_dir, seed=0, rows=None, workers=0, progress=None)

One domain is one unit of work (`synthesize_domain`), a pure function of the planned domain, its
operations, the seed and the row counts: the same inputs give the same folder in any process and
with any number of workers. A domain is kept only when `toolgym check` finds no errors in its
folder; otherwise the folder is removed and every operation of it counts as not compiled, with
the check's first problems as the reason. Nothing one domain does stops the others.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import multiprocessing
import os
import resource
import shutil
import signal
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scoring.executor import Executor, run_units
from scoring.tasks import check_domain
from scoring.validation.validate import CHECKED
from simulator.builders import dump_jsonl
from toolgen.model import Operation, PlannedDomain, SkippedOperation

from .folder import build_domain, source_licenses, write_folder
from .llm import ChatModel, LLMOptions, fill_descriptions, write_scenarios
from .schema import infer_schema
from .tools import compile_tools

__all__ = ["PHASES", "DomainResult", "synthesize", "synthesize_domain"]

#: progress(done, total): called as domains finish
Progress = Callable[[int, int], None]


@dataclass
class DomainResult:
    """What became of one planned domain."""

    name: str
    kept: bool
    folder: str | None
    operations: list[str]
    compiled: dict[str, str] = field(default_factory=dict)  # op id -> tool name
    not_compiled: list[SkippedOperation] = field(default_factory=list)
    tables: int = 0
    rows: int = 0
    tools: int = 0
    compiled_as: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    warnings: int = 0
    tasks_kept: int = 0
    tasks_rejected: dict[str, int] = field(default_factory=dict)
    reason: str | None = None
    #: where the time went, seconds per phase (`PHASES`), and the candidates the task stage checked
    seconds: dict[str, float] = field(default_factory=dict)
    candidates: int = 0
    #: CPU seconds this domain took in its worker (`synthesize`; the phases' `seconds` are wall
    #: time: on a shared machine they include waiting for a core)
    cpu_seconds: float = 0.0
    #: of which validating the task candidates
    checks_cpu_seconds: float = 0.0
    #: with `--llm`: descriptions filled, requests written as a person's, and why templates stayed
    llm: dict[str, int] = field(default_factory=dict)


#: the phases of one domain, in order: schema inference and tool compilation, seed rows, the folder
#: written, `toolgym check` (the one load), the task walks (proposing candidates, run on episodes),
#: the validation checks of the candidates, and (with `--llm`) the model's descriptions and requests
PHASES = ("schema_tools", "seed", "write", "load", "walks", "checks", "llm")


class _Clock:
    """Seconds per phase, read as each phase ends."""

    def __init__(self, into: dict[str, float]) -> None:
        self.into, self.last = into, time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.into[phase] = self.into.get(phase, 0.0) + now - self.last
        self.last = now


def _seed_rows() -> Callable[..., dict[str, list[dict[str, Any]]]]:
    from .seed import seed_rows

    return seed_rows


#: fewest valid tasks a kept domain has, once a task stage exists
MIN_TASKS = 5

#: The task stage: `make_tasks(builder, folder, schema, toolset, seed=..., domain=...) -> (kept,
#: {reason: n})` (`domain`: the folder as `toolgym check` loaded it, so it is not loaded again)
#: adds the tasks it keeps (validated) to the builder, writes them into the checked folder and
#: says how many it kept and why it rejected the others. `toolgen.synth.tasks.make_tasks` when
#: that module exists; until then domains are written without tasks.
TaskStage = Callable[..., tuple[int, dict[str, int]]]


def task_stage() -> TaskStage | None:
    """`toolgen.synth.tasks.make_tasks`, or None while the task generator is not in this checkout."""
    if importlib.util.find_spec("toolgen.synth.tasks") is None:
        return None
    module = importlib.import_module("toolgen.synth.tasks")
    stage: TaskStage | None = getattr(module, "make_tasks", None)
    return stage


def synthesize_domain(
    plan: PlannedDomain,
    operations: Mapping[str, Operation],
    out_dir: Path,
    licenses: Mapping[str, str],
    *,
    seed: int = 0,
    rows: int | Mapping[str, int] | None = None,
    tasks: TaskStage | None = None,
    with_tasks: bool = True,
    llm: LLMOptions | None = None,
) -> DomainResult:
    """One planned domain → its folder under `out_dir` (kept only when it checks clean and,
    once there is a task stage (`tasks`, default `task_stage()`), has `MIN_TASKS` valid tasks).
    `llm`: a chat model fills the descriptions the spec lacks and writes the kept tasks'
    instructions as a person's requests (`toolgen.synth.llm`; each checked and validated again, else
    the template stays)."""
    model = ChatModel(llm) if llm is not None else None
    result = DomainResult(plan.name, False, None, list(plan.operations))
    folder = out_dir / plan.name
    clock = _Clock(result.seconds)
    try:
        schema = infer_schema(plan, operations)
        toolset = compile_tools(schema)
        result.not_compiled = list(toolset.not_compiled)
        if not toolset.tools:
            return _drop(result, folder, "no operation of it could be compiled")
        builder = build_domain(plan, schema, toolset)
        clock.lap("schema_tools")
        if model is not None:
            filled = fill_descriptions(model, builder, plan, schema, toolset)
            result.llm.update({f"descriptions_{k}": n for k, n in filled.items()})
            clock.lap("llm")
        tables = builder.spec().tables
        seeded = _seed_rows()(
            tables, schema.hints(), seed, rows, clock=builder.head["clock"]["start"], salt=plan.name
        )
        for table, table_rows in seeded.items():
            builder.seed(table, table_rows)
        clock.lap("seed")
        if folder.exists():
            shutil.rmtree(folder)
        write_folder(builder, folder, plan, schema, toolset, licenses, seed=seed)
        clock.lap("write")
        report = check_domain(folder)
        clock.lap("load")
    except Exception as exc:  # noqa: BLE001 - one domain's failure is reported, never the run's
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return _drop(result, folder, f"generation failed: {detail[:500]}")
    result.warnings = len(report.warnings)
    if report.errors:
        result.problems = [f"{p.file}:{p.location}: {p.message}" for p in report.errors[:10]]
        return _drop(
            result, folder, f"`toolgym check` found {len(report.errors)} problem(s): {result.problems[0]}"
        )
    stage = (task_stage() if tasks is None else tasks) if with_tasks else None
    if stage is not None:
        checked, checks, checks_cpu = CHECKED.tasks, CHECKED.seconds, CHECKED.cpu_seconds
        try:
            result.tasks_kept, result.tasks_rejected = stage(
                builder, folder, schema, toolset, seed=seed, domain=report.domain
            )
        except Exception as exc:  # noqa: BLE001 - one domain's failure is reported, never the run's
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            return _drop(result, folder, f"task generation failed: {detail[:500]}")
        finally:
            clock.lap("walks")
            result.candidates = CHECKED.tasks - checked
            result.seconds["checks"] = CHECKED.seconds - checks
            result.checks_cpu_seconds = CHECKED.cpu_seconds - checks_cpu
            result.seconds["walks"] -= result.seconds["checks"]
        if result.tasks_kept < MIN_TASKS:
            return _drop(result, folder, f"fewer than {MIN_TASKS} valid tasks: {result.tasks_kept}")
        if model is not None and report.domain is not None and builder.tasks:
            service = f"with {', '.join(plan.apis) or plan.name}"
            try:
                written = write_scenarios(model, builder, report.domain, service)
            except Exception as exc:  # noqa: BLE001 - the templates stay (the ones already checked are kept)
                written = {f"error: {type(exc).__name__}": len(builder.tasks)}
            for kind, n in written.items():
                result.llm[kind if kind == "scenarios" else f"template kept: {kind}"] = n
            (folder / "tasks.jsonl").write_text(dump_jsonl(builder.tasks), encoding="utf-8")
            clock.lap("llm")
    if model is not None:
        for why, n in model.failures.items():  # (what the endpoint did, for the one who runs it)
            result.llm[f"no reply: {why[:160]}"] = n
    result.kept, result.folder = True, str(folder)
    result.compiled = {t.op_id: t.name for t in toolset.tools}
    result.tools = len(toolset.tools)
    result.tables = len(schema.tables)
    result.rows = sum(len(r) for r in builder.rows.values())
    for tool in toolset.tools:
        result.compiled_as[tool.compiled_as] = result.compiled_as.get(tool.compiled_as, 0) + 1
    return result


def _drop(result: DomainResult, folder: Path, reason: str) -> DomainResult:
    """The domain left out: its folder removed, every operation not compiled with `reason`."""
    if folder.exists():
        shutil.rmtree(folder, ignore_errors=True)
    already = {s.id for s in result.not_compiled}
    result.not_compiled += [
        SkippedOperation(id=i, reason=reason) for i in result.operations if i not in already
    ]
    result.kept, result.folder, result.reason = False, None, reason
    result.compiled = {}
    return result


def _work(
    index: int,
    plan: PlannedDomain,
    ops: dict[str, Operation],
    out_dir: str,
    licenses: dict[str, str],
    seed: int,
    rows: Any,
    with_tasks: bool,
    llm: LLMOptions | None = None,
) -> tuple[int, DomainResult]:
    """One unit of work for the executor (module level, so processes and Ray can run it). In a
    worker process, a domain that runs away is stopped (`_bounded`) and left out with the reason."""
    cpu = time.process_time()
    try:
        with _bounded(worker=multiprocessing.parent_process() is not None):
            result = synthesize_domain(
                plan, ops, Path(out_dir), licenses, seed=seed, rows=rows, with_tasks=with_tasks, llm=llm
            )
    except DomainTimeout as exc:
        result = DomainResult(plan.name, False, None, list(plan.operations))
        result = _drop(result, Path(out_dir) / plan.name, f"generation failed: {exc}")
    result.cpu_seconds = time.process_time() - cpu
    return index, result


#: a domain's budget in a worker process: wall seconds (`TOOLGYM_DOMAIN_SECONDS`) and address
#: space in GiB (`TOOLGYM_WORKER_GIB`); a domain over it is left out with the reason (DomainTimeout,
#: or the MemoryError that `synthesize_domain` reports), and the worker goes on
DOMAIN_SECONDS = 900.0
WORKER_GIB = 8.0


class DomainTimeout(BaseException):
    """A domain took longer than its budget (a BaseException, so that no check that turns an
    Exception into a verdict swallows it: it ends the domain)."""


@contextlib.contextmanager
def _bounded(worker: bool) -> Iterator[None]:
    if not worker or not hasattr(signal, "setitimer"):
        yield
        return
    seconds = float(os.environ.get("TOOLGYM_DOMAIN_SECONDS") or DOMAIN_SECONDS)
    gib = float(os.environ.get("TOOLGYM_WORKER_GIB") or WORKER_GIB)
    limit = int(gib * 2**30)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or limit <= hard:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))

    def expired(signum: int, frame: Any) -> None:
        raise DomainTimeout(f"the domain took over {seconds:g} s (TOOLGYM_DOMAIN_SECONDS)")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def synthesize(
    domains: Sequence[PlannedDomain],
    operations: Sequence[Operation],
    out_dir: Path,
    *,
    seed: int = 0,
    rows: int | Mapping[str, int] | None = None,
    workers: int = 0,
    progress: Progress | None = None,
    with_tasks: bool = True,
    executor: Executor = "local",
    llm: LLMOptions | None = None,
    on_result: Callable[[DomainResult], None] | None = None,
) -> list[DomainResult]:
    """Every planned domain → a folder under `out_dir`; results in the plan's order.

    `workers` 0 means one process per core (1 runs in this process); `executor` "ray" runs the
    domains on a Ray cluster (`scoring.executor`, as validation does); `with_tasks` False writes
    the domains without tasks (and keeps them without the 5-task rule); `llm` (`--llm`) as in
    `synthesize_domain`; `on_result(result)` is called as each domain finishes.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    by_id = {op.id: op for op in operations}
    licenses = source_licenses(by_id[i].source for d in domains for i in d.operations if i in by_id)
    jobs: list[tuple[Any, ...]] = []
    for plan in domains:
        ops = {i: by_id[i] for i in plan.operations if i in by_id}
        mine = {ops[i].source: licenses.get(ops[i].source, "unknown") for i in ops}
        jobs.append((len(jobs), plan, ops, str(out_dir), mine, seed, rows, with_tasks, llm))
    n = workers or os.cpu_count() or 1
    results: list[DomainResult | None] = [None] * len(jobs)
    if executor == "local" and (n <= 1 or len(jobs) <= 1):
        outcomes: Iterable[tuple[int, DomainResult]] = (_work(*job) for job in jobs)
    else:
        outcomes = (result for _, result in run_units(_work, jobs, min(n, len(jobs)), executor))
    for done, (index, result) in enumerate(outcomes, start=1):
        results[index] = result
        if on_result is not None:
            on_result(result)
        if progress is not None:
            progress(done, len(jobs))
    return [r for r in results if r is not None]
