"""An episode's state read from outside its calls: the change log and counters saved to the
`_toolgym_*` tables first, then the state's digest (in time proportional to the rows changed),
its full digest, its tables, the rows changed and one row. A part of `simulator.runtime.episode.Episode`.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..plan.tables import stored_key

if TYPE_CHECKING:
    from .domain import Domain


_SET_META = "INSERT INTO _toolgym_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
_LOG_CHANGE = "INSERT OR IGNORE INTO _toolgym_changes (tbl, pk) VALUES (?, ?)"

_PAUSE_ROWS = 64  # rows `digest` hashes between two calls of its `pause`
_NO_PAGE_LIMIT = "PRAGMA max_page_count = 4294967294"


class EpisodeState:
    """The state of an episode's database, as graders and exports read it."""

    # set by Episode.__init__
    domain: Domain
    conn: sqlite3.Connection
    lock: threading.RLock
    _page_limit: str
    _written: int
    _unsaved_meta: dict[str, int]
    _unsaved_changes: set[tuple[str, Any]]

    def _save(self) -> None:
        """Write the change log and counters of the calls committed since the last save to the
        `_toolgym_*` tables (one transaction; the caller holds the lock)."""
        if not self._unsaved_meta and not self._unsaved_changes:
            return
        conn = self.conn
        in_step = conn.total_changes == self._written  # nothing wrote to conn outside a call
        changes = self._unsaved_changes
        conn.execute(_NO_PAGE_LIMIT)  # (the bookkeeping is the server's: never refused for size)
        try:
            conn.execute("BEGIN")
            try:
                conn.executemany(
                    _LOG_CHANGE,
                    [(t, stored_key(k)) for t, k in changes] if self.domain.composite_keys else changes,
                )
                conn.executemany(_SET_META, self._unsaved_meta.items())
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            conn.execute(self._page_limit)
        self._unsaved_changes = set()
        self._unsaved_meta = {}
        if in_step:
            self._written = conn.total_changes

    def digest(self, pause: Callable[[], None] | None = None) -> str:
        """A stable SHA-256 of the observable state, in time proportional to the rows changed.

        It hashes the seed state's digest and every row (current value, or deleted) that differs
        from the seed; rows that are not in the change log cannot differ. Two episodes of a domain
        version have the same digest exactly when their states are equal (`full_digest` agrees).
        `pause` is called every `_PAUSE_ROWS` rows (a server lets its other threads run there).
        """
        seed = self.domain.seed_index()
        h = hashlib.sha256(self.domain.seed_digest().encode())
        with self.lock:
            self._save()
            tables = sorted(r[0] for r in self.conn.execute("SELECT DISTINCT tbl FROM _toolgym_changes"))
            for table in tables:
                info = self.domain.tables[table]
                base = seed[table]
                rows = self.conn.execute(info.select_changed).fetchall()
                for i, row in enumerate(sorted(rows, key=lambda r: repr(r[0]))):
                    pk, current = info.unstored_key(row[0]), row[1:]
                    if current[info.pk_index] is None:
                        current = None  # deleted
                    if current != base.get(pk):
                        h.update(repr((table, pk, current)).encode())
                        h.update(b"\n")
                    if pause is not None and i % _PAUSE_ROWS == _PAUSE_ROWS - 1:
                        pause()
        return h.hexdigest()

    def full_digest(self) -> str:
        """A SHA-256 of every row of every table (cost: the whole database). Used to check `digest`."""
        h = hashlib.sha256()
        with self.lock:
            for name in sorted(self.domain.tables):
                h.update(f"\x00{name}\x00".encode())
                h.update(repr(self.conn.execute(self.domain.tables[name].select_all).fetchall()).encode())
        return h.hexdigest()

    def export(self) -> dict[str, list[dict[str, Any]]]:
        """Every domain table as a list of rows (decoded), in key order."""
        with self.lock:
            return {
                name: [info.decode(r) for r in self.conn.execute(info.select_all)]
                for name, info in sorted(self.domain.tables.items())
            }

    def changes(self) -> set[tuple[str, Any]]:
        """(table, key) of every row a successful write touched (created, updated or deleted); a
        composite key is a tuple of its columns' values."""
        with self.lock:
            self._save()
            rows = self.conn.execute("SELECT tbl, pk FROM _toolgym_changes").fetchall()
        tables = self.domain.tables
        return {(t, tables[t].unstored_key(k)) for t, k in rows}

    def row(self, table: str, key: Any) -> dict[str, Any] | None:
        """The row of `table` with `key` (a tuple for a composite key), decoded; None when absent."""
        info = self.domain.tables[table]
        with self.lock:
            raw = self.conn.execute(info.select_by_pk, info.key_params(key)).fetchone()
        return None if raw is None else info.decode(raw)
