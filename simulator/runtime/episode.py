"""The episode: one rollout's own SQLite database, its change log, ids and clock.

An episode loads its domain's seed snapshot into a private in-memory database. Every call is
atomic: arguments are checked against the tool's JSON Schema, the operation runs in a transaction,
and any error rolls it back, leaving the state exactly as it was. The clock, id counters and
change log are kept in memory and written to hidden `_toolgym_*` tables before anything reads them.
Arguments nested deeper than `MAX_NESTING` are refused; the database may grow only
`Budget.growth_bytes` beyond the seed. Design notes: docs/design/engine.md.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..errors import (
    CallFailed,
    ErrorKind,
    InfraError,
    OperationError,
    StateTooLarge,
    StorageError,
    ToolError,
    clip_name,
)
from ..format.taskviews import TaskLike
from ..plan.ids import MAX_TRIES
from ..plan.tables import TableInfo, ValueProblem
from ._callargs import _clip_nesting, describe_schema_errors, shape_problem
from ._episodestate import EpisodeState
from .budget import Budget, Meter
from .observe import ReadObserver

if TYPE_CHECKING:
    from ..plan.runsteps import CompiledTool
    from .domain import Domain
    from .transcript import TranscriptSink


#: What a closed episode's `conn` is: a closed connection, so that any use fails as it always did
#: (its own connection has gone back to the domain for a later episode).
_CLOSED = sqlite3.connect(":memory:", check_same_thread=False)
_CLOSED_CURSOR = _CLOSED.cursor()
_CLOSED.close()


def page_limit(snapshot: bytes, growth_bytes: int) -> int:
    """SQLite's `max_page_count` for a database that starts as `snapshot` and may grow `growth_bytes`."""
    size = int.from_bytes(snapshot[16:18], "big")  # the database header's page size (1: 65,536)
    size = 65536 if size == 1 else size
    return len(snapshot) // size + -(-growth_bytes // size)


class Episode(EpisodeState):
    """One rollout on a domain: call tools, read the state's digest, export the tables."""

    def __init__(
        self,
        domain: Domain,
        seed: int = 0,
        task: str | TaskLike | None = None,
        transcript: TranscriptSink | None = None,
        budget: Budget | None = None,
        observer: ReadObserver | None = None,
    ):
        self.domain = domain
        self.meter = Meter(budget or domain.budget)  # what one call may do (simulator.runtime.budget)
        self.seed = seed
        self.task: TaskLike | None = domain.task(task) if isinstance(task, str) else task
        self.conn = domain.connection()
        self._page_limit = (
            f"PRAGMA max_page_count = {page_limit(domain.snapshot(), self.meter.budget.growth_bytes)}"
        )
        self.conn.execute(self._page_limit)
        self.cursor = self.conn.cursor()  # (statements run on it need no cursor of their own)
        self._written = self.conn.total_changes  # rows written by calls so far (see `close`)
        self.lock = threading.RLock()
        self.calls = 0
        self._recorded = False
        self.reads = observer  # told what calls read (the grading side traces footprints with it)
        # the clock and id counters (mirrors of _toolgym_meta, empty in every seed state: no tick
        # yet, each counter at its table's floor), and what calls changed: a running call's
        # (pending), and committed calls' not yet written to the _toolgym_* tables (`_save`)
        self._tick_count = 0
        self._now: str | None = None
        self._counters: dict[str, int] = {}
        self._pending_counters: dict[str, int] = {}
        self._pending_changes: set[tuple[str, Any]] = set()
        self._unsaved_meta: dict[str, int] = {}
        self._unsaved_changes: set[tuple[str, Any]] = set()
        # the next integer key (max + 1) of tables keyed by one integer column, known for as long as
        # nothing but this episode's own generated creates changes the table (`changed` forgets
        # it); a running call's (None: forgotten), and the key it handed out and has not stored yet
        self._int_keys: dict[str, int] = {}
        self._pending_int_keys: dict[str, int | None] = {}
        self._handed: tuple[str, Any] | None = None
        # a create's first key not looked up (`next_id(probe=False)`): its counter and the count before
        self._probe_from: tuple[str, int] | None = None
        self.cache: dict[tuple[str, Any], Any] = {}  # the current call's rows, by (table, key)
        self.transcript = transcript
        if transcript is not None:
            transcript.write(
                {
                    "type": "header",
                    "domain": domain.name,
                    "version": domain.version,
                    "fingerprint": domain.fingerprint(),
                    "task": self.task.id if self.task else None,
                    "seed": seed,
                    "started_at": datetime.now(UTC).isoformat(),
                }
            )

    # -- the runtime interface the compiled steps use ------------------------------------------

    def now(self) -> str:
        """The simulated clock: start + ticks * tick_seconds (ticks = successful write calls)."""
        if self._now is None:
            self._now = self.domain.clock_text(self._tick_count)
        return self._now

    def next_id(self, table: TableInfo, row: dict[str, Any] | None = None, probe: bool = True) -> Any:
        """A deterministic new key for `table.pk` (simulator.plan.ids): max+1 for an integer column (within
        the rest of a composite key, taken from `row`); else the table's id scheme's n-th candidate
        under the episode's seed, skipping keys that exist.

        `probe=False`: the next candidate, not looked up (a create inserts it and, should anything
        fail, asks again with `probe=True`, which looks the candidates up from where that create
        started: the same key, or the same error, as always)."""
        parents: tuple[Any, ...] = ()
        if table.composite:
            try:
                parents = tuple(table.encode(c, (row or {}).get(c)) for c in table.key[:-1])
            except ValueProblem as exc:
                raise ToolError(f"invalid value: {exc}") from None
        if table.next_int_key:
            if parents:
                return self.conn.execute(table.next_int_key, table.key_params((*parents, None))).fetchone()[0]
            name, pending = table.name, self._pending_int_keys
            n = pending[name] if name in pending else self._int_keys.get(name)
            if n is None:
                n = self.conn.execute(table.next_int_key, {}).fetchone()[0]
            pending[name] = n + 1
            self._handed = (name, n)
            return n
        key = table.counter
        n = self._pending_counters.get(key)
        if n is None:
            n = self._counters.get(key)
        if n is None:
            n = table.ids.floor
        if not probe:
            if self._probe_from is None or self._probe_from[0] != key:
                self._probe_from = (key, n)
            self._pending_counters[key] = n + 1
            return table.ids.key(self.seed, n + 1)
        if self._probe_from is not None and self._probe_from[0] == key:
            n = self._probe_from[1]
        self._probe_from = None
        for _ in range(MAX_TRIES):
            n += 1
            candidate = table.ids.key(self.seed, n)
            params = table.key_params((*parents, candidate) if parents else candidate)
            if self.conn.execute(table.select_by_pk, params).fetchone() is None:
                self._pending_counters[key] = n
                return candidate
        raise ToolError(
            f"cannot create a {table.name} row: its id scheme found no free key in {MAX_TRIES} tries; "
            f"give {table.pk} explicitly"
        )

    def changed(self, table: str, pk: Any) -> None:
        at = (table, pk)
        self._pending_changes.add(at)
        self._probe_from = None  # (a create's unprobed key was stored)
        handed = self._handed
        if handed is not None and handed == at:
            self._handed = None  # the generated create: the next key stays known
        elif table in self._int_keys or table in self._pending_int_keys:
            self._pending_int_keys[table] = None  # any other change: ask SQLite again

    def touched(self, table: str, pk: Any) -> None:
        """`changed` for a row updated in place, its key unchanged: no key of its table can have
        changed, so the next integer key stays known (and no create is between its key and its
        row: there is no unprobed or handed key to settle)."""
        self._pending_changes.add((table, pk))

    @property
    def written_outside_calls(self) -> bool:
        """Whether something other than calls wrote to the database (the change log may not say what)."""
        return self.conn.total_changes != self._written

    # -- calls --------------------------------------------------------------------------------

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """Run one tool call atomically. Returns the result or raises ToolError (state unchanged).

        The call's transcript record is written before its transaction commits: if it cannot be
        written, the call is rolled back and fails with a `StorageError` (the agent is never told
        "nothing changed" about a change that stayed).
        """
        if name not in self.domain.tools:
            name = clip_name(name)  # (an unknown name is repeated in errors and records, bounded)
        with self.lock:
            started = 0.0 if self.transcript is None else time.perf_counter()  # (a record's duration)
            args = {} if arguments is None else arguments
            self._recorded = False
            conn = self.conn
            in_step = conn.total_changes == self._written  # (a write outside calls stays noticed)
            try:
                with self.meter.run(conn):
                    try:
                        result = self._call(name, args, started)
                    finally:
                        if in_step:
                            self._written = conn.total_changes
            except CallFailed as exc:
                if not self._recorded:
                    self._record(name, args, started, error=str(exc), kind=exc.kind)
                raise
            except Exception as exc:
                if not self._recorded:
                    self._record(
                        name, args, started, error=f"{type(exc).__name__}: {exc}", kind=ErrorKind.INTERNAL
                    )
                raise
            if not self._recorded:
                try:
                    self._record(name, args, started, result=result)
                except Exception as exc:
                    raise StorageError(
                        f"The call to {name} could not be recorded ({type(exc).__name__})."
                    ) from exc
            return result

    def _call(self, name: str, args: Any, started: float) -> Any:
        tool = self.domain.tools.get(name)
        if tool is None:
            names = ", ".join(sorted(self.domain.tools))
            raise ToolError(f"Unknown tool {name!r}. Available tools: {names}")
        if not isinstance(args, dict):
            raise ToolError(
                f"Invalid arguments for {name}: expected a JSON object, got {type(args).__name__}"
            )
        problem = shape_problem(args)
        if problem is not None:  # (recorded here: the record holds a writable copy of the arguments)
            error = ToolError(f"Invalid arguments for {name}: {problem}; nothing changed.")
            self._record(name, _clip_nesting(args), started, error=str(error), kind=error.kind)
            self._recorded = True
            raise error
        check = self.domain.checks.get(name)
        if not (check(args) if check is not None else self.domain.validators[name].is_valid(args)):
            errors = list(self.domain.validators[name].iter_errors(args))
            if errors:  # (the fast check agrees with jsonschema; a test holds it to that)
                raise ToolError(describe_schema_errors(name, errors))
        self.cache.clear()
        if not tool.writes:
            return self._execute(tool, name, args)
        conn = self.conn
        if conn.total_changes != self._written:  # written outside a call: known keys may be stale
            self._int_keys.clear()
        ticks = self._tick_count
        conn.execute("BEGIN")
        try:
            result = self._execute(tool, name, args)
            self._record_before_commit(name, args, started, result)
        except BaseException:
            if conn.in_transaction:  # (SQLite rolls back by itself on some errors: a full database)
                conn.execute("ROLLBACK")
            self._forget_pending()
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:  # the record said "ok": say that it did not happen after all
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            self._forget_pending()
            if self.transcript is not None:
                with contextlib.suppress(Exception):
                    void = {"type": "void", "index": self.calls - 1, "tool": name, "arguments": args}
                    self.transcript.write({**void, "reason": str(exc)})
            raise StorageError(
                f"The call to {name} could not be saved ({exc}); nothing changed. Retry it."
            ) from None
        self._tick_count = ticks + 1
        self._now = None
        unsaved = self._unsaved_meta
        unsaved["ticks"] = ticks + 1
        if self._pending_counters:
            self._counters.update(self._pending_counters)
            unsaved.update(self._pending_counters)
            self._pending_counters.clear()
        if self._pending_changes:
            self._unsaved_changes.update(self._pending_changes)
            self._pending_changes.clear()
        if self._pending_int_keys:
            for table, n in self._pending_int_keys.items():
                if n is None:
                    self._int_keys.pop(table, None)
                else:
                    self._int_keys[table] = n
            self._pending_int_keys.clear()
        self._handed = self._probe_from = None
        return result

    def _forget_pending(self) -> None:
        """A rolled-back call's changes, counters and keys never happened."""
        self._pending_changes.clear()
        self._pending_counters.clear()
        self._pending_int_keys.clear()
        self._handed = self._probe_from = None

    def _execute(self, tool: CompiledTool, name: str, args: dict[str, Any]) -> Any:
        """Run the operation. The backstop of the rule "what the agent's arguments cause is its tool
        error": an exception no precise check turned into a ToolError becomes an OperationError
        (the caller rolls the call back). Only what the server itself does passes through: running
        out of memory, and an interrupted statement (a budget the server imposed)."""
        try:
            return tool.execute(self, args)
        except (ToolError, InfraError, MemoryError):
            raise
        except sqlite3.OperationalError as exc:
            if str(exc) == "interrupted":
                raise
            if exc.sqlite_errorcode == sqlite3.SQLITE_FULL:  # at `max_page_count`
                raise StateTooLarge(name, self.meter.budget.growth_bytes) from None
            raise OperationError(name, exc) from exc
        except Exception as exc:
            raise OperationError(name, exc) from exc

    def _record_before_commit(self, name: str, args: Any, started: float, result: Any) -> None:
        """Write a write call's record inside its transaction; a failure rolls the call back."""
        if self.transcript is None:  # (nothing to write: only counted)
            self.calls += 1
            self._recorded = True
            return
        try:
            self._record(name, args, started, result=result)
        except Exception as exc:
            self._recorded = True  # the record (or the sink) is broken: do not try again
            raise StorageError(
                f"The call to {name} could not be recorded ({type(exc).__name__}); nothing changed."
            ) from exc
        self._recorded = True

    def fail(self, name: str, arguments: dict[str, Any], message: str, injected: bool = True) -> InfraError:
        """Record an infrastructure failure of a call that was not run (the state is untouched)."""
        error = InfraError(message, injected=injected)
        with self.lock:
            self._record(name, arguments, time.perf_counter(), error=message, kind=error.kind)
        return error

    def say(self, content: str, role: str = "assistant") -> None:
        """Record a message of the agent (its final message carries answer facts)."""
        if self.transcript is not None:
            self.transcript.write({"type": "message", "role": role, "content": content})

    def _record(
        self,
        name: str,
        args: Any,
        started: float,
        result: Any = None,
        error: str | None = None,
        kind: ErrorKind | None = None,
    ) -> None:
        index = self.calls
        if self.transcript is None:
            self.calls += 1
            return
        record = {
            "type": "call",
            "index": index,
            "tool": name,
            "arguments": args,
            "ok": error is None,
            "result": result,
            "error": error,
            "error_kind": kind,
            "duration_us": round((time.perf_counter() - started) * 1e6, 1),
        }
        self.transcript.write(record)
        self.calls += 1

    def end(self, reason: str = "done", pause: Callable[[], None] | None = None) -> None:
        """Write the transcript's end record, with the state's digest (`pause`: see `digest`)."""
        if self.transcript is not None:
            self.transcript.write(
                {
                    "type": "end",
                    "calls": self.calls,
                    "digest": self.digest(pause),
                    "reason": reason,
                    "ended_at": datetime.now(UTC).isoformat(),
                }
            )

    def close(self) -> None:
        """Hand the database back to the domain (idempotent); the episode cannot be used after.

        The domain reuses the connection only when every row written on it was written by a call
        (and so is in the change log): a write through `conn` directly closes it instead."""
        with self.lock:
            conn, self.conn = self.conn, _CLOSED
            if conn is _CLOSED:
                return
            self.cursor.close()
            self.cursor = _CLOSED_CURSOR
            self.meter.release()
            # the pool restores the seed state from the change log and the changes not saved to it
            changes, self._unsaved_changes = self._unsaved_changes, set()
            self._unsaved_meta = {}
            self.domain.release(conn, clean=conn.total_changes == self._written, changes=changes)

    def __enter__(self) -> Episode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
