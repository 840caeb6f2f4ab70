"""Reading the files of a snapshot: one JSON document, a folder of .json / .jsonl / .csv files, or
a SQLite file, as parsed collections (`toolgen.snapshot` turns them into tables). Every problem is a
`SpecError` naming the file and the place (a line and column, a CSV line, a table's row)."""

from __future__ import annotations

import csv
import json
import math
import re
import sqlite3
from pathlib import Path
from typing import Any

from simulator.errors import Problem, SpecError

__all__ = ["MAX_DEPTH", "read_collections", "type_name"]

#: deeper nesting than this (objects and lists inside a record) is refused
MAX_DEPTH = 32
_SQLITE_MAGIC = b"SQLite format 3\x00"
_FOLDER_FILES = (".json", ".jsonl", ".csv")


def type_name(value: Any) -> str:
    """A JSON value's type in words (`string`, `object`, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "list"


def _load_json(path: Path, text: str) -> Any:
    def reject(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    try:
        return json.loads(text, parse_constant=reject)
    except json.JSONDecodeError as exc:
        raise SpecError(
            [Problem(str(path), f"line {exc.lineno} column {exc.colno}", f"not JSON: {exc.msg}")]
        ) from None
    except ValueError as exc:
        raise SpecError([Problem(str(path), "", f"not JSON: {exc}")]) from None
    except RecursionError:
        raise SpecError([Problem(str(path), "", f"nested more than {MAX_DEPTH} levels deep")]) from None


def _indent(text: str) -> int | None:
    match = re.match(r"\s*[\[{]\n( *)\S", text)
    return len(match.group(1)) if match else None


def _csv_value(text: str) -> Any:
    if text == "":
        return None
    try:
        number: Any = int(text)
        if str(number) == text:
            return number
    except ValueError:
        pass
    try:
        number = float(text)
        if math.isfinite(number) and repr(number) == text:
            return number
    except ValueError:
        pass
    return text


def _read_csv(path: Path) -> list[dict[str, Any]]:
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None:
            return []
        if len(set(header)) != len(header):
            raise SpecError([Problem(str(path), "line 1", "a column name appears twice in the header")])
        cells = [list(r) for r in reader]
    out = []
    for i, row in enumerate(cells, start=2):
        if len(row) != len(header):
            raise SpecError(
                [Problem(str(path), f"line {i}", f"{len(row)} cells, the header has {len(header)}")]
            )
        out.append(dict(zip(header, row, strict=True)))
    # a column is numeric only when every cell reads back as written
    for name in header:
        parsed = [_csv_value(r[name]) for r in out]
        numeric = all(v is None or isinstance(v, int | float) for v in parsed)
        for r, v in zip(out, parsed, strict=True):
            r[name] = v if numeric or v is None else r[name]
    return out


def _read_jsonl(path: Path) -> list[Any]:
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                out.append(_load_json(path, line))
            except SpecError as exc:
                raise SpecError([Problem(str(path), f"line {i}", exc.problems[0].message)]) from None
    return out


def _read_sqlite(path: Path) -> dict[str, list[dict[str, Any]]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        names = [
            n
            for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")
            if not n.startswith("sqlite_")
        ]
        out: dict[str, list[dict[str, Any]]] = {}
        for name in names:
            cursor = conn.execute(f'SELECT * FROM "{name.replace(chr(34), chr(34) * 2)}"')
            columns = [d[0] for d in cursor.description]
            rows = [dict(zip(columns, r, strict=True)) for r in cursor]
            for i, r in enumerate(rows):
                for c, v in r.items():
                    if isinstance(v, bytes):
                        raise SpecError(
                            [Problem(str(path), f"{name}[{i}].{c}", "a BLOB value cannot be a JSON value")]
                        )
            out[name] = rows
        return out
    except sqlite3.DatabaseError as exc:
        raise SpecError([Problem(str(path), "", f"not a readable SQLite file: {exc}")]) from None
    finally:
        conn.close()


def read_collections(path: Path) -> tuple[dict[str, Any], str, dict[str, str], int | None]:
    """The collections of the snapshot at `path`, its format, each collection's file, the JSON indent."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in _FOLDER_FILES)
        if not files:
            raise SpecError(
                [Problem(str(path), "", "a snapshot folder holds .json, .jsonl or .csv files; none here")]
            )
        out: dict[str, Any] = {}
        names: dict[str, str] = {}
        indent = None
        for f in files:
            if f.stem in out:
                raise SpecError([Problem(str(f), "", f"a second file for the collection {f.stem!r}")])
            if f.suffix == ".json":
                text = f.read_text(encoding="utf-8")
                out[f.stem] = _load_json(f, text)
                indent = indent if indent is not None else _indent(text)
            elif f.suffix == ".jsonl":
                out[f.stem] = _read_jsonl(f)
            else:
                out[f.stem] = _read_csv(f)
            names[f.stem] = f.name
        return out, "folder", names, indent
    if not path.is_file():
        raise SpecError([Problem(str(path), "", "no such file or folder")])
    with path.open("rb") as handle:
        head = handle.read(len(_SQLITE_MAGIC))
    if head == _SQLITE_MAGIC:
        return _read_sqlite(path), "sqlite", {}, None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(
            [Problem(str(path), f"byte {exc.start}", "not UTF-8 text (nor a SQLite file)")]
        ) from None
    doc = _load_json(path, text)
    if not isinstance(doc, dict):
        raise SpecError(
            [Problem(str(path), "", f"a snapshot document is an object of collections, not {type_name(doc)}")]
        )
    return doc, "document", {}, _indent(text)
