"""An episode's state as a plain SQLite file (for `sqlite3`, sqlite-utils, Datasette), or in the
shape of the source the domain was seeded from (its `snapshot:` layout: `snapshot_state`).

The file holds the domain's tables as the simulator declares them (column types, primary keys,
composite ones too, foreign keys, indexes) and their rows as stored (booleans as 0/1, JSON as
text), without toolgym's own bookkeeping tables. The state is the seed's, the one a task's gold
calls leave (`expected_episode`, the grading side's gold replay), or the one a transcript's calls
leave when replayed as scoring replays them (`replay_rollout`).
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simulator import Domain, Episode
from simulator.format.layout import Collection, Part, SnapshotLayout
from simulator.format.spec import Table

from .errors import TranscriptError
from .replay import expected_episode, replay_rollout
from .score import names_domain
from .transcripts import load_transcript

#: toolgym's internal tables (clock, id counters, change log): never part of an export
INTERNAL_PREFIX = "_toolgym_"


def write_state(episode: Episode, path: str | Path) -> Path:
    """Write the episode's current state to `path` as a SQLite file (replacing it if it exists).

    The file is written beside `path` under a temporary name and moved into place, so a failure
    leaves no half-written file and an existing one untouched.
    """
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    temporary.unlink(missing_ok=True)
    with episode.lock:
        image = episode.conn.serialize()
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.deserialize(image)
        conn.execute("PRAGMA foreign_keys=OFF")
        internal = [
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if name.startswith(INTERNAL_PREFIX)
        ]
        for name in internal:
            conn.execute(f'DROP TABLE "{name}"')
        conn.execute("VACUUM INTO ?", (str(temporary),))
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    finally:
        conn.close()
    os.replace(temporary, target)
    return target


def state_episode(
    domain: Domain,
    task: str | None = None,
    transcript: str | Path | None = None,
    seed: int | None = None,
) -> Episode:
    """The episode whose state is exported: the seed state, after `task`'s gold calls, or after a
    transcript's calls replayed. The seed is the given one, else the transcript's, else the task's
    (the one the transcript or `task` names), else 0. The caller closes the episode."""
    if task is not None and transcript is not None:
        raise ValueError("give --task or --transcript, not both")
    if transcript is not None:
        rollout = load_transcript(transcript)
        if rollout.domain is not None and not names_domain(rollout.domain, domain, rollout.fingerprint):
            raise TranscriptError(
                f"{transcript} is a transcript of domain {rollout.domain[:80]!r}, not {domain.name!r}"
            )
        if seed is None:
            seed = rollout.seed if rollout.seed is not None else 0
        episode, _ = replay_rollout(domain, rollout, seed)
        return episode
    if task is not None:
        return expected_episode(domain, task, seed)
    return domain.episode(seed=seed or 0)


def export_state(
    domain: Domain,
    out: str | Path,
    task: str | None = None,
    transcript: str | Path | None = None,
    seed: int | None = None,
) -> Path:
    """Write the chosen state (see `state_episode`) of `domain` to `out` as a SQLite file."""
    episode = state_episode(domain, task, transcript, seed)
    try:
        return write_state(episode, out)
    finally:
        episode.close()


# -- the snapshot's own shape (domain.yaml's `snapshot:` layout) -----------------------------------


class _Nester:
    """Builds records in a layout's shape from one state's rows (tables -> lists of decoded rows).
    Indexes (rows by key, rows by a parent column) are built on first use, once per state."""

    def __init__(self, specs: Mapping[str, Table], rows: Mapping[str, list[dict[str, Any]]]):
        self.specs = specs
        self.rows = rows
        self._indexes: dict[tuple[str, str | None], dict[Any, Any]] = {}

    def key_column(self, table: str) -> str:
        """The key column (the last one of a composite key: unique among one parent's rows)."""
        return self.specs[table].key_columns[-1]

    def key_of(self, table: str, row: dict[str, Any]) -> Any:
        columns = self.specs[table].key_columns
        return row[columns[0]] if len(columns) == 1 else tuple(row[c] for c in columns)

    def by_key(self, table: str) -> dict[Any, dict[str, Any]]:
        index = self._indexes.get((table, None))
        if index is None:
            index = self._indexes[(table, None)] = {
                self.key_of(table, r): r for r in self.rows.get(table, [])
            }
        return index

    def by_parent(self, table: str, column: str) -> dict[Any, list[dict[str, Any]]]:
        index = self._indexes.get((table, column))
        if index is None:
            index = {}
            for r in self.rows.get(table, []):
                index.setdefault(r[column], []).append(r)
            self._indexes[(table, column)] = index
        return index

    def record(
        self, table: str, row: dict[str, Any], fields: Mapping[str, str | Part], omit: Any
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, part in fields.items():
            value = row[part] if isinstance(part, str) else self.part(table, row, part)
            if value is None and (omit is True or (isinstance(omit, list) and name in omit)):
                continue
            out[name] = value
        return out

    def element(self, table: str, row: dict[str, Any], part: Part) -> Any:
        if part.value is not None:
            return row[part.value]
        assert part.fields is not None  # (the model requires fields or value)
        return self.record(table, row, part.fields, part.omit_null)

    def part(self, table: str, row: dict[str, Any], part: Part) -> Any:
        if part.table is None:  # an object of this row's columns
            assert part.fields is not None
            return self.record(table, row, part.fields, part.omit_null)
        if part.via is not None:
            target = None if row[part.via] is None else self.by_key(part.table).get(row[part.via])
            return None if target is None else self.element(part.table, target, part)
        assert part.parent is not None
        rows = _ordered(
            self.by_parent(part.table, part.parent).get(row[self.key_column(table)], []), part.order
        )
        if part.as_ == "object":
            return self.element(part.table, rows[0], part) if rows else None
        if part.as_ == "list":
            return [self.element(part.table, r, part) for r in rows]
        key = part.key or self.key_column(part.table)
        return {_map_key(r[key]): self.element(part.table, r, part) for r in rows}

    def records(self, coll: Collection, keys: set[Any]) -> dict[str, Any]:
        """The records of the rows with `keys` (table keys), by their key in the snapshot (a list
        collection's records by their table key)."""
        rows = [r for k in keys if (r := self.by_key(coll.table).get(k)) is not None]
        name = (coll.key or self.key_column(coll.table)) if coll.as_ == "map" else None
        return {
            _map_key(r[name] if name else self.key_of(coll.table, r)): self.record(
                coll.table, r, coll.fields, coll.omit_null
            )
            for r in rows
        }

    def collection(self, coll: Collection, keys: set[Any] | None = None) -> Any:
        rows = self.rows.get(coll.table, [])
        if keys is not None:
            rows = [r for r in rows if self.key_of(coll.table, r) in keys]
        rows = _ordered(rows, coll.order)
        if coll.as_ == "list":
            return [self.record(coll.table, r, coll.fields, coll.omit_null) for r in rows]
        key = coll.key or self.key_column(coll.table)
        return {_map_key(r[key]): self.record(coll.table, r, coll.fields, coll.omit_null) for r in rows}


def _ordered(rows: list[dict[str, Any]], order: str | None) -> list[dict[str, Any]]:
    """`rows` (in key order) ordered by the column `order`, nulls last; ties keep key order."""
    if order is None:
        return rows
    return sorted(rows, key=lambda r: (r[order] is None, r[order] if r[order] is not None else 0))


def _map_key(value: Any) -> str:
    """A value as a JSON object key (what `json.dumps` would make of it)."""
    return value if isinstance(value, str) else json.dumps(value)


def layout_of(domain: Domain) -> SnapshotLayout:
    """The domain's snapshot layout; ValueError when domain.yaml has none."""
    if domain.spec.snapshot is None:
        raise ValueError(
            f"domain {domain.name!r} has no `snapshot:` layout in domain.yaml, so it has no snapshot "
            "shape (see docs/domain-format.md, 'Snapshot layout')"
        )
    return domain.spec.snapshot


def snapshot_document(
    layout: SnapshotLayout, tables: Mapping[str, Table], state: Mapping[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    """Rows (table -> rows in key order, as `Episode.export()` gives them) in the layout's shape."""
    nester = _Nester(tables, state)
    return {name: nester.collection(coll) for name, coll in layout.collections.items()}


def snapshot_state(domain: Domain, state: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """A state (`Episode.export()`: table -> rows) in the shape of the domain's snapshot layout:
    `{collection: {key: record}}` (or a list of records), collections and fields in layout order."""
    return snapshot_document(layout_of(domain), domain.spec.tables, state)


def snapshot_records(
    domain: Domain, state: Mapping[str, list[dict[str, Any]]], keys: Mapping[str, set[Any]]
) -> dict[str, Any]:
    """Only the records of `keys` (collection -> keys of its table's rows) of `snapshot_state`."""
    layout = layout_of(domain)
    nester = _Nester(domain.spec.tables, state)
    return {
        name: nester.collection(coll, set(keys.get(name, ())))
        for name, coll in layout.collections.items()
        if name in keys
    }


def _links(fields: Mapping[str, str | Part], table: str, out: list[tuple[str, str, str, str]]) -> None:
    """(table, via | parent, column, containing table) of every link in `fields`, recursively."""
    for part in fields.values():
        if isinstance(part, str):
            continue
        inner = table
        if part.table is not None:
            inner = part.table
            if part.via is not None:
                out.append((part.table, "via", part.via, table))
            else:
                assert part.parent is not None
                out.append((part.table, "parent", part.parent, table))
        if part.fields is not None:
            _links(part.fields, inner, out)


class SnapshotDiff:
    """The snapshot records a write changed, built from the changed rows only.

    `changed(episode)` maps each changed row (`Episode.changes()`) to the records that hold it
    (through the layout's links: a child row to its parent's record, a row others point at to
    theirs), builds those records before (the seed state given) and after, and keeps the ones that
    differ: {collection: {key: (before, after)}}, None for a record that does not exist. The cost
    follows the change, not the database: the seed is indexed once.
    """

    def __init__(self, domain: Domain, seed_state: Mapping[str, list[dict[str, Any]]]):
        self.domain = domain
        self.layout = layout_of(domain)
        self.specs = domain.spec.tables
        self.seed_state = seed_state
        self.before = _Nester(self.specs, seed_state)
        self.links: list[tuple[str, str, str, str]] = []
        for coll in self.layout.collections.values():
            _links(coll.fields, coll.table, self.links)

    def owners(
        self, nester: _Nester, table: str, row: dict[str, Any], out: set[tuple[str, Any]], seen: set[Any]
    ) -> None:
        """Add (collection, table key) of every record that holds `row`."""
        key = nester.key_of(table, row)
        if (table, key) in seen:
            return
        seen.add((table, key))
        for name, coll in self.layout.collections.items():
            if coll.table == table:
                out.add((name, key))
        for child, kind, column, container in self.links:
            if child != table:
                continue
            if kind == "parent":
                holder = nester.by_key(container).get(row[column])
                holders = [] if holder is None else [holder]
            else:
                holders = nester.by_parent(container, column).get(key, [])
            for holder in holders:
                self.owners(nester, container, holder, out, seen)

    def changed(self, episode: Episode) -> dict[str, dict[str, tuple[Any, Any]]]:
        """{collection: {key: (before, after)}} of the records whose value the episode changed."""
        changes = episode.changes()
        state = dict(self.seed_state)
        edits: dict[str, dict[Any, dict[str, Any] | None]] = {}
        for table, key in changes:
            edits.setdefault(table, {})[key] = episode.row(table, key)
        for table, edited in edits.items():
            rows = {self.before.key_of(table, r): r for r in self.seed_state.get(table, [])}
            for key, row in edited.items():
                if row is None:
                    rows.pop(key, None)
                else:
                    rows[key] = row
            state[table] = [rows[k] for k in sorted(rows)]
        after = _Nester(self.specs, state)
        holders: set[tuple[str, Any]] = set()
        for table, key in changes:
            old = self.before.by_key(table).get(key)
            if old is not None:
                self.owners(self.before, table, old, holders, set())
            new = after.by_key(table).get(key)
            if new is not None:
                self.owners(after, table, new, holders, set())
        wanted: dict[str, set[Any]] = {}
        for name, key in holders:
            wanted.setdefault(name, set()).add(key)
        out: dict[str, dict[str, tuple[Any, Any]]] = {}
        for name, keys in wanted.items():
            coll = self.layout.collections[name]
            was, now = self.before.records(coll, keys), after.records(coll, keys)
            for k in list(was) + [k for k in now if k not in was]:
                pair = (was.get(k), now.get(k))
                if pair[0] != pair[1]:
                    out.setdefault(name, {})[k] = pair
        return out


def _cell(value: Any) -> str:
    """A value as a CSV cell: null empty, numbers and booleans as JSON writes them, objects as JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _records(value: Any) -> list[Any]:
    return list(value.values()) if isinstance(value, dict) else list(value)


def write_snapshot(layout: SnapshotLayout, document: Mapping[str, Any], out: str | Path) -> Path:
    """Write a snapshot document in the layout's format: one JSON file, a folder with a file per
    collection (`.json` as the collection, `.jsonl` a record a line, `.csv` a header and a row per
    record), or a SQLite file with a table per collection (columns: the fields; objects as JSON)."""
    target = Path(out)
    if layout.format == "document":
        target.write_text(json.dumps(document, indent=layout.indent, ensure_ascii=False), encoding="utf-8")
        return target
    if layout.format == "folder":
        target.mkdir(parents=True, exist_ok=True)
        for name, coll in layout.collections.items():
            assert coll.file is not None  # (the model requires a file per collection)
            path = target / coll.file
            value = document.get(name, {} if coll.as_ == "map" else [])
            if coll.file.endswith(".json"):
                text = json.dumps(value, indent=layout.indent, ensure_ascii=False)
            elif coll.file.endswith(".jsonl"):
                text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _records(value))
            else:
                buffer = io.StringIO()
                writer = csv.writer(buffer, lineterminator="\n")
                writer.writerow(list(coll.fields))
                for r in _records(value):
                    writer.writerow([_cell(r.get(f)) for f in coll.fields])
                text = buffer.getvalue()
            path.write_text(text, encoding="utf-8")
        return target
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    temporary.unlink(missing_ok=True)
    conn = sqlite3.connect(temporary, isolation_level=None)
    try:
        conn.execute("BEGIN")
        for name, coll in layout.collections.items():
            columns = list(coll.fields)
            quoted = ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
            table = '"' + name.replace('"', '""') + '"'
            conn.execute(f"CREATE TABLE {table} ({quoted})")
            marks = ", ".join("?" for _ in columns)
            conn.executemany(
                f"INSERT INTO {table} VALUES ({marks})",
                [
                    [json.dumps(v) if isinstance(v, dict | list) else v for v in (r.get(c) for c in columns)]
                    for r in _records(document.get(name, []))
                ],
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.close()
        temporary.unlink(missing_ok=True)
        raise
    conn.close()
    os.replace(temporary, target)
    return target


def export_snapshot(
    domain: Domain,
    out: str | Path,
    task: str | None = None,
    transcript: str | Path | None = None,
    seed: int | None = None,
) -> Path:
    """Write the chosen state (see `state_episode`) of `domain` in its snapshot's own shape."""
    layout = layout_of(domain)
    episode = state_episode(domain, task, transcript, seed)
    try:
        state = episode.export()
    finally:
        episode.close()
    return write_snapshot(layout, snapshot_state(domain, state), out)
