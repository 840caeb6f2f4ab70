"""Running rollouts: every (domain, task, policy, sample), scored, one results line each.

    summary = run_rollouts(["bank"], ["gold", "random"], k=8, runs="runs")

Writes the server's transcripts to `RUNS/transcripts/` and one line per rollout to
`RUNS/results.jsonl`; a stopped run goes on where it was. Episodes run through MCP or
in-process, inline, in a local process pool or on Ray.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from simulator import Domain, TaskError, ToolgymError
from simulator.errors import ErrorKind
from simulator.serve.labels import Key, runs_key
from simulator.serve.server import DomainServer

from ..batch import BatchScorer, bounded
from ..executor import Executor, run_units
from ..tasks import Task, load_domain, task_of
from ..transcripts import load_transcript
from ..validation.manifest import Manifest
from .base import Context, Ended, Policy
from .env import InProcessEnv, McpEnv, in_process_registry
from .layout import RESULTS, TRANSCRIPTS
from .policies import corruption_keys, parse_policy

Via = Literal["mcp", "inprocess"]
VIAS: tuple[Via, ...] = ("mcp", "inprocess")
STALE = "stale"


class RolloutLine(BaseModel):
    """One rollout's results line."""

    domain: str = Field(description="name@version")
    fingerprint: str
    task: str
    sample: int
    policy: str
    status: str = Field(description="scored, failed-infra (kept out of rewards), incomplete or error")
    reward: float | None = None
    partial: float | None = None
    infra: bool = Field(description="kept out of rewards: an infrastructure failure decided it")
    infra_cause: str | None = Field(
        default=None, description="injected, timeout, capacity, storage, infra, internal or endpoint"
    )
    injected: int = Field(default=0, description="calls that hit an injected fault")
    real_faults: int = Field(
        default=0, description="calls that hit a real (not injected) infrastructure fault"
    )
    calls: int = 0
    turns: int = 0
    truncated: bool = False
    wall_s: float = 0.0
    seed: int = 0
    via: str = "mcp"
    transcript: str | None = Field(default=None, description="relative to the runs folder")
    error: str | None = None
    tier: str | None = Field(
        default=None, description="the task's tier tag (`tier-0` … `tier-4`), if it has one"
    )


@dataclass(frozen=True)
class Options:
    """How rollouts run (picklable: sent to every worker)."""

    runs: str
    via: Via = "mcp"
    fault_rate: float = 0.0
    fault_seed: int = 0
    max_turns: int = 30
    seed: int = 0
    llm_retries: int = 3
    llm_timeout: float = 60.0


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:40]


def rollout_name(fingerprint: str, task: str, policy: str, sample: int) -> str:
    """A rollout's transcript name: readable, and unique per (fingerprint, task, policy, sample)."""
    digest = hashlib.sha256(f"{fingerprint}|{task}|{policy}|{sample}".encode()).hexdigest()[:10]
    return f"{_slug(task)}.{_slug(policy)}.{sample}.{digest}"


def rollout_rng(options: Options, fingerprint: str, task: str, policy: str, sample: int) -> random.Random:
    """The policy's random stream: the same for the same rollout in any process."""
    return random.Random(f"{options.seed}|{fingerprint}|{task}|{policy}|{sample}")


# -- one worker --------------------------------------------------------------------------------


class _Worker:
    """What one process keeps between rollouts of a domain: the domain, scorer, registry, servers."""

    def __init__(self, domain_ref: str, options: Options):
        self.options = options
        self.runs = Path(options.runs)
        self.folder = self.runs / TRANSCRIPTS
        self.folder.mkdir(parents=True, exist_ok=True)
        key = runs_key(self.folder, create=True)
        assert key is not None
        self.key: Key = key
        self.scorer = BatchScorer(domain=domain_ref, key=key)
        self.domain: Domain = self.scorer.load(domain_ref)
        self.keys = corruption_keys(self.domain)
        self.registry = in_process_registry(
            self.domain, self.folder, key, options.fault_rate, options.fault_seed
        )
        self.servers: dict[str, DomainServer] = {}

    def server(self, task: Task) -> DomainServer:
        server = self.servers.get(task.id)
        if server is None:
            server = DomainServer(
                self.domain,
                runs=self.folder,
                task=task.id,
                seed=task.seed,
                fault_rate=self.options.fault_rate,
                fault_seed=self.options.fault_seed,
                idle_timeout=None,
                error_backoff_ms=0.0,  # one client (this worker) opens every session: no back-off
                key=self.key,
            )
            if len(self.servers) > 64:
                self.servers.clear()
            self.servers[task.id] = server
        return server

    async def episode(self, task: Task, policy: Policy, ctx: Context, name: str) -> tuple[Ended, Path | None]:
        if self.options.via == "inprocess":
            self._set_aside(name)
            env = InProcessEnv(self.registry, name, task, task.seed)
            ended = Ended()
            try:
                ended = await policy.run(env, ctx)
            finally:
                env.close("turn_limit" if ended.truncated else "rollout ended")
            return ended, env.transcript
        async with McpEnv(self.server(task)) as mcp_env:
            ended = await policy.run(mcp_env, ctx)
        return ended, mcp_env.transcript

    def _set_aside(self, name: str) -> None:
        """Move a transcript of this rollout that has no results line (a run stopped mid-rollout)
        to RUNS/stale/, out of the transcripts folder, so the rollout runs again afresh."""
        path = self.folder / f"{name}.jsonl"
        if path.exists():
            stale = self.runs / STALE
            stale.mkdir(exist_ok=True)
            n = sum(1 for _ in stale.glob(f"{name}*"))
            path.rename(stale / f"{name}{f'.{n}' if n else ''}.jsonl")


_WORKERS: dict[tuple[str, Options], _Worker] = {}


def _worker(domain_ref: str, options: Options) -> _Worker:
    worker = _WORKERS.get((domain_ref, options))
    if worker is None:
        worker = _WORKERS[(domain_ref, options)] = _Worker(domain_ref, options)
    return worker


def _faults(path: Path, key: Key) -> tuple[int, int, str | None]:
    """(injected faults, real faults, the kind of the first real one) of a transcript."""
    rollout = load_transcript(path, key=key)
    kinds = [c.fault for _, c in rollout.faults()]
    real = [k for k in kinds if k is not ErrorKind.INJECTED]
    return len(kinds) - len(real), len(real), (str(real[0]) if real else None)


def rollout_unit(
    domain_ref: str, task_id: str, policy_text: str, sample: int, options: Options
) -> dict[str, Any]:
    """Run and score one rollout; its results line as a dict (never raises for a rollout's failure)."""
    worker = _worker(domain_ref, options)
    domain = worker.domain
    fingerprint = domain.fingerprint()
    base: dict[str, Any] = {
        "domain": domain.ref,
        "fingerprint": fingerprint,
        "task": task_id,
        "sample": sample,
        "policy": policy_text,
        "via": options.via,
    }
    started = time.perf_counter()
    try:
        task = task_of(domain, task_id)
        base["tier"] = next((t for t in task.tags if t.startswith("tier-")), None)
        policy = parse_policy(policy_text)
        ctx = Context(
            domain,
            task,
            rollout_rng(options, fingerprint, task_id, policy_text, sample),
            max_turns=options.max_turns,
            retries=options.llm_retries,
            timeout=options.llm_timeout,
            keys=worker.keys,
        )
        name = rollout_name(fingerprint, task_id, policy_text, sample)
        ended, path = asyncio.run(worker.episode(task, policy, ctx, name))
        base |= {"seed": task.seed, "turns": ended.turns, "truncated": ended.truncated}
        if path is not None:
            base["transcript"] = str(path.relative_to(worker.runs))
        if path is None:
            report: dict[str, Any] = {
                "status": "failed-infra" if ended.infra else "error",
                "error": ended.infra or "no transcript was written",
            }
        else:
            report = worker.scorer.score(path)
            injected, real, cause = _faults(path, worker.key)
            base |= {"injected": injected, "real_faults": real, "calls": report.get("calls", 0)}
            if report.get("status") == "failed-infra":
                base["infra_cause"] = cause or ("injected" if injected else "timeout")
        if ended.infra:
            report = {
                **report,
                "status": "failed-infra",
                "reward": None,
                "partial": None,
                "error": ended.infra,
            }
            base["infra_cause"] = "endpoint"
        status = report.get("status", "error")
        line = RolloutLine(
            **base,
            status=status,
            reward=report.get("reward") if status == "scored" else None,
            partial=report.get("partial") if status == "scored" else None,
            infra=status in ("failed-infra", "incomplete"),
            error=bounded(str(report["error"])) if report.get("error") else None,
            wall_s=round(time.perf_counter() - started, 4),
        )
    except (ToolgymError, ValueError, OSError) as exc:
        line = RolloutLine(**base, status="error", infra=False, error=bounded(f"{type(exc).__name__}: {exc}"))
    return line.model_dump(mode="json")


# -- many rollouts -----------------------------------------------------------------------------


@dataclass
class Plan:
    """The rollouts to run, and how many were already in the runs folder."""

    units: list[tuple[str, str, str, int, Options]]
    skipped: int
    domains: dict[str, str]  # domain ref given -> name@version


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The results lines of a runs folder (a line that is not JSON is an error naming it)."""
    if not path.is_file():
        return []
    out = []
    for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if text.strip():
            try:
                out.append(json.loads(text))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: line {n}: not valid JSON ({exc.msg})") from None
    return out


def _tasks(domain: Domain, wanted: list[str] | None, manifests: list[Manifest]) -> list[str]:
    ids = [t.id for t in domain.tasks]
    mine = [m for m in manifests if m.domain.partition("@")[0] == domain.name]
    if mine:
        mine[0].check(domain, None)
        ids = [i for i in ids if i in set(mine[0].valid_tasks)]
    if wanted:
        unknown = [t for t in wanted if t not in {x.id for x in domain.tasks}]
        if unknown and len(unknown) == len(wanted):
            raise TaskError(f"{domain.ref} has no task {', '.join(unknown[:5])} (see `toolgym domains`)")
        ids = [i for i in ids if i in set(wanted)]
    return ids


def plan(
    domains: Iterable[str],
    policies: Iterable[str],
    k: int,
    options: Options,
    tasks: list[str] | None = None,
    manifests: list[Manifest] | None = None,
) -> Plan:
    """Every rollout to run; raises (ValueError, ToolgymError) for a bad policy, domain or task."""
    chosen = list(policies)
    for p in chosen:
        parse_policy(p)
    done = {
        (r.get("fingerprint"), r.get("task"), r.get("policy"), r.get("sample"))
        for r in read_lines(Path(options.runs) / RESULTS)
    }
    units, skipped, refs = [], 0, {}
    for ref in domains:
        domain = load_domain(ref)
        refs[ref] = domain.ref
        fingerprint = domain.fingerprint()
        for task in _tasks(domain, tasks, manifests or []):
            for policy in chosen:
                for sample in range(k):
                    if (fingerprint, task, policy, sample) in done:
                        skipped += 1
                    else:
                        units.append((ref, task, policy, sample, options))
    return Plan(units, skipped, refs)


class RolloutSummary(BaseModel):
    runs: str
    results: str
    rollouts: int
    skipped: int = Field(description="rollouts already in the runs folder")
    by_policy: dict[str, dict[str, Any]]
    seconds: float


def run_rollouts(
    domains: Iterable[str],
    policies: Iterable[str],
    k: int = 8,
    runs: str | Path = "runs",
    tasks: list[str] | None = None,
    workers: int = 1,
    executor: Executor = "local",
    on_result: Callable[[dict[str, Any]], None] | None = None,
    manifests: list[Manifest] | None = None,
    **options: Any,
) -> RolloutSummary:
    """Run k rollouts of every task (or `tasks`) of every domain under every policy; see the module doc."""
    opts = Options(runs=str(runs), **options)
    todo = plan(domains, policies, k, opts, tasks, manifests)
    started = time.perf_counter()
    results = Path(runs) / RESULTS
    results.parent.mkdir(parents=True, exist_ok=True)
    lines: list[dict[str, Any]] = []
    if workers <= 1 and executor == "local":
        stream: Iterable[dict[str, Any]] = (rollout_unit(*u) for u in todo.units)
    else:
        stream = (line for _, line in run_units(rollout_unit, todo.units, workers, executor))
    with results.open("a", encoding="utf-8") as fh:
        for line in stream:
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
            fh.flush()
            lines.append(line)
            if on_result is not None:
                on_result(line)
    return RolloutSummary(
        runs=str(runs),
        results=str(results),
        rollouts=len(lines),
        skipped=todo.skipped,
        by_policy=_by_policy(lines),
        seconds=round(time.perf_counter() - started, 3),
    )


def _by_policy(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for policy in sorted({str(r["policy"]) for r in lines}):
        mine = [r for r in lines if r["policy"] == policy]
        scored = [r for r in mine if r["status"] == "scored"]
        out[policy] = {
            "rollouts": len(mine),
            "scored": len(scored),
            "infra": sum(bool(r["infra"]) for r in mine),
            "errors": sum(r["status"] == "error" for r in mine),
            "pass_rate": round(sum(r["reward"] == 1.0 for r in scored) / len(scored), 4) if scored else None,
            "mean_partial": round(sum(r["partial"] for r in scored) / len(scored), 4) if scored else None,
        }
    return out


__all__ = ["VIAS", "Options", "RolloutLine", "RolloutSummary", "plan", "rollout_unit", "run_rollouts"]
