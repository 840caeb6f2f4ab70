"""The snapshot layout of domain.yaml (`snapshot:`): how tables nest into a source's own shape.

A layout names the collections of a snapshot (tau2's `db.json`: `{"users": {id: record}, ...}`, a
folder of JSON / JSONL / CSV files, or a SQLite file) and, field by field, where each value of a
record comes from: a column, an object of columns, the row another row points at, or the rows of a
child table (a list, or a map keyed by a column). It is data only: `scoring.export.snapshot_state`
builds the document from an episode's tables, `toolgen.snapshot` writes layouts when it reads a
snapshot. The format is documented in docs/domain-format.md ("Snapshot layout").
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Literal

from pydantic import Field, model_validator

from .specbase import SpecModel

__all__ = ["Collection", "Part", "SnapshotLayout", "layout_problems"]

#: what `omit_null` takes: every field of the object, or the named ones
OmitNull = bool | list[str]


class Part(SpecModel):
    """A field whose value is not a plain column (a plain column is written as its name).

    - `fields` alone: an object built from columns of the same row (a nested object stored as columns);
    - `table` + `via: COLUMN`: the one row of `table` whose key is this row's COLUMN (null when it is null);
    - `table` + `parent: COLUMN`: the rows of `table` whose COLUMN holds this row's key, `as` an
      `object` (the one row, or null), a `list` or a `map` keyed by `key`, in the order of `order`.

    Each element is an object of `fields`, or the value of the column `value`.
    """

    table: str | None = Field(default=None, exclude_if=lambda v: v is None)
    via: str | None = Field(default=None, exclude_if=lambda v: v is None)
    parent: str | None = Field(default=None, exclude_if=lambda v: v is None)
    as_: Literal["object", "list", "map"] = Field(default="object", alias="as")
    key: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="a map's key column (default: the table's key)",
    )
    order: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="column ordering a list's or map's elements (default: key order)",
    )
    fields: dict[str, str | Part] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="field -> column name or part, in the order the fields are written",
    )
    value: str | None = Field(
        default=None, exclude_if=lambda v: v is None, description="each element is this column's value"
    )
    omit_null: OmitNull = Field(
        default=False, description="leave these fields (true: every field) out of the object when null"
    )

    @model_validator(mode="after")
    def _shape(self) -> Part:
        if (self.fields is None) == (self.value is None):
            raise ValueError(
                "give `fields` (an object per element) or `value` (a column), not both or neither"
            )
        if self.via is not None and self.parent is not None:
            raise ValueError(
                "give `via` (this row points at one row) or `parent` (rows point here), not both"
            )
        if (self.table is None) != (self.via is None and self.parent is None):
            raise ValueError("`table` goes with `via` or `parent`; without `table` the part reads this row")
        if self.table is None and self.value is not None:
            raise ValueError("`value` alone is a column: write the column's name instead")
        if self.as_ != "object" and self.parent is None:
            raise ValueError(f"`as: {self.as_}` gathers the rows of a `parent` link")
        if self.key is not None and self.as_ != "map":
            raise ValueError("`key` is the key column of `as: map`")
        if self.order is not None and self.as_ == "object":
            raise ValueError("`order` orders the elements of `as: list` or `as: map`")
        if self.omit_null is not False and self.fields is None:
            raise ValueError("`omit_null` applies to `fields`")
        return self


class Collection(SpecModel):
    """A top-level collection: the rows of `table`, `as` a map keyed by `key` or a list, each an
    object of `fields` (in order)."""

    table: str
    as_: Literal["map", "list"] = Field(default="map", alias="as")
    key: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="the map's key column (default: the table's key)",
    )
    order: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="column ordering the records (default: key order)",
    )
    fields: dict[str, str | Part] = Field(description="field -> column name or part, in order")
    omit_null: OmitNull = Field(
        default=False, description="leave these fields (true: every field) out when null"
    )
    file: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="`format: folder`: the collection's file (.json, .jsonl or .csv)",
    )

    @model_validator(mode="after")
    def _shape(self) -> Collection:
        if self.key is not None and self.as_ != "map":
            raise ValueError("`key` is the key column of `as: map`")
        if self.file is not None and not self.file.endswith((".json", ".jsonl", ".csv")):
            raise ValueError("a collection's file ends in .json, .jsonl or .csv")
        return self


class SnapshotLayout(SpecModel):
    """How the domain's tables nest into its source's own shape (`toolgym export --format snapshot`)."""

    format: Literal["document", "folder", "sqlite"] = Field(
        default="document",
        description="one JSON document of collections, a folder of files (`file` per collection), or a SQLite file",
    )
    indent: int | None = Field(
        default=None, ge=0, le=16, description="`document`/`.json` files: JSON indentation (null: one line)"
    )
    collections: dict[str, Collection]

    @model_validator(mode="after")
    def _files(self) -> SnapshotLayout:
        if self.format == "folder":
            missing = [name for name, c in self.collections.items() if c.file is None]
            if missing:
                raise ValueError(f"`format: folder` needs a `file` for each collection: {', '.join(missing)}")
        return self


def _omitted(omit: OmitNull, fields: dict[str, str | Part]) -> list[str]:
    return [] if isinstance(omit, bool) else [f for f in omit if f not in fields]


def layout_problems(
    layout: SnapshotLayout, tables: Mapping[str, Container[str]], keys: Mapping[str, tuple[str, ...]]
) -> list[tuple[str, str]]:
    """(where, message) of every name in `layout` that the tables lack: `tables` maps each table to
    its columns, `keys` to its key columns. A `parent` link needs a one-column key on its side."""
    problems: list[tuple[str, str]] = []

    def column(table: str, name: str | None, where: str) -> None:
        if name is not None and name not in tables[table]:
            problems.append((where, f"table {table!r} has no column {name!r}"))

    def walk(table: str, fields: dict[str, str | Part], omit: OmitNull, where: str) -> None:
        for name in _omitted(omit, fields):
            problems.append((f"{where}.omit_null", f"{name!r} is not one of the fields"))
        for name, part in fields.items():
            at = f"{where}.fields.{name}"
            if isinstance(part, str):
                column(table, part, at)
                continue
            inner = table
            if part.table is not None:
                if part.table not in tables:
                    problems.append((f"{at}.table", f"no table {part.table!r}"))
                    continue
                inner = part.table
                if part.via is not None:
                    column(table, part.via, f"{at}.via")
                    if len(keys[inner]) != 1:
                        problems.append(
                            (f"{at}.via", f"table {inner!r} has a composite key: a column cannot hold it")
                        )
                else:
                    column(inner, part.parent, f"{at}.parent")
                    if len(keys[table]) != 1:
                        problems.append(
                            (f"{at}.parent", f"table {table!r} has a composite key: link with `via`")
                        )
                for attr in ("key", "order", "value"):
                    column(inner, getattr(part, attr), f"{at}.{attr}")
            if part.fields is not None:
                walk(inner, part.fields, part.omit_null, at)

    for name, coll in layout.collections.items():
        where = f"snapshot.collections.{name}"
        if coll.table not in tables:
            problems.append((f"{where}.table", f"no table {coll.table!r}"))
            continue
        column(coll.table, coll.key, f"{where}.key")
        column(coll.table, coll.order, f"{where}.order")
        if coll.as_ == "map" and coll.key is None and len(keys[coll.table]) != 1:
            problems.append(
                (f"{where}.key", f"table {coll.table!r} has a composite key: name the map's `key`")
            )
        walk(coll.table, coll.fields, coll.omit_null, where)
    return problems
