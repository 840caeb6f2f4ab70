"""Seed rows: each `seed/<table>.jsonl` line checked against its table, and foreign keys across tables.

Every problem is reported with its file and line, once: a row that is refused still counts for the
rows whose foreign keys refer to it, and a column whose definition is wrong (a stand-in, reported in
domain.yaml) is not checked again in every row.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..plan.tables import TableInfo, ValueProblem
from .spec import Clock, DomainSpec

#: how many more lines a repeated problem names
MAX_LINES = 10


class SeedReader:
    """The seed-reading part of the loader (which provides these attributes)."""

    folder: Path
    stand_ins: dict[str, set[str]]  # table -> columns whose definition is wrong
    rejected: dict[str, list[tuple[dict[str, Any], int]]]  # table -> seed rows refused, and their lines

    def problem(self, file: str, where: str, message: str) -> None:
        raise NotImplementedError

    def read_seed(self, spec: DomainSpec, infos: dict[str, TableInfo]) -> dict[str, list[dict[str, Any]]]:
        self._repeats: dict[tuple[str, str], list[int]] = {}  # (file, message) -> its lines
        seed_dir = self.folder / "seed"
        rows: dict[str, list[dict[str, Any]]] = {t: [] for t in spec.tables}
        lines: dict[str, list[int]] = {t: [] for t in spec.tables}
        if seed_dir.is_dir():
            for path in sorted(seed_dir.glob("*.jsonl")):
                if path.stem not in spec.tables:
                    self.problem(f"seed/{path.name}", "", f"seed file for unknown table {path.stem!r}")
        start = Clock.model_validate(spec.clock).start
        for tname, info in infos.items():
            path = seed_dir / f"{tname}.jsonl"
            if not path.is_file():
                continue
            file = f"seed/{path.name}"
            seen_keys: dict[Any, int] = {}
            unique_seen: dict[str, dict[Any, int]] = {c: {} for c, s in info.spec.columns.items() if s.unique}
            for lineno, text in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
                if not text.strip():
                    continue
                try:
                    raw = json.loads(text)
                except json.JSONDecodeError as exc:
                    self._row_problem(file, lineno, f"not valid JSON: {exc.msg}")
                    continue
                if not isinstance(raw, dict):
                    self._row_problem(file, lineno, "a seed row is a JSON object")
                    continue
                row = self._seed_row(info, raw, file, lineno, start)
                if row is None:  # its key still counts, and its foreign keys are still checked
                    self.rejected.setdefault(tname, []).append((raw, lineno))
                    continue
                if info.pk in self.stand_ins.get(tname, ()):
                    rows[tname].append(row)
                    lines[tname].append(lineno)
                    continue
                key = info.key_in(row)
                if key in seen_keys:
                    self.problem(
                        file,
                        f"line {lineno}",
                        f"duplicate primary key {info.key_label(key)} (first on line {seen_keys[key]})",
                    )
                    continue
                seen_keys[key] = lineno
                for col, seen in unique_seen.items():
                    value = row[col]
                    if value is not None and value in seen:
                        self.problem(
                            file,
                            f"line {lineno}",
                            f"duplicate value {value!r} in unique column {col} (first on line {seen[value]})",
                        )
                    elif value is not None:
                        seen[value] = lineno
                rows[tname].append(row)
                lines[tname].append(lineno)
        self._check_foreign_keys(spec, infos, rows, lines)
        for (file, message), at in self._repeats.items():
            more = at[1:]
            also = ", ".join(map(str, more[:MAX_LINES])) + (
                f" and {len(more) - MAX_LINES} more" if len(more) > MAX_LINES else ""
            )
            self.problem(file, f"line {at[0]}", f"{message} (also on lines {also})" if more else message)
        return rows

    def _row_problem(self, file: str, lineno: int, message: str) -> None:
        """A seed row's problem; the same problem on several rows (one mistake, often in the table's
        definition) is reported once, at its first line, naming the others."""
        self._repeats.setdefault((file, message), []).append(lineno)

    def _seed_row(
        self, info: TableInfo, raw: dict[str, Any], file: str, lineno: int, now: str
    ) -> dict[str, Any] | None:
        ok = True
        for name in raw:
            if name not in info.spec.columns:
                self._row_problem(file, lineno, f"unknown column {name!r} for table {info.name}")
                ok = False
        row: dict[str, Any] = {}
        stand_ins = self.stand_ins.get(info.name, set())
        for name, col in info.spec.columns.items():
            if name in stand_ins:  # its definition is wrong: reported there, nothing to check against
                row[name] = raw.get(name)
                continue
            if name in raw:
                value = raw[name]
            elif col.default is not None:
                value = info.default(name, now)
            elif col.nullable:
                value = None
            else:
                self._row_problem(
                    file, lineno, f"missing value for column {name!r} (not nullable, no default)"
                )
                ok = False
                continue
            try:
                info.encode(name, value)
            except ValueProblem as exc:
                self._row_problem(file, lineno, str(exc))
                ok = False
            row[name] = value
        return row if ok else None

    def _check_foreign_keys(
        self,
        spec: DomainSpec,
        infos: dict[str, TableInfo],
        rows: dict[str, list[dict[str, Any]]],
        lines: dict[str, list[int]],
    ) -> None:
        values: dict[tuple[str, str], set[Any]] = {}
        for tname, table in spec.tables.items():
            for cname, col in table.columns.items():
                if not col.references or col.references.count(".") != 1:
                    continue
                rt, rc = col.references.split(".")
                if rt not in rows or rc not in spec.tables[rt].columns or rc in self.stand_ins.get(rt, ()):
                    continue
                if cname in self.stand_ins.get(tname, ()):
                    continue
                if (rt, rc) not in values:
                    kept = [r[rc] for r in rows[rt]]
                    values[(rt, rc)] = {*kept, *(_scalar(r.get(rc)) for r, _ in self.rejected.get(rt, []))}
                targets = values[(rt, rc)]
                refused = [(r, n) for r, n in self.rejected.get(tname, []) if _fits(infos[tname], cname, r)]
                every = sorted([*zip(rows[tname], lines[tname], strict=True), *refused], key=lambda r: r[1])
                for row, lineno in every:
                    value = row[cname]
                    if value is not None and value not in targets:
                        self._row_problem(
                            f"seed/{tname}.jsonl", lineno, f"{cname}={value!r} refers to no row of {rt}.{rc}"
                        )


def _scalar(value: Any) -> Any:
    """A value that can be a key (a set member); None for one that cannot."""
    return value if isinstance(value, str | int | float) else None


def _fits(info: TableInfo, column: str, raw: dict[str, Any]) -> bool:
    """A refused row's column holds a value of the column's kind (only then is its foreign key checked)."""
    if column not in raw or _scalar(raw[column]) is None:
        return False
    try:
        info.encode(column, raw[column])
    except ValueProblem:
        return False
    return True
