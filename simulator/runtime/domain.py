"""A loaded domain: its spec, compiled tables and tools, seed rows, task views and seed snapshot.

The seed snapshot (a serialized SQLite database) is built once per domain and process; every
episode starts on its own copy of it: a new one, or the connection of a closed episode of the
domain put back to the seed state (`simulator.runtime._pool`), whose statements are already prepared.
Of its tasks a domain holds what the runtime needs (`TaskView`: id, instruction, seed); the gold
calls and answer facts are the grading side's (`scoring.tasks`).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..codegen.fastschema import compile_check
from ..errors import TaskError
from ..format.spec import DomainSpec, Tool
from ..format.taskviews import TaskLike
from ..plan.runsteps import CompiledTool
from ..plan.tables import META_TABLES, TableInfo, ddl
from ._pool import ConnectionPool
from .budget import Budget
from .clock import format_time, parse_time, renderer

if TYPE_CHECKING:
    from .episode import Episode
    from .observe import ReadObserver
    from .transcript import TranscriptSink

#: seed rows a domain keeps once `seed_lookup` has read them (emptied when over)
SEED_ROWS_KEPT = 100_000
#: rendered clock texts a domain keeps (the first this many tick counts)
CLOCK_TEXTS_KEPT = 4096
#: `seed_lookup`: a key not read yet (a read key's row may be None: not in the seed)
_UNREAD: Any = object()


@dataclass
class Domain:
    """A loaded, compiled domain. Create episodes with `episode()`."""

    spec: DomainSpec
    path: Path | None
    policy: str
    tables: dict[str, TableInfo]
    tools: dict[str, CompiledTool]
    validators: dict[str, Any]
    seed_rows: dict[str, list[dict[str, Any]]]
    #: its tasks as the runtime knows them (`TaskView`s; a graded domain's are full `scoring` tasks)
    tasks: Sequence[TaskLike]
    _snapshot: bytes | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _fingerprint: str | None = field(default=None, repr=False)
    _seed_index: dict[str, dict[Any, tuple[Any, ...]]] | None = field(default=None, repr=False)
    _seed_digest: str | None = field(default=None, repr=False)
    #: what one call of an episode may do (episodes may be given their own)
    budget: Budget = field(default_factory=Budget)
    _pool: ConnectionPool | None = field(default=None, repr=False)
    #: whether its tools run generated code (False: the reference path, `load_domain(..., generated=False)`)
    generated: bool = True
    #: each task line's canonical text, what `fingerprint` hashes of the tasks (`simulator.format._loadtasks`;
    #: a served domain holds none, `serving_domain`)
    _task_texts: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        self.clock_start = parse_time(self.spec.clock.start)
        self.render_time = renderer(self.spec.clock.start, self.spec.clock.format)  # `$now` as text
        self._clock_texts: dict[int, str] = {}  # `clock_text` by tick count
        # the classic UTC rendering past the kept tick counts: each day's text by day, the start's
        # second of its day (None: another rendering, always through `render_time`); all bounded
        start = self.clock_start
        classic = self.render_time is format_time and start.utcoffset() == UTC.utcoffset(None)
        self._day_texts: dict[int, str] | None = {} if classic else None
        self._second_texts: dict[int, str] = {}  # its time of day's text, by second of the day
        self._start_second = start.hour * 3600 + start.minute * 60 + start.second
        #: the seed rows `seed_lookup` read, by table (None: not in the seed)
        self._seed_found: dict[str, dict[Any, tuple[Any, ...] | None]] = {name: {} for name in self.tables}
        #: each tool's fast argument check (none on the reference path: the validator decides)
        self.checks = (
            {name: compile_check(t.spec.input_schema) for name, t in self.tools.items()}
            if self.generated
            else {}
        )
        for name, info in self.tables.items():  # a counter continues after the seed's largest number
            info.ids = info.ids.with_floor(row.get(info.pk) for row in self.seed_rows.get(name, ()))
        self._tasks_by_id = {t.id: t for t in self.tasks}
        #: whether any table has a composite key (its change-log keys are stored as JSON text)
        self.composite_keys = any(t.composite for t in self.tables.values())

    def clock_text(self, ticks: int) -> str:
        """`$now` after `ticks` write calls: clock.start + ticks * tick_seconds, rendered (once per
        tick count: every episode of the domain reads the same few)."""
        text = self._clock_texts.get(ticks)
        if text is None:
            if self._day_texts is not None:  # the classic UTC form: the day's text + H:M:S by arithmetic
                day, second = divmod(self._start_second + ticks * self.spec.clock.tick_seconds, 86400)
                head = self._day_texts.get(day)
                if head is None:
                    head = self._day_head(day)
                if head is not None:
                    tail = self._second_texts.get(second)
                    if tail is None:
                        hour, rest = divmod(second, 3600)
                        tail = f"{hour:02d}:{rest // 60:02d}:{rest % 60:02d}Z"
                        if len(self._second_texts) < CLOCK_TEXTS_KEPT:
                            self._second_texts[second] = tail
                    return head + tail
            text = self.render_time(
                self.clock_start + timedelta(seconds=ticks * self.spec.clock.tick_seconds)
            )
            if len(self._clock_texts) < CLOCK_TEXTS_KEPT:
                self._clock_texts[ticks] = text
        return text

    def _day_head(self, day: int) -> str | None:
        """The classic rendering's text before the time of day `day` (days after the start's date),
        rendered by `format_time` itself and kept (bounded); None when out of datetime's range."""
        try:
            midnight = self.clock_start.replace(hour=0, minute=0, second=0) + timedelta(days=day)
        except OverflowError:
            return None  # the general rendering raises as it always has
        head = format_time(midnight)[: -len("00:00:00Z")]
        texts = self._day_texts
        if texts is not None and len(texts) < CLOCK_TEXTS_KEPT:
            texts[day] = head
        return head

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def version(self) -> str:
        return self.spec.version

    @property
    def ref(self) -> str:
        """`name@version`."""
        return f"{self.spec.name}@{self.spec.version}"

    def tool_specs(self) -> list[Tool]:
        return [t.spec for t in self.tools.values()]

    def task(self, task_id: str) -> TaskLike:
        try:
            return self._tasks_by_id[task_id]
        except KeyError:
            known = ", ".join(list(self._tasks_by_id)[:10])
            raise TaskError(f"domain {self.name} has no task {task_id!r} (e.g. {known})") from None

    def row_count(self) -> int:
        return sum(len(rows) for rows in self.seed_rows.values())

    def snapshot(self) -> bytes:
        """The serialized seed database (built on first use, then shared)."""
        if self._snapshot is None:
            with self._lock:
                if self._snapshot is None:
                    self._snapshot = self._build_snapshot()
        return self._snapshot

    def _build_snapshot(self) -> bytes:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        try:
            conn.execute("PRAGMA foreign_keys=OFF")
            metadata = next(iter(self.tables.values())).sa_table.metadata
            for statement in ddl(metadata):
                conn.execute(statement)
            conn.executescript(META_TABLES)
            conn.execute("BEGIN")
            for table in metadata.sorted_tables:
                info = self.tables[table.name]
                rows = self.seed_rows.get(table.name, [])
                conn.executemany(info.insert, ({c: info.encode(c, r[c]) for c in info.columns} for r in rows))
            conn.execute("COMMIT")
            conn.execute("VACUUM")
            return conn.serialize()
        finally:
            conn.close()

    def episode(
        self,
        seed: int = 0,
        task: str | TaskLike | None = None,
        transcript: TranscriptSink | None = None,
        budget: Budget | None = None,
        observer: ReadObserver | None = None,
    ) -> Episode:
        """A fresh, isolated episode on this domain's seed state (calls under `budget`, default the domain's)."""
        from .episode import Episode

        return Episode(self, seed=seed, task=task, transcript=transcript, budget=budget, observer=observer)

    def connection(self) -> sqlite3.Connection:
        """A connection holding the seed state: an idle one of an earlier episode of this domain
        (restored to the seed state, `simulator.runtime._pool`), else a new copy of the snapshot."""
        return self.pool().take(self.snapshot())

    def release(
        self, conn: sqlite3.Connection, clean: bool = True, changes: Iterable[tuple[str, Any]] = ()
    ) -> None:
        """Take back a closed episode's connection for a later episode, or close it (always when
        not `clean`: something wrote to it outside the change log). `changes`: (table, key) of rows
        the episode changed that its change log does not hold yet."""
        if clean:
            self.pool().give(conn, self.snapshot(), changes)
        else:
            conn.close()

    def pool(self) -> ConnectionPool:
        """The domain's idle episode connections."""
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    metadata = next(iter(self.tables.values())).sa_table.metadata
                    self._pool = ConnectionPool(self.tables, [t.name for t in metadata.sorted_tables])
        return self._pool

    def seed_index(self) -> dict[str, dict[Any, tuple[Any, ...]]]:
        """{table: {key: row as stored}} of the seed state (built on first use)."""
        if self._seed_index is None:
            conn = sqlite3.connect(":memory:")
            try:
                conn.deserialize(self.snapshot())
                self._seed_index = {
                    name: {info.key_of(row): row for row in conn.execute(info.select_all)}
                    for name, info in self.tables.items()
                }
            finally:
                conn.close()
        return self._seed_index

    def seed_lookup(self, table: str, keys: Iterable[Any]) -> dict[Any, tuple[Any, ...]]:
        """{key: row as stored} of the rows of `table` with these keys in the seed state (absent
        keys left out): from the seed index when it is built, else read by key (and kept), so
        that a diff of a few rows does not build the whole index."""
        if self._seed_index is not None:
            index = self._seed_index[table]
            return {k: index[k] for k in keys if k in index}
        info, known = self.tables[table], self._seed_found[table]
        wanted = list(keys)
        # (one .get per key: another thread may empty `known` between an `in` and a `[k]`)
        rows = {k: row for k in wanted if (row := known.get(k, _UNREAD)) is not _UNREAD}
        missing = [k for k in wanted if k not in rows]
        if missing:
            read = self.pool().read_seed(
                self.snapshot(), ((info.select_by_pk, info.key_params(k)) for k in missing)
            )
            if sum(map(len, self._seed_found.values())) + len(missing) > SEED_ROWS_KEPT:
                for kept in self._seed_found.values():
                    kept.clear()
            for key, row in zip(missing, read, strict=True):
                rows[key] = known[key] = row
        return {k: row for k in wanted if (row := rows[k]) is not None}

    def query_seed(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        """Every row a read statement finds in the seed state (on the pool's seed connection, so
        no episode's statement cache holds it)."""
        found: list[tuple[Any, ...]] = self.pool().read_seed(self.snapshot(), [(sql, params)], every=True)[0]
        return found

    def seed_digest(self) -> str:
        """A SHA-256 of every seed row, table by table in key order."""
        if self._seed_digest is None:
            h = hashlib.sha256(b"toolgym-state-v1")
            for name, rows in sorted(self.seed_index().items()):
                h.update(f"\x00{name}\x00".encode())
                h.update(repr(list(rows.values())).encode())
            self._seed_digest = h.hexdigest()
        return self._seed_digest

    def fingerprint(self) -> str:
        """Version plus a hash of schema, tools, seed snapshot and tasks.

        The spec is hashed without the fields left at their defaults, so a new optional field of
        the format (added with a default that keeps today's meaning) leaves every existing
        domain's fingerprint, and the manifests validated against it, as they were. The `snapshot`
        layout is left out: it shapes exports only, never a tool's behaviour or a state.
        """
        if self._fingerprint is None:
            with self._lock:
                if self._fingerprint is None:
                    self._fingerprint = self._hash()
        return self._fingerprint

    def _hash(self) -> str:
        """The fingerprint: the spec (defaults left out), policy, seed rows and task lines, hashed."""
        h = hashlib.sha256()
        spec = self.spec.model_dump_json(by_alias=True, exclude_defaults=True, exclude={"snapshot"})
        h.update(spec.encode())
        h.update(self.policy.encode())
        # each row as json.dumps(row, sort_keys=True) gives it, one encoder for all of them
        encode = json.JSONEncoder(sort_keys=True, check_circular=False).encode
        for name in sorted(self.seed_rows):
            h.update(name.encode())
            h.update("".join(map(encode, self.seed_rows[name])).encode())
        for text in self._task_texts:
            h.update(text.encode())
        return f"{self.spec.version}-{h.hexdigest()[:16]}"
