"""Reading domain.yaml for the loader: a YAML mapping with unique keys, validated part by part,
each part that is wrong reported and replaced by a stand-in (so that what uses it is still
checked); then the tables checked: names, keys, foreign keys and the snapshot layout.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from ..errors import Problem
from ..plan.tables import value_problem
from .layout import layout_problems
from .spec import Column, DomainSpec, Fragment, LetStep, Step, Table, Tool

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: a column standing in for one whose definition is wrong: it takes any value, so nothing cascades
_STAND_IN = Column(type="json", nullable=True)
_KEY_STAND_IN = Column(type="string", nullable=True)  # (a key is a string or an integer)


def _key_columns(table: Table) -> list[str]:
    """The primary key's columns (one, or several for a composite key)."""
    key: Any = table.primary_key
    return [key] if isinstance(key, str) else list(key)


_STEP: TypeAdapter[Any] = TypeAdapter(Step)


def _stand_in_tool(raw: Any) -> Tool | None:
    """A tool whose definition is wrong, made compilable: each step that is wrong replaced by a
    `let` binding its `as:` name to null, each tool field that is wrong by a default (`kind: write`,
    no input schema: arguments unchecked). None when it has no operation to check."""
    if not isinstance(raw, dict):
        return None
    ops = raw.get("operation")
    ops = [ops] if isinstance(ops, dict) else ops if isinstance(ops, list) else []
    steps: list[Any] = []
    for op in ops:
        try:
            steps.append(_STEP.validate_python(op))
        except ValidationError:
            bind = op.get("as") if isinstance(op, dict) else None
            steps.append(LetStep(let=bind if isinstance(bind, str) else "_", value=None))
    defaults = {"name": "tool", "description": "", "kind": "write", "input_schema": {}}
    fields = {k: v for k, v in raw.items() if k in Tool.model_fields and k != "operation"}
    for _ in range(len(fields) + 1):
        try:
            tool = Tool.model_validate({**defaults, **fields, "operation": []})
        except ValidationError as exc:
            bad = {err["loc"][0] for err in exc.errors() if err["loc"]}
            fields = {k: v for k, v in fields.items() if k not in bad}
            continue
        return tool.model_copy(update={"operation": steps}) if steps else None
    return None


class _UniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML loader that refuses duplicate keys instead of keeping the last one (on libyaml, the
    C parser, where PyYAML has it: four times faster on a generated domain's domain.yaml)."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    mapping: dict[Any, Any] = loader.construct_mapping(node, deep=deep)
    return mapping


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _pydantic_problems(file: str, prefix: str, exc: ValidationError) -> list[Problem]:
    out = []
    for err in exc.errors():
        loc = _loc(tuple(err["loc"]))
        where = f"{prefix}.{loc}" if prefix and loc else prefix or loc
        out.append(Problem(file, where, err["msg"]))
    return out


def _validate(model: type[BaseModel], raw: Any, file: str, where: str, problems: list[Problem]) -> Any:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems.extend(_pydantic_problems(file, where, exc))
        return None


class SpecReader:
    """domain.yaml read and its tables checked; the loader's problems, where every part reports."""

    # set by the loader (simulator.format.loader)
    folder: Path
    problems: list[Problem]
    warnings: list[Problem]
    stand_ins: dict[str, set[str]]
    tool_positions: list[int]
    invalid_tools: set[str]
    stand_in_tools: list[tuple[str, Tool]]

    def problem(self, file: str, where: str, message: str) -> None:
        self.problems.append(Problem(file, where, message))

    def read_spec(self) -> DomainSpec | None:
        """domain.yaml as a spec; each part that is wrong is reported and replaced by a stand-in
        (a table keeps its name and good columns, a fragment its parameters), so that what uses it
        is still checked, and a mistake is reported once, where it is made."""
        file = "domain.yaml"
        try:
            raw = yaml.load((self.folder / file).read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            where = f"line {mark.line + 1}" if mark else ""
            self.problem(file, where, f"not valid YAML: {getattr(exc, 'problem', None) or exc}")
            return None
        if not isinstance(raw, dict):
            self.problem(file, "", "must be a mapping with name, version, tables and tools")
            return None
        tables: dict[str, Table] = {}
        raw_tables = raw.get("tables")
        if not isinstance(raw_tables, dict) or not raw_tables:
            self.problem(file, "tables", "a domain needs a mapping of tables")
            raw_tables = {}
        for name, traw in raw_tables.items():
            table = _validate(Table, traw, file, f"tables.{name}", self.problems)
            tables[str(name)] = table if table is not None else self._stand_in_table(str(name), traw)
        fragments: dict[str, Fragment] = {}
        raw_fragments = raw.get("fragments", {})
        if not isinstance(raw_fragments, dict):
            self.problem(file, "fragments", "fragments are a mapping of name: {params, steps}")
            raw_fragments = {}
        for name, fraw in raw_fragments.items():
            fragment = _validate(Fragment, fraw, file, f"fragments.{name}", self.problems)
            if fragment is None:  # its uses are still checked against its parameters
                params = fraw.get("params") if isinstance(fraw, dict) else None
                if not isinstance(params, list) or not all(isinstance(p, str) for p in params):
                    params = []
                fragment = Fragment(params=params, steps=[])
            fragments[str(name)] = fragment
        tools: list[Tool] = []
        raw_tools = raw.get("tools")
        if not isinstance(raw_tools, list):
            self.problem(file, "tools", "a domain needs a list of tools")
            raw_tools = []
        for i, toolraw in enumerate(raw_tools):
            label = f"tools[{i}]"
            if isinstance(toolraw, dict) and isinstance(toolraw.get("name"), str):
                label += f" ({toolraw['name']})"
            tool = _validate(Tool, toolraw, file, label, self.problems)
            if tool is not None:
                tools.append(tool)
                self.tool_positions.append(i)
            else:
                if isinstance(toolraw, dict) and isinstance(toolraw.get("name"), str):
                    self.invalid_tools.add(toolraw["name"])  # tasks calling it are not told it is unknown
                stand_in = _stand_in_tool(toolraw)
                if stand_in is not None:  # its other steps are still checked
                    self.stand_in_tools.append((label, stand_in))
        head = {k: v for k, v in raw.items() if k not in ("tables", "tools", "fragments")}
        try:
            spec = DomainSpec.model_validate({**head, "tables": {}, "tools": []})
        except ValidationError as exc:
            self.problems.extend(_pydantic_problems(file, "", exc))
            bad = {err["loc"][0] for err in exc.errors() if err["loc"]}
            head = {k: v for k, v in head.items() if k not in bad}
            head.setdefault("name", "invalid")
            head.setdefault("version", "0.0.0")
            try:
                spec = DomainSpec.model_validate({**head, "tables": {}, "tools": []})
            except ValidationError:
                return None
        return spec.model_copy(update={"tables": tables, "tools": tools, "fragments": fragments})

    def _stand_in_table(self, name: str, raw: Any) -> Table:
        """A table whose definition is wrong, made usable: its good columns as written, each bad
        one a nullable `json` stand-in (remembered: nothing is checked against it), and the key
        column as named (a stand-in when it is missing)."""
        raw = raw if isinstance(raw, dict) else {}
        stand_ins = self.stand_ins.setdefault(name, set())
        columns: dict[str, Column] = {}
        raw_columns = raw.get("columns")
        for cname, craw in (raw_columns if isinstance(raw_columns, dict) else {}).items():
            try:
                columns[str(cname)] = Column.model_validate(craw)
            except ValidationError:
                columns[str(cname)] = _STAND_IN
                stand_ins.add(str(cname))
        fields = {k: v for k, v in raw.items() if k in Table.model_fields and k != "columns"}
        for _ in range(len(fields) + 2):  # each pass drops the fields in error; the key is then set
            try:
                table = Table.model_validate({**fields, "columns": {}})
                break
            except ValidationError as exc:
                bad = {err["loc"][0] for err in exc.errors() if err["loc"]}
                fields = {k: v for k, v in fields.items() if k not in bad}
                fields.setdefault("primary_key", next(iter(columns), "id"))
        else:  # pragma: no cover - every field of a table is optional but the key, which is set
            table = Table(primary_key=next(iter(columns), "id"), columns={})
        for key in _key_columns(table):
            if key not in columns or key in stand_ins:
                columns[key] = _KEY_STAND_IN
                stand_ins.add(key)
        return table.model_copy(update={"columns": columns})

    def check_tables(self, spec: DomainSpec) -> dict[str, Table]:
        """Report what is wrong with the tables; return them fit to build tools against: a foreign
        key that points nowhere dropped, a key that is not a column added as a stand-in column."""
        file = "domain.yaml"
        buildable: dict[str, Table] = {}
        self._case_collisions(file, "tables", "tables", list(spec.tables))
        for tname, table in spec.tables.items():
            where = f"tables.{tname}"
            stand_ins = self.stand_ins.setdefault(tname, set())
            self._case_collisions(file, where, f"table {tname!r}: columns", list(table.columns))
            for name in (tname, *table.columns):
                if not IDENTIFIER.match(name) or name.startswith("_toolgym"):
                    self.problem(
                        file,
                        where,
                        f"{name!r} is not a valid table or column name (letters, digits, '_'; not starting with a digit or `_toolgym`)",
                    )
            columns = dict(table.columns)
            for key in _key_columns(table):
                if key not in table.columns:
                    self.problem(file, f"{where}.primary_key", f"primary key {key!r} is not a column")
                    columns[key] = _KEY_STAND_IN
                    stand_ins.add(key)
                elif key not in stand_ins and table.columns[key].type not in ("string", "integer"):
                    self.problem(file, f"{where}.primary_key", "a primary key is a string or integer column")
            for cname, col in table.columns.items():
                if cname not in stand_ins and not self._check_column(
                    spec, file, f"{where}.columns.{cname}", col
                ):
                    columns[cname] = col.model_copy(update={"references": None})
                problem = None if col.default == "$now" else value_problem(col.type, col.default)
                if problem is not None:  # (a warning: a create that leaves the column out fails)
                    self.warnings.append(
                        Problem(
                            file,
                            f"{where}.columns.{cname}.default",
                            f"this default can never be stored: {problem}",
                        )
                    )
            buildable[tname] = table.model_copy(update={"columns": columns})
        return buildable

    def _case_collisions(self, file: str, where: str, what: str, names: list[str]) -> None:
        """Report each name equal to an earlier one ignoring case: SQLite treats table and column
        names case-insensitively, so `Name` and `name` cannot both be built."""
        first: dict[str, str] = {}
        for name in names:
            earlier = first.setdefault(name.lower(), name)
            if earlier != name:
                self.problem(
                    file,
                    where,
                    f"{what} {earlier!r} and {name!r} differ only in case, and SQLite treats names "
                    "case-insensitively: rename one",
                )

    def _check_column(self, spec: DomainSpec, file: str, where: str, col: Column) -> bool:
        """Report a foreign key that points nowhere; False when there is one."""
        if not col.references:
            return True
        if col.references.count(".") != 1:
            self.problem(file, f"{where}.references", f"{col.references!r} is not `table.column`")
            return False
        rt, rc = col.references.split(".")
        target = spec.tables.get(rt)
        if target is None:
            self.problem(file, f"{where}.references", f"foreign key to unknown table {rt!r}")
        elif rc not in target.columns:
            self.problem(file, f"{where}.references", f"foreign key to unknown column {rt}.{rc}")
        elif rc in self.stand_ins.get(rt, ()):
            return True  # the target column is wrong itself, and reported there
        elif _key_columns(target) != [rc] and not target.columns[rc].unique:  # (part of a composite key: no)
            self.problem(
                file,
                f"{where}.references",
                f"foreign key to {rt}.{rc}, which is neither the key nor unique",
            )
        else:
            return True
        return False

    def check_snapshot(self, spec: DomainSpec) -> None:
        """Report each table or column the snapshot layout names that the tables lack."""
        if spec.snapshot is None:
            return
        columns = {name: dict(t.columns) for name, t in spec.tables.items()}
        keys = {name: t.key_columns for name, t in spec.tables.items()}
        for where, message in layout_problems(spec.snapshot, columns, keys):
            self.problem("domain.yaml", where, message)
