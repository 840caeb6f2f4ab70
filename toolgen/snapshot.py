"""Reading a snapshot of real records into tables, seed rows and a layout (`generate --data`).

    snap = read_snapshot("db.json")      # or a folder of .json/.jsonl/.csv files, or a SQLite file
    snap.tables, snap.rows, snap.layout  # Table models, seed rows per table, the `snapshot:` layout
    seed_domain(snap, "shop").write(out) # a domain folder holding them (tools still to add)

Each collection becomes a table (nested data: columns or child tables; another table's keys: a
reference), and exporting the untouched seed through the layout gives back the input exactly.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator.builders import DomainBuilder
from simulator.errors import Problem, SpecError
from simulator.format.layout import Collection, SnapshotLayout
from simulator.format.spec import Table

from ._snapshottables import _Fail, _Reader, _references
from .snapshotfiles import MAX_DEPTH, read_collections

__all__ = ["MAX_DEPTH", "Snapshot", "load_collections", "read_snapshot", "seed_domain"]


@dataclass
class Snapshot:
    """What a snapshot holds, as a domain stores it: tables (with keys and references), seed rows
    per table (in the source's order) and the layout that nests them back into the source's shape."""

    source: Path
    tables: dict[str, Table]
    rows: dict[str, list[dict[str, Any]]]
    layout: SnapshotLayout
    #: references found (`table.column -> table.column`; `table.column[] -> ...` for a list of keys)
    references: list[str] = field(default_factory=list)
    #: where the layout cannot keep the source exactly (a field null in one record, absent in another)
    notes: list[str] = field(default_factory=list)


def load_collections(path: str | Path) -> dict[str, Any]:
    """The snapshot at `path` as parsed records: {collection: {key: record} or [record]} (a folder's
    files and a SQLite file's tables by name)."""
    return read_collections(Path(path))[0]


def read_snapshot(path: str | Path) -> Snapshot:
    """The tables, seed rows and layout of the snapshot at `path` (see the module docstring)."""
    source = Path(path)
    collections, fmt, files, indent = read_collections(source)
    reader = _Reader()
    layout_collections: dict[str, Collection] = {}
    for name, value in collections.items():
        try:
            layout_collections[name] = reader.collection(name, value, files.get(name))
        except _Fail as exc:
            place = str(source / files[name]) if name in files else str(source)
            raise SpecError([Problem(place, exc.where, exc.message)]) from None
    layout = SnapshotLayout(
        format=fmt,  # type: ignore[arg-type]
        indent=indent if fmt != "sqlite" else None,
        collections=layout_collections,
    )
    references = _references(reader)
    for table, columns in reader.tables.items():
        for row in reader.rows[table]:
            for c in columns:
                row.setdefault(c, None)
    tables = {
        name: Table(primary_key=reader.keys[name], columns=columns) for name, columns in reader.tables.items()
    }
    snap = Snapshot(source, tables, reader.rows, layout, references, reader.notes)
    _check_round_trip(snap, collections)
    return snap


def _dropped_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _dropped_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_dropped_nulls(v) for v in value]
    return value


def _key_sorter(columns: tuple[str, ...]) -> Any:
    def key(row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(row[c] for c in columns)

    return key


def _check_round_trip(snap: Snapshot, collections: dict[str, Any]) -> None:
    """Export the rows through the layout and compare with the input (exactly, as JSON text, unless
    a note says where it cannot be kept): a difference is a bug, reported with its place."""
    from scoring.export import snapshot_document

    state = {
        name: sorted(snap.rows[name], key=_key_sorter(table.key_columns))
        for name, table in snap.tables.items()
    }
    document = snapshot_document(snap.layout, snap.tables, state)
    exact = not snap.notes
    for name, value in collections.items():
        got = document[name]
        same = json.dumps(got) == json.dumps(value) if exact else _dropped_nulls(got) == _dropped_nulls(value)
        if not same:
            raise SpecError(
                [
                    Problem(
                        str(snap.source),
                        name,
                        "this collection cannot be stored so that it exports back exactly",
                    )
                ]
            )


def seed_domain(snap: Snapshot, name: str, version: str = "1.0.0", description: str = "") -> DomainBuilder:
    """A `DomainBuilder` holding the snapshot's tables, seed rows and layout (no tools yet)."""
    builder = DomainBuilder(name, version, description=description or f"Seeded from {snap.source.name}.")
    builder.head["snapshot"] = snap.layout.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    for table, spec in snap.tables.items():
        columns = {c: col.model_dump(mode="json", exclude_defaults=True) for c, col in spec.columns.items()}
        builder.table(table, spec.primary_key, columns)
        builder.seed(table, snap.rows[table])
    return builder
