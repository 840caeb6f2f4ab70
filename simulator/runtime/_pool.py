"""Idle episode connections of a domain, put back to the seed state for its next episodes.

A closed episode's connection goes back to its domain's pool, which restores in place the rows its
change log names (the seed's values and rowids; id counters, clock and change log emptied; never by
deserializing, which would free the schema under its prepared statements) and keeps it, statements
and all, for a later episode. It is closed instead when it cannot be restored exactly (written
outside a call, schema changed, in a transaction, restore failed) or the pool is full; hooks are
cleared. A kept statement's SQLite step count goes on from earlier episodes (simulator.runtime.budget says
what that changes). A cursor a caller holds on `ep.conn` must not outlive its episode."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..plan.tables import TableInfo, install_functions

#: The idle connections a domain keeps for its next episodes: at most this many ...
IDLE_CONNECTIONS = 8
#: ... and at most this many bytes of databases in them (snapshot size times their number)
IDLE_BYTES = 256 * 2**20
#: Prepared statements a connection keeps (sqlite3's cache; a domain's tools use a few dozen)
CACHED_STATEMENTS = 256

_SCHEMA = "SELECT 1 FROM _toolgym_meta LIMIT 0"
_SCHEMA_VERSION = "PRAGMA schema_version"
_CHANGES = "SELECT tbl, pk FROM _toolgym_changes"
_CLEAR = ("DELETE FROM _toolgym_changes", "DELETE FROM _toolgym_meta")


def new_connection(snapshot: bytes) -> sqlite3.Connection:
    """A connection holding its own copy of the snapshot, with the episode runtime's settings."""
    conn = sqlite3.connect(
        ":memory:", isolation_level=None, check_same_thread=False, cached_statements=CACHED_STATEMENTS
    )
    try:
        conn.deserialize(snapshot)
        conn.execute("PRAGMA foreign_keys=ON")
        install_functions(conn)
        # read the schema now, not inside the first call: its reading runs SQLite steps that the
        # call's step budget would count on a new connection and not on a reused one
        conn.execute(_SCHEMA).fetchall()
    except BaseException:
        conn.close()
        raise
    return conn


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class _Restore:
    """The statements that put one table's rows back (rowid first, then the columns)."""

    seed_row: str
    update: str
    insert: str
    delete: str

    @classmethod
    def of(cls, info: TableInfo) -> _Restore:
        t = _q(info.name)
        cols = ", ".join(_q(c) for c in info.columns)
        where = " AND ".join(f"{_q(c)} = ?" for c in info.key)
        sets = ", ".join(f"{_q(c)} = ?" for c in info.columns)
        marks = ", ".join("?" * (len(info.columns) + 1))
        return cls(
            seed_row=f"SELECT rowid, {cols} FROM {t} WHERE {where}",  # noqa: S608 - names from the spec
            update=f"UPDATE {t} SET rowid = ?, {sets} WHERE {where}",  # noqa: S608
            insert=f"INSERT INTO {t} (rowid, {cols}) VALUES ({marks})",  # noqa: S608
            delete=f"DELETE FROM {t} WHERE {where}",  # noqa: S608
        )


@dataclass
class ConnectionPool:
    """A domain's idle connections (see the module docstring)."""

    tables: dict[str, TableInfo]
    order: list[str]  # tables, parents before children
    idle: list[sqlite3.Connection] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _seed: sqlite3.Connection | None = None
    _seed_lock: threading.Lock = field(default_factory=threading.Lock)
    _restore: dict[str, _Restore] = field(default_factory=dict)

    def take(self, snapshot: bytes) -> sqlite3.Connection:
        """An idle connection in the seed state, else a new one."""
        with self.lock:
            conn = self.idle.pop() if self.idle else None
        return conn if conn is not None else new_connection(snapshot)

    def _room(self, size: int) -> bool:
        return len(self.idle) < IDLE_CONNECTIONS and (len(self.idle) + 1) * size <= IDLE_BYTES

    def give(
        self, conn: sqlite3.Connection, snapshot: bytes, changes: Iterable[tuple[str, Any]] = ()
    ) -> None:
        """Keep `conn` restored to the seed state, or close it (see the module docstring).
        `changes`: (table, key) of rows changed and not yet in the change log (`restore`)."""
        size = len(snapshot)
        # hooks a caller may have set on the connection do not carry over
        conn.set_trace_callback(None)
        conn.set_authorizer(None)
        conn.set_progress_handler(None, 0)
        with self.lock:
            room = self._room(size)
        keep = (
            room
            and not conn.in_transaction
            and conn.execute(_SCHEMA_VERSION).fetchone()[0] == self._schema_version(snapshot)
            and self.restore(conn, snapshot, changes)
        )
        if keep:
            with self.lock:
                keep = self._room(size)
                if keep:
                    self.idle.append(conn)
        if not keep:
            conn.close()

    def _schema_version(self, snapshot: bytes) -> int:
        """The seed's schema version (a connection whose schema was changed is never reused)."""
        with self._seed_lock:
            if self._seed is None:
                self._seed = new_connection(snapshot)
            return int(self._seed.execute(_SCHEMA_VERSION).fetchone()[0])

    def _statements(self, table: str) -> _Restore:
        found = self._restore.get(table)
        if found is None:
            found = self._restore[table] = _Restore.of(self.tables[table])
        return found

    def _seed_rows(self, snapshot: bytes, wanted: Iterable[tuple[str, tuple[Any, ...]]]) -> list[Any]:
        """(rowid, *columns) of each wanted (table, key values) in the seed state (None: absent)."""
        return self.read_seed(snapshot, ((self._statements(t).seed_row, key) for t, key in wanted))

    def read_seed(
        self, snapshot: bytes, queries: Iterable[tuple[str, Any]], every: bool = False
    ) -> list[Any]:
        """The first row each (statement, parameters) finds in the seed state (None: none), or
        with `every` the list of all its rows, on the pool's own connection to the seed (made on
        first use; never an episode's)."""
        with self._seed_lock:
            if self._seed is None:
                self._seed = new_connection(snapshot)
            seed = self._seed
            if every:
                return [seed.execute(sql, params).fetchall() for sql, params in queries]
            return [seed.execute(sql, params).fetchone() for sql, params in queries]

    def restore(
        self, conn: sqlite3.Connection, snapshot: bytes, changes: Iterable[tuple[str, Any]] = ()
    ) -> bool:
        """Put the rows `conn`'s change log names, and `changes` ((table, key) an episode changed
        and kept in memory only: simulator.runtime.episode), back to the seed state; False when it failed
        (the connection is then rolled back and must not be reused)."""
        wanted: dict[tuple[str, tuple[Any, ...]], None] = {}
        for table, stored in conn.execute(_CHANGES).fetchall():
            info = self.tables[table]
            key = info.unstored_key(stored)
            wanted[(table, key if info.composite else (key,))] = None
        for table, key in changes:
            wanted[(table, key if self.tables[table].composite else (key,))] = None
        changed = list(wanted)
        seeded = self._seed_rows(snapshot, changed)
        rank = {name: i for i, name in enumerate(self.order)}
        inserts: list[tuple[int, str, tuple[Any, ...]]] = []
        deletes: list[tuple[int, str, tuple[Any, ...]]] = []
        try:
            conn.execute("BEGIN")
            for (table, key), row in zip(changed, seeded, strict=True):
                sql = self._statements(table)
                if row is None:
                    deletes.append((rank[table], sql.delete, key))
                elif conn.execute(sql.update, (*row, *key)).rowcount == 0:  # deleted: insert it
                    inserts.append((rank[table], sql.insert, tuple(row)))
            for _, statement, params in sorted(inserts, key=lambda r: r[0]):  # parents first
                conn.execute(statement, params)
            for _, statement, params in sorted(deletes, key=lambda r: -r[0]):  # children first
                conn.execute(statement, params)
            for statement in _CLEAR:
                conn.execute(statement)
            conn.execute("COMMIT")
        except sqlite3.Error:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            return False
        return True

    def close(self) -> None:
        """Close every idle connection and the seed reader."""
        with self.lock:
            idle, self.idle = self.idle, []
        for conn in idle:
            conn.close()
        with self._seed_lock:
            if self._seed is not None:
                self._seed.close()
                self._seed = None
