"""The session registry of the MCP server: one isolated episode per MCP session.

A session is created on its first tool call and holds its own `Episode` (its own SQLite copy of
the domain's seed state), its task and seed, and its transcript `RUNS/<name>.jsonl`. It ends when
its MCP session ends (`release`, `end_connection`), after `idle_timeout` seconds idle (`reap`) or
when the server stops (`release_all`); ending writes the transcript's `end` record and closes the
database. An HTTP connection's handshake takes a slot of every cap from its opening request
(`admit`), and the connection ends after `idle_timeout` seconds without a request in flight.
The registry is used from the server's event loop only; it holds no locks of its own.
Over 500 lines: one state (caps, admission, ending), read together. Design: docs/design/serving.md.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CapacityError, SessionError
from ..runtime.domain import Domain
from ..runtime.episode import Episode
from ..runtime.transcript import FileSink
from .labels import Key, sign_record
from .resends import KEEP_AFTER_END, CallMemory
from .serving import ServeConfig, TaskCatalog, TaskView, per_client_limit


def new_handle() -> str:
    """An unguessable episode handle (binds a stateless client's explicit session id)."""
    return secrets.token_urlsafe(18)


#: A session id given by a client (`?session=`): safe as a file name (matched whole).
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


#: How many ended session keys are remembered (a call on one of them is refused, not restarted).
_ENDED_MEMORY = 100_000
#: How many ended sessions keep their last answers (a resend of their last calls is still answered).
_RECENT_MEMORY = 1024

#: What a tool call on a handshake closed unused is told (with the server's capacity label).
HANDSHAKE_CLOSED = (
    "This connection was closed: it made no tool call within {seconds:g} s of its handshake, and the "
    "server frees such connections for others. This is the server's limit, not your mistake: "
    "connect again and call a tool."
)


def check_session_id(value: str) -> str:
    """A client-chosen session id, or SessionError saying what shape it must have."""
    if not isinstance(value, str) or not SESSION_ID.fullmatch(value):
        raise SessionError(
            f"Invalid session id {value[:40]!r}: use 1-128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit."
        )
    return value


def resolve_task(
    tasks: TaskCatalog,
    task_id: str | None,
    seed: str | int | None,
    default_task: TaskView | None = None,
    default_seed: int | None = None,
) -> tuple[TaskView | None, int]:
    """The task and seed of a new session: the request's, else the server's defaults.

    The seed is the request's, else the server's `--seed`, else the task's own seed, else 0.
    Raises SessionError for a task that is unknown or not served, or a seed that is not an integer.
    """
    task = tasks.get(task_id) if task_id else default_task
    if seed is None or seed == "":
        value = default_seed if default_seed is not None else (task.seed if task is not None else 0)
    else:
        try:
            value = int(seed)
        except (TypeError, ValueError):
            raise SessionError(f"Invalid seed {str(seed)[:40]!r}: the seed must be an integer.") from None
    return task, value


class _SessionSink:
    """A transcript file whose header also names the session and its transport, signed by the server.

    The header, every infrastructure-labelled call record and the end record carry a
    `signature` (`simulator.serve.labels`), so scoring can tell the server's word from a forgery.
    """

    def __init__(self, path: Path, extra: dict[str, Any], durable: bool, key: Key):
        self.file = FileSink(path, durable=durable)
        self.extra = extra
        self.session = path.stem
        self.key = key

    def write(self, record: dict[str, Any]) -> None:
        if record.get("type") == "header":
            record = {**record, **self.extra}
        # signed with the session and its task (`simulator.serve.labels`): bound to this rollout
        self.file.write(sign_record(self.key, self.session, self.extra.get("task"), record))

    def close(self) -> None:
        self.file.close()


def yielding(share: float = 0.5, every: float = 0.002) -> Callable[[], None]:
    """A `pause` for work in a worker thread: once the thread has worked `every` seconds since its
    last pause, it sleeps, so that it takes about `share` of a CPU (and of the interpreter's lock)
    from the event loop and the calls beside it."""
    mark = time.perf_counter()

    def pause() -> None:
        nonlocal mark
        worked = time.perf_counter() - mark
        if worked >= every:
            time.sleep(worked * (1 - share) / share)
            mark = time.perf_counter()

    return pause


@dataclass(eq=False)
class Session:
    """One live session: its episode, task, seed, transcript and fault generator."""

    key: str
    name: str
    task: TaskView | None
    seed: int
    episode: Episode
    transcript: Path | None
    sink: _SessionSink | None
    faults: random.Random | None
    reapable: bool = True
    client: str = "local"
    owner: str | None = None  # the mcp-session-id or episode handle an explicit id is bound to
    handle: str | None = None  # a new stateless session's handle, until its first result carries it
    inline: bool = False  # its calls run on the event loop, not in a worker thread (memory, stdio)
    gate: asyncio.Lock = field(default_factory=asyncio.Lock)  # one call at a time
    errors_in_a_row: int = 0  # tool errors in a row (the server's back-off reads it)
    succeeded: bool = False  # whether any call of the session has succeeded
    answered: float = 0.0  # when its last call ended (`simulator.serve._turns`)
    served: float = 0.0  # when its last busy call got its turn (`simulator.serve._turns`)
    cost: float = 0.0  # the CPU seconds its last call took in its worker thread (`simulator.serve._turns`)
    created: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)
    ended: str | None = None
    finished: bool = False  # its end record written and its database freed (`finish`)
    handshake: str | None = None  # the handshake whose slot it uses (`SessionRegistry.admit`)
    connection: str | None = None  # the HTTP connection (`s:<mcp-session-id>`) whose end ends it
    stateful: bool = False  # bound to one stateful MCP connection (its JSON-RPC ids are unique)
    calls: CallMemory = field(
        default_factory=CallMemory
    )  # its answers to resends (`simulator.serve.resends`)

    def note(self, record: dict[str, Any]) -> None:
        """Add a record that is not a call (a resend) to the transcript while it is open."""
        if self.sink is None or self.ended is not None:
            return
        with self.episode.lock:
            self.sink.write(record)

    def close(self, reason: str) -> None:
        """Mark the session ended and `finish` it (idempotent)."""
        if self.ended is not None:
            return
        self.ended = reason
        self.finish()

    def finish(self, pause: Callable[[], None] | None = None) -> None:
        """The costly part of an end, once `ended` is set: the transcript's end record (with the state's
        digest: tens of milliseconds for a database grown to its cap) and the episode's database freed.
        Thread-safe and idempotent: the server runs it in a worker thread, off its event loop, with a
        `pause` (`yielding`) that lets other threads run while the digest is computed."""
        with self.episode.lock:  # wait for a call still running in a worker thread
            if self.finished:
                return
            self.finished = True
            try:
                self.episode.end(self.ended or "session ended", pause)
            finally:
                if self.sink is not None:
                    self.sink.close()
                self.episode.close()


@dataclass(eq=False)
class Handshake:
    """An HTTP connection's slot, from its opening request to its end."""

    client: str
    since: float = field(default_factory=time.monotonic)  # admitted, or its last session ended
    rider: str | None = None  # the key of the live session that uses its slot
    used: bool = False  # a session used it
    active: float = field(default_factory=time.monotonic)  # when its last request ended
    in_flight: int = 0  # its requests being served: they hold its idle countdown


class SessionRegistry:
    """Live sessions by key, created on first use, released on end, reaped when idle.

    Each live session and each handshake takes a slot of `max_sessions` and of its client's
    `max_per_client`, except a session that uses its connection's handshake slot.
    """

    def __init__(self, domain: Domain, config: ServeConfig | None = None, key: Key | None = None):
        config = config if config is not None else ServeConfig()
        self.domain = domain
        self.domain_path = str(domain.path.resolve()) if domain.path is not None else None
        self.config = config
        self.runs = config.runs
        if self.runs is not None:
            self.runs.mkdir(parents=True, exist_ok=True)
        self.max_sessions = config.max_sessions
        self.idle_timeout = config.idle_timeout
        self.fault_rate = config.fault_rate
        self.fault_seed = config.fault_seed
        self.durable = config.durable
        self.key = key if key is not None else Key.generate()
        self.max_per_client = per_client_limit(config)  # (the server sets it for its address)
        self.handshake_timeout = config.handshake_timeout
        self.in_use = 0  # slots taken, of `max_sessions`
        self.per_client: dict[str, int] = {}  # slots taken, by client
        self.live: dict[str, Session] = {}
        self.handshakes: dict[str, Handshake] = {}
        self.closing: list[str] = []  # handshakes reaped: the server closes their connections
        self.bound: dict[str, set[str]] = {}  # a connection's live sessions (they end with it)
        #: sessions ended but not finished, for the server to finish off its event loop (None: `reap`
        #: finishes them itself; the serving server sets a list)
        self.finishing: list[Session] | None = None
        self.on_reap: Callable[[], None] | None = None  # told when `reap` ended anything
        self.closed: OrderedDict[str, None] = OrderedDict()  # handshakes reaped before any call
        self.ended: OrderedDict[str, str] = OrderedDict()
        self.recent: OrderedDict[str, Session] = OrderedDict()  # ended sessions, for late resends
        self.opened = 0
        self.refused = 0

    def __len__(self) -> int:
        return len(self.live)

    def get(self, key: str) -> Session | None:
        """The live session with this key (marked as used), or None.

        Raises SessionError when the key belongs to a session that has ended: a call must never
        silently continue on a fresh state.
        """
        session = self.live.get(key)
        if session is not None:
            session.last_used = time.monotonic()
            return session
        reason = self.ended.get(key)
        if reason is not None:
            raise SessionError(
                f"This session has ended ({reason}); its state is gone. Start a new session to continue."
            )
        return None

    def open(
        self,
        key: str,
        name: str,
        task: TaskView | None,
        seed: int,
        transport: str | None = None,
        reapable: bool = True,
        client: str = "local",
        owner: str | None = None,
        handshake: str | None = None,
        connection: str | None = None,
    ) -> Session:
        """Create the session `key` (a fresh episode and transcript).

        Refuses (CapacityError) past `max_sessions` slots, or past `max_sessions_per_client` for
        this client, unless it uses the free slot of its connection's `handshake`, and on a
        handshake closed unused; refuses (SessionError) a name that already has a transcript in
        RUNS (an id used before a restart never silently starts afresh).
        `reapable` sessions are released after `idle_timeout` seconds without a call; a session of a
        `connection` (`s:<mcp-session-id>`) ends with it (`end_connection`).
        """
        if key in self.live:
            raise ValueError(f"session {key!r} is already open")
        if handshake is not None and handshake in self.closed:
            self.refused += 1
            raise CapacityError(HANDSHAKE_CLOSED.format(seconds=self.handshake_timeout or 0))
        slot = self.handshakes.get(handshake) if handshake is not None else None
        if slot is not None and slot.rider is not None:
            slot = None  # its slot is taken: this session needs its own
        if slot is None:
            self._room_for(client)
        path = self._transcript_path(name) if self.runs is not None else None
        sink = None
        if path is not None:
            extra: dict[str, Any] = {
                "session": path.stem,
                "transport": transport,
                "task": task.id if task else None,
            }
            if self.domain_path is not None:  # a domain served by path can be scored again from it
                extra["domain_path"] = self.domain_path
            sink = _SessionSink(path, extra, self.durable, self.key)
        try:
            episode = self.domain.episode(seed=seed, transcript=sink)  # the sink's header names the task
        except BaseException:
            if sink is not None:
                sink.close()
            raise
        faults = self.key.fault_stream(self.fault_seed, name) if self.fault_rate > 0 else None
        session = Session(
            key=key,
            name=path.stem if path is not None else name,
            task=task,
            seed=seed,
            episode=episode,
            transcript=path,
            sink=sink,
            faults=faults,
            reapable=reapable,
            client=client,
            owner=owner,
        )
        self.live[key] = session
        if slot is not None:
            slot.rider, slot.used, session.handshake = key, True, handshake
        else:
            self._take(client)
        if connection is not None:
            session.connection = connection
            self.bound.setdefault(connection, set()).add(key)
        self.opened += 1
        return session

    def _room_for(self, client: str) -> None:
        """Raise CapacityError unless a slot is free for `client` (idle sessions reaped first)."""
        if self.in_use >= self.max_sessions or self.per_client.get(client, 0) >= self.max_per_client:
            self.reap()
        if self.in_use >= self.max_sessions:
            self.refused += 1
            raise CapacityError(
                f"The server is at its limit of {self.max_sessions} live sessions; no session was "
                "created. This is the server's limit, not your mistake: try again later."
            )
        if self.per_client.get(client, 0) >= self.max_per_client:
            self.refused += 1
            raise CapacityError(
                f"This client already holds {self.max_per_client} live sessions, the most one client "
                "may hold; no session was created. End one of them or try again later."
            )

    def _take(self, client: str) -> None:
        self.in_use += 1
        self.per_client[client] = self.per_client.get(client, 0) + 1

    def _give(self, client: str) -> None:
        self.in_use -= 1
        left = self.per_client.get(client, 1) - 1
        if left > 0:
            self.per_client[client] = left
        else:
            self.per_client.pop(client, None)

    # -- handshakes ---------------------------------------------------------------------------

    def admit(self, key: str, client: str) -> Handshake:
        """Count a connection being opened as a session of `client` (CapacityError: no room)."""
        self._room_for(client)
        self._take(client)
        handshake = self.handshakes[key] = Handshake(client)
        return handshake

    def established(self, key: str, new_key: str) -> None:
        """The connection admitted as `key` got its MCP session id: it is `new_key` from now on."""
        handshake = self.handshakes.pop(key, None)
        if handshake is not None:
            handshake.active = time.monotonic()  # (its idle countdown starts with its first answer)
            self.handshakes[new_key] = handshake

    def end_handshake(self, key: str) -> None:
        """The connection `key` ended (or was never established): its slot is free, or stays with
        the live session that uses it until that session ends."""
        handshake = self.handshakes.pop(key, None)
        if handshake is None:
            return
        rider = self.live.get(handshake.rider) if handshake.rider is not None else None
        if rider is not None and rider.handshake == key:
            rider.handshake = None
        else:
            self._give(handshake.client)

    def end_connection(self, key: str, reason: str = "session ended") -> list[Session]:
        """The HTTP connection `key` (`s:<mcp-session-id>`) ended: release its live sessions, whose
        end records and databases are left to the caller (`Session.finish`), and its handshake."""
        ended = [s for k in sorted(self.bound.pop(key, ())) if (s := self.release(k, reason, finish=False))]
        self.end_handshake(key)
        return ended

    def _expire_connections(self, now: float) -> list[Session]:
        """End the HTTP connections with no request in flight for `idle_timeout` (the server then
        closes them: `closing`); returns the sessions that ended with them, not yet finished."""
        if self.idle_timeout is None:
            return []
        cutoff = now - self.idle_timeout
        idle = [
            k
            for k, h in self.handshakes.items()
            if not h.in_flight and h.active < cutoff and k.startswith("s:")
        ]
        ended: list[Session] = []
        for key in idle:
            ended += self.end_connection(key)
            self.closing.append(key)
        return ended

    def _reap_handshakes(self, now: float) -> None:
        """Free the slots of established handshakes without a session for `handshake_timeout`."""
        if self.handshake_timeout is None:
            return
        cutoff = now - self.handshake_timeout
        idle = [
            k
            for k, h in self.handshakes.items()
            if h.rider is None and h.since < cutoff and k.startswith("s:")
        ]
        for key in idle:
            handshake = self.handshakes.pop(key)
            self._give(handshake.client)
            self.closing.append(key)
            if not handshake.used:
                self.closed[key] = None
                while len(self.closed) > _ENDED_MEMORY:
                    self.closed.popitem(last=False)

    def _transcript_path(self, name: str) -> Path:
        """`RUNS/<name>.jsonl`, created exclusively; SessionError when it exists (an id used before)."""
        assert self.runs is not None
        path = self.runs / f"{name}.jsonl"
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        except FileExistsError:
            raise SessionError(
                f"Session id {name!r} was used before (its transcript {path.name} exists in the runs "
                "folder); a session never restarts on a fresh state. Choose a new session id."
            ) from None
        return path

    def inject_fault(self, session: Session) -> bool:
        """Whether this call of the session fails with an injected fault (seeded per session)."""
        return session.faults is not None and session.faults.random() < self.fault_rate

    def release(self, key: str, reason: str = "session ended", *, finish: bool = True) -> Session | None:
        """End the session `key` if it is live; later calls with the key are refused.

        `finish=False` leaves its end record and database to the caller (`Session.finish`)."""
        session = self.live.pop(key, None)
        if session is None:
            return None
        handshake = self.handshakes.get(session.handshake) if session.handshake is not None else None
        if handshake is not None and handshake.rider == key:
            handshake.rider, handshake.since = None, time.monotonic()
        else:
            self._give(session.client)
        if session.connection is not None:
            bound = self.bound.get(session.connection)
            if bound is not None:
                bound.discard(key)
                if not bound:
                    del self.bound[session.connection]
        self._remember(key, reason)
        if session.ended is None:
            session.ended = reason
        if finish:
            session.finish()
        if session.calls:  # it answered identified calls: keep its last answers a while
            session.calls.trim(KEEP_AFTER_END)
            self.recent[key] = session
            while len(self.recent) > _RECENT_MEMORY:
                self.recent.popitem(last=False)
        return session

    def _remember(self, key: str, reason: str) -> None:
        self.ended[key] = reason
        self.ended.move_to_end(key)
        while len(self.ended) > _ENDED_MEMORY:
            self.ended.popitem(last=False)

    def reap(self, now: float | None = None) -> list[str]:
        """Release every reapable session idle for longer than `idle_timeout` (returns their keys),
        then the HTTP connections idle as long (with the sessions still bound to them) and the
        handshakes idle past `handshake_timeout` (both go to `closing`). The sessions are finished
        here, or go to `finishing` when the server finishes them."""
        now = time.monotonic() if now is None else now
        idle: list[str] = []
        ended: list[Session] = []
        closing = len(self.closing)
        if self.idle_timeout is not None:
            cutoff = now - self.idle_timeout
            idle = [k for k, s in self.live.items() if s.reapable and s.last_used < cutoff]
            reason = f"idle for more than {self.idle_timeout:g} s"
            ended = [s for key in idle if (s := self.release(key, reason, finish=False))]
            ended += self._expire_connections(now)
        if self.finishing is not None:
            self.finishing += ended
        else:
            for session in ended:
                session.finish()
        self._reap_handshakes(now)
        if self.on_reap is not None and (ended or len(self.closing) > closing):
            self.on_reap()
        return idle

    def release_all(self, reason: str = "server stopped") -> None:
        """End every live session (at server shutdown), finish those left to finish, and forget
        ended keys and handshakes."""
        for key in list(self.live):
            self.release(key, reason)
        pending, self.finishing = self.finishing, None
        for session in pending or ():
            session.finish()
        self.ended.clear()
        self.recent.clear()
        self.handshakes.clear()
        self.bound.clear()
        self.closed.clear()
        self.per_client.clear()
        self.in_use = 0
