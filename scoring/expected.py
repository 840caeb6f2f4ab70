"""The expected state of a task: its gold calls replayed once per process, then reused.

`expected_state(domain, task, seed)` replays the task's gold calls and keeps what scoring reads:
the rows the gold solution changed and the values the answer facts rule out. States are cached
in memory, keyed by domain fingerprint, task content and seed; `clear_expected_states()` empties
the cache.
Design notes: docs/design/scoring.md.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from simulator import Domain, Episode

from .facts import RuledOut, find_ruled_out
from .replay import expected_episode
from .tasks import Task, task_of

#: The most expected states a process keeps ...
MAX_STATES = 4096
#: ... and the most changed rows kept in all of them.
MAX_ROWS = 500_000

Key = Any


@dataclass(frozen=True)
class ExpectedState:
    """What scoring reads of a task's expected final state (see the module docstring)."""

    domain: Domain
    seed: int
    task_digest: str
    #: {table: {key: the row as stored, or None when the gold solution deleted it}}
    rows: dict[str, dict[Key, tuple[Any, ...] | None]]
    ruled: RuledOut | None

    def changes(self) -> set[tuple[str, Key]]:
        """(table, key) of every row the gold solution touched (as `Episode.changes`)."""
        return {(t, k) for t, rows in self.rows.items() for k in rows}

    def read(self, table: str, keys: Iterable[Key]) -> dict[Key, dict[str, Any]]:
        """The rows of `table` with these keys that exist in the state, decoded (fresh dicts)."""
        info, rows = self.domain.tables[table], self.rows.get(table, {})
        out = {}
        for key in keys:
            raw = rows.get(key)
            if raw is not None:
                out[key] = info.decode(raw)
        return out

    @property
    def size(self) -> int:
        return sum(len(rows) for rows in self.rows.values())


def task_digest(task: Task) -> str:
    """A hash of the task's whole content (calls, ignored columns, facts, seed, ...)."""
    return hashlib.sha256(task.model_dump_json().encode()).hexdigest()


def capture(episode: Episode, task: Task, digest: str | None = None) -> ExpectedState:
    """The expected state of `task` from an episode its gold calls were replayed on."""
    domain = episode.domain
    rows: dict[str, dict[Key, tuple[Any, ...] | None]] = {}
    by_table: dict[str, list[Key]] = {}
    for table, key in episode.changes():
        by_table.setdefault(table, []).append(key)
    for table, keys in by_table.items():
        info = domain.tables[table]
        table_rows: dict[Key, tuple[Any, ...] | None] = dict.fromkeys(keys)
        with episode.lock:
            for key in keys:
                table_rows[key] = episode.conn.execute(info.select_by_pk, info.key_params(key)).fetchone()
        rows[table] = table_rows
    ruled = find_ruled_out(episode, task) if task.answer_facts else None
    return ExpectedState(domain, episode.seed, digest or task_digest(task), rows, ruled)


class _Cache:
    def __init__(self) -> None:
        self.states: OrderedDict[tuple[str, str, int], ExpectedState] = OrderedDict()
        self.rows = 0
        self.lock = threading.Lock()

    def get(self, key: tuple[str, str, int]) -> ExpectedState | None:
        with self.lock:
            found = self.states.get(key)
            if found is not None:
                self.states.move_to_end(key)
            return found

    def put(self, key: tuple[str, str, int], state: ExpectedState) -> None:
        with self.lock:
            if key in self.states:
                return
            self.states[key] = state
            self.rows += state.size
            while len(self.states) > 1 and (len(self.states) > MAX_STATES or self.rows > MAX_ROWS):
                self.rows -= self.states.popitem(last=False)[1].size

    def clear(self) -> None:
        with self.lock:
            self.states.clear()
            self.rows = 0


_CACHE = _Cache()


def expected_state(
    domain: Domain, task: Task | str, seed: int | None = None, replayed: Episode | None = None
) -> ExpectedState:
    """The task's expected state with this seed (default: the task's), from the process's cache or
    replayed now. Raises TaskError for a broken task (see `expected_episode`); errors are not cached.

    `replayed` is an episode of the domain that the task's gold calls were just replayed on with
    this seed (validation's traced gold run): the state is captured from it, not replayed again,
    and kept for later scoring (the caller keeps and closes the episode)."""
    gold = task_of(domain, task)
    seed = gold.seed if seed is None else seed
    digest = task_digest(gold)
    key = (domain.fingerprint(), digest, seed)
    found = _CACHE.get(key)
    if found is not None:
        return found
    if replayed is not None:
        state = capture(replayed, gold, digest)
    else:
        with expected_episode(domain, gold, seed) as episode:
            state = capture(episode, gold, digest)
    _CACHE.put(key, state)
    return state


def clear_expected_states() -> None:
    """Forget every cached expected state."""
    _CACHE.clear()


def cached_states() -> int:
    """How many expected states the process keeps now."""
    return len(_CACHE.states)
