"""What a server is told: one `ServeConfig`, and the tasks it serves as views.

    config = ServeConfig(runs=Path("runs"), fault_rate=0.1, tasks=frozenset({"bank-001"}))
    DomainServer(domain, config)            # or DomainServer(domain, runs="runs", fault_rate=0.1)

The server holds a `TaskView` of each task it serves — id, instruction, seed: what the agent may
read and what starts an episode — never the gold calls, expected states or answer facts, and the
domain it serves holds no tasks at all (`serving_domain`). Which tasks are served is the caller's
choice (`tasks`: e.g. the validated ones of a manifest, which the grading side reads).
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SessionError, TaskError, clip_name
from ..format.taskviews import TaskLike, TaskView
from ..runtime.domain import Domain
from ._httpguard import MAX_BODY_BYTES


@dataclass(frozen=True)
class ServeConfig:
    """Every option of a served domain, in one place (the CLI, the server and its session registry
    read it; nothing passes the options one by one)."""

    #: the task of every session that asks for none (HTTP clients may pick one with ?task=ID)
    task: str | None = None
    #: the episode seed (HTTP: ?seed=N); default: the task's seed, else 0
    seed: int | None = None
    #: the task ids served (None: every task of the domain), e.g. a manifest's validated ones
    tasks: frozenset[str] | None = None
    #: folder of the transcripts, one RUNS/<session>.jsonl each (None: none written)
    runs: Path | None = None
    fault_rate: float = 0.0
    fault_seed: int = 0
    latency_ms: float = 0.0
    #: end sessions idle this many seconds (None: never)
    idle_timeout: float | None = 1800.0
    #: close HTTP connections that have no session this many seconds after their handshake (None: never)
    handshake_timeout: float | None = 300.0
    #: close HTTP connections that take longer to send a request's headers, or its body (seconds)
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    max_sessions: int = 1024
    #: None: `max_sessions` on a loopback address, else a `PER_CLIENT_SHARE` of it (`per_client_limit`)
    max_sessions_per_client: int | None = None
    #: open HTTP connections at most (None: `max_sessions` + `CONNECTION_MARGIN`); one more is refused
    max_connections: int | None = None
    #: fsync the transcript after every record
    durable: bool = False
    allow_origins: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    max_body_bytes: int = MAX_BODY_BYTES
    error_backoff_ms: float = 10.0
    #: answer established HTTP sessions' tool calls on the fast path (`simulator.serve._fastcall`)
    fast_calls: bool = True
    #: in memory and over stdio (one client process), run calls on the event loop rather than in a
    #: worker thread; over HTTP, calls always run in worker threads (one session's slow call never
    #: holds another's)
    inline_calls: bool = True

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise ValueError("max_sessions must be at least 1")
        if self.max_sessions_per_client is not None and self.max_sessions_per_client < 1:
            raise ValueError("max_sessions_per_client must be at least 1")
        if self.max_connections is not None and self.max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ValueError("fault_rate must be between 0 and 1")
        if not (self.header_timeout > 0 and self.body_timeout > 0):
            raise ValueError("header_timeout and body_timeout must be positive")

    def with_options(self, **options: Any) -> ServeConfig:
        """A copy with some options changed (a task for `task` stands for its id; lists for tuples)."""
        if isinstance(options.get("task"), TaskLike):
            options["task"] = options["task"].id
        if options.get("runs") is not None:
            options["runs"] = Path(options["runs"])
        if options.get("tasks") is not None:
            options["tasks"] = frozenset(options["tasks"])
        for name in ("allow_origins", "allow_hosts"):
            if name in options:
                options[name] = tuple(options[name] or ())
        return dataclasses.replace(self, **options)


#: The share of `max_sessions` one client may hold by default on a non-loopback address.
PER_CLIENT_SHARE = 8


def per_client_limit(config: ServeConfig, host: str | None = None) -> int:
    """The sessions one client may hold: `max_sessions_per_client`, else all of `max_sessions` when
    the server listens on a loopback address (or none: in memory, stdio), else an eighth of them
    (at least 1): clients that reach it over a network are many."""
    if config.max_sessions_per_client is not None:
        return config.max_sessions_per_client
    if host is None or _loopback(host):
        return config.max_sessions
    return max(1, config.max_sessions // PER_CLIENT_SHARE)


#: The connections allowed beyond `max_sessions` by default: requests of the stateless protocol
#: (a connection each), connections not yet past their first request, refusals being answered.
CONNECTION_MARGIN = 32


def connection_limit(config: ServeConfig) -> int:
    """The HTTP connections a server keeps open at most: `max_connections`, else one per session
    (official clients hold one) and `CONNECTION_MARGIN` more."""
    if config.max_connections is not None:
        return config.max_connections
    return config.max_sessions + CONNECTION_MARGIN


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class TaskCatalog:
    """The tasks one server serves, by id, as views."""

    def __init__(self, domain: Domain, only: Iterable[str] | None = None):
        wanted = None if only is None else set(only)
        self.domain = domain.name
        self.ref = domain.ref
        self.views = {t.id: TaskView.of(t) for t in domain.tasks if wanted is None or t.id in wanted}
        #: the domain's tasks this server does not serve (ids only: they are no secret)
        self.withheld = frozenset(t.id for t in domain.tasks) - set(self.views)
        if wanted is not None and wanted - set(self.views) - self.withheld:
            missing = ", ".join(repr(t) for t in sorted(wanted - set(self.views)))
            raise TaskError(
                f"domain {domain.ref} has no task {missing} (a served task must be one of its own)"
            )

    def __len__(self) -> int:
        return len(self.views)

    def get(self, task_id: str) -> TaskView:
        """The view of a served task; SessionError saying why one is not served."""
        view = self.views.get(task_id)
        if view is not None:
            return view
        if task_id in self.withheld:
            raise SessionError(
                f"This server serves only validated tasks: task {task_id!r} of {self.ref} is not among "
                f"them (see `toolgym validate {self.domain}`)."
            )
        known = ", ".join(list(self.views)[:10])
        raise SessionError(
            f"Unknown task: domain {self.domain} has no task {clip_name(task_id)!r} (e.g. {known})"
        )


def serving_domain(domain: Domain) -> Domain:
    """The domain without its tasks (what a server holds): a plain `Domain`, even of a graded one,
    with the same compiled tools, tables, seed snapshot and fingerprint (computed first, so
    transcripts still name the domain's version)."""
    domain.fingerprint()
    domain.snapshot()
    values = {f.name: getattr(domain, f.name) for f in dataclasses.fields(Domain) if f.init}
    return Domain(**{**values, "tasks": [], "_task_texts": ()})
