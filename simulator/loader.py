"""Loading a domain folder: parse, validate, compile, and report every problem at once.

`load_domain(ref)` takes a bundled domain's name or a folder path and returns a `Domain`, or
raises `SpecError` listing every problem with its file and location: malformed YAML, unknown
step keys, tools naming unknown tables or columns, invalid JSON Schemas, foreign keys to
nowhere, duplicate tool names, seed rows that break the schema, tasks calling unknown tools
or with arguments their tool rejects.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from pydantic import BaseModel, ValidationError

from .compiler import CompileError, compile_tool
from .domain import Domain
from .errors import CallReferenceError, Problem, SpecError, TaskError
from .fastschema import bound_arrays, input_validator, unknown_keywords
from .gold import call_references, reference_target, replay_gold
from .spec import Clock, Column, DomainSpec, Table, Task, Tool
from .steps import CompiledTool
from .tables import TableInfo, ValueProblem, add_indexes, build_tables

BUNDLED = Path(__file__).resolve().parent.parent / "domains"
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def local_roots() -> list[Path]:
    """The entries of $TOOLGYM_DOMAINS (os.pathsep-separated): domain folders, or folders of them."""
    return [Path(p) for p in os.environ.get("TOOLGYM_DOMAINS", "").split(os.pathsep) if p]


def domain_search_path() -> list[Path]:
    """Where domains are looked up: the entries of $TOOLGYM_DOMAINS, then the bundled domains' folder."""
    return [*local_roots(), BUNDLED]


def domain_folders(root: Path) -> list[Path]:
    """The domain folders a search-path entry gives: itself if it is one, else its children that are."""
    if (root / "domain.yaml").is_file():
        return [root]
    if not root.is_dir():
        return []
    return [child for child in sorted(root.iterdir()) if (child / "domain.yaml").is_file()]


def resolve(ref: str | Path) -> Path:
    """A domain reference (a bundled name or a folder path) -> the domain folder."""
    path = Path(ref)
    if (path / "domain.yaml").is_file():
        return path
    if isinstance(ref, str) and os.sep not in ref and "/" not in ref:
        for root in domain_search_path():
            if root.name == ref and (root / "domain.yaml").is_file():
                return root
            if (root / ref / "domain.yaml").is_file():
                return root / ref
    known = ", ".join(sorted(p.name for p in list_domain_dirs())) or "none"
    raise SpecError(
        [
            Problem(
                str(ref),
                "",
                f"no domain folder (with domain.yaml) here, nor a bundled domain of that name; bundled: {known}",
            )
        ]
    )


def list_domain_dirs() -> list[Path]:
    seen: dict[str, Path] = {}
    for root in domain_search_path():
        for folder in domain_folders(root):
            seen.setdefault(folder.name, folder)
    return list(seen.values())


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML loader that refuses duplicate keys instead of keeping the last one."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


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


class _Loader:
    def __init__(self, folder: Path):
        self.folder = folder
        self.problems: list[Problem] = []
        self.tables: dict[str, Table] = {}
        self.tool_positions: list[int] = []  # index in domain.yaml of each valid tool
        self.lines: dict[str, int] = {}  # task id -> its line in tasks.jsonl

    def problem(self, file: str, where: str, message: str) -> None:
        self.problems.append(Problem(file, where, message))

    def read_spec(self) -> DomainSpec | None:
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
            if table is not None:
                tables[name] = table
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
        head = {k: v for k, v in raw.items() if k not in ("tables", "tools")}
        try:
            return DomainSpec.model_validate({**head, "tables": {}, "tools": []}).model_copy(
                update={"tables": tables, "tools": tools}
            )
        except ValidationError as exc:
            self.problems.extend(_pydantic_problems(file, "", exc))
            return None

    def check_tables(self, spec: DomainSpec) -> None:
        file = "domain.yaml"
        for tname, table in spec.tables.items():
            where = f"tables.{tname}"
            for name in (tname, *table.columns):
                if not IDENTIFIER.match(name) or name.startswith("_toolgym"):
                    self.problem(
                        file,
                        where,
                        f"{name!r} is not a valid table or column name (letters, digits, '_'; not starting with a digit or `_toolgym`)",
                    )
            if table.primary_key not in table.columns:
                self.problem(
                    file, f"{where}.primary_key", f"primary key {table.primary_key!r} is not a column"
                )
            elif table.columns[table.primary_key].type not in ("string", "integer"):
                self.problem(file, f"{where}.primary_key", "a primary key is a string or integer column")
            for cname, col in table.columns.items():
                self._check_column(spec, file, f"{where}.columns.{cname}", col)

    def _check_column(self, spec: DomainSpec, file: str, where: str, col: Column) -> None:
        if col.references:
            if col.references.count(".") != 1:
                self.problem(file, f"{where}.references", f"{col.references!r} is not `table.column`")
                return
            rt, rc = col.references.split(".")
            target = spec.tables.get(rt)
            if target is None:
                self.problem(file, f"{where}.references", f"foreign key to unknown table {rt!r}")
            elif rc not in target.columns:
                self.problem(file, f"{where}.references", f"foreign key to unknown column {rt}.{rc}")
            elif rc != target.primary_key and not target.columns[rc].unique:
                self.problem(
                    file,
                    f"{where}.references",
                    f"foreign key to {rt}.{rc}, which is neither the key nor unique",
                )

    def compile_tools(self, spec: DomainSpec, infos: dict[str, TableInfo]) -> dict[str, CompiledTool]:
        file = "domain.yaml"
        compiled: dict[str, CompiledTool] = {}
        wanted: set[tuple[str, str]] = set()
        for i, tool in enumerate(spec.tools):
            where = f"tools[{self.tool_positions[i]}] ({tool.name})"
            if tool.name in compiled:
                self.problem(
                    file, where, f"duplicate tool name {tool.name!r}: every tool name must be unique"
                )
                continue
            try:
                jsonschema.Draft202012Validator.check_schema(tool.input_schema)
                if tool.input_schema.get("type") != "object":
                    self.problem(file, f"{where}.input_schema", "the input schema must be `type: object`")
                for key in unknown_keywords(tool.input_schema):
                    self.problem(
                        file,
                        f"{where}.input_schema",
                        f"{key!r} is not a JSON Schema keyword (a typo, or an unquoted comma in YAML?)",
                    )
            except jsonschema.SchemaError as exc:
                self.problem(file, f"{where}.input_schema", f"invalid JSON Schema: {exc.message}")
            if tool.output_schema is not None:
                try:
                    jsonschema.Draft202012Validator.check_schema(tool.output_schema)
                except jsonschema.SchemaError as exc:
                    self.problem(file, f"{where}.output_schema", f"invalid JSON Schema: {exc.message}")
            try:
                ctool, indexed = compile_tool(tool, infos, spec.fragments)
            except CompileError as exc:
                self.problem(file, f"{where}.{exc.where}", exc.message)
                continue
            compiled[tool.name] = ctool
            wanted |= indexed
        add_indexes(infos, wanted)
        return compiled

    def read_seed(self, spec: DomainSpec, infos: dict[str, TableInfo]) -> dict[str, list[dict[str, Any]]]:
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
            for lineno, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if not text.strip():
                    continue
                try:
                    raw = json.loads(text)
                except json.JSONDecodeError as exc:
                    self.problem(file, f"line {lineno}", f"not valid JSON: {exc.msg}")
                    continue
                if not isinstance(raw, dict):
                    self.problem(file, f"line {lineno}", "a seed row is a JSON object")
                    continue
                row = self._seed_row(info, raw, file, lineno, start)
                if row is None:
                    continue
                key = row[info.pk]
                if key in seen_keys:
                    self.problem(
                        file,
                        f"line {lineno}",
                        f"duplicate primary key {info.pk}={key!r} (first on line {seen_keys[key]})",
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
        return rows

    def _seed_row(
        self, info: TableInfo, raw: dict[str, Any], file: str, lineno: int, now: str
    ) -> dict[str, Any] | None:
        ok = True
        for name in raw:
            if name not in info.spec.columns:
                self.problem(file, f"line {lineno}", f"unknown column {name!r} for table {info.name}")
                ok = False
        row: dict[str, Any] = {}
        for name, col in info.spec.columns.items():
            if name in raw:
                value = raw[name]
            elif col.default is not None:
                value = info.default(name, now)
            elif col.nullable:
                value = None
            else:
                self.problem(
                    file, f"line {lineno}", f"missing value for column {name!r} (not nullable, no default)"
                )
                ok = False
                continue
            try:
                info.encode(name, value)
            except ValueProblem as exc:
                self.problem(file, f"line {lineno}", str(exc))
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
                if rt not in rows or rc not in spec.tables[rt].columns:
                    continue
                if (rt, rc) not in values:
                    values[(rt, rc)] = {r[rc] for r in rows[rt]}
                targets = values[(rt, rc)]
                for row, lineno in zip(rows[tname], lines[tname], strict=True):
                    value = row[cname]
                    if value is not None and value not in targets:
                        self.problem(
                            f"seed/{tname}.jsonl",
                            f"line {lineno}",
                            f"{cname}={value!r} refers to no row of {rt}.{rc}",
                        )

    def read_tasks(self, tools: set[str], validators: dict[str, Any]) -> list[Task]:
        path = self.folder / "tasks.jsonl"
        tasks: list[Task] = []
        if not path.is_file():
            return tasks
        file = "tasks.jsonl"
        ids: dict[str, int] = {}
        for lineno, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not text.strip():
                continue
            where = f"line {lineno}"
            try:
                raw = json.loads(text)
            except json.JSONDecodeError as exc:
                self.problem(file, where, f"not valid JSON: {exc.msg}")
                continue
            task = _validate(Task, raw, file, where, self.problems)
            if task is None:
                continue
            if task.id in ids:
                self.problem(file, where, f"duplicate task id {task.id!r} (first on line {ids[task.id]})")
                continue
            ids[task.id] = lineno
            self.lines[task.id] = lineno
            for i, call in enumerate(task.calls):
                if call.name not in tools:
                    self.problem(file, f"{where} (task {task.id}).calls[{i}]", f"unknown tool {call.name!r}")
                    continue
                refs = call_references(call.arguments)
                for ref in refs:
                    self._check_reference(task, i, ref, f"{where} (task {task.id}).calls[{i}].arguments")
                if call.expect_error or call.name not in validators or refs:
                    continue
                for err in validators[call.name].iter_errors(call.arguments):
                    self.problem(
                        file,
                        f"{where} (task {task.id}).calls[{i}]",
                        f"arguments rejected by {call.name}'s input schema: {err.message}",
                    )
            for entry in task.ignore_columns:
                table, _, column = entry.partition(".")
                if table not in self.tables or column not in self.tables[table].columns:
                    self.problem(
                        file, f"{where} (task {task.id}).ignore_columns", f"unknown column {entry!r}"
                    )
            tasks.append(task)
        return tasks

    def _check_reference(self, task: Task, index: int, ref: str, where: str) -> None:
        target = reference_target(ref, index)
        if isinstance(target, str):
            self.problem("tasks.jsonl", where, target)
        elif task.calls[target].expect_error:
            self.problem(
                "tasks.jsonl",
                where,
                f"{ref} refers to call {target}, which is expected to fail and has no result",
            )

    def check_reference_paths(self, domain: Domain) -> None:
        """Replay the gold calls of each task that refers to earlier results, to find references to
        fields those results do not have (only such tasks are replayed: the check costs their calls).
        A gold call that fails is validation's finding (broken-gold), not a load problem."""
        for task in domain.tasks:
            if not any(call_references(call.arguments) for call in task.calls):
                continue
            with domain.episode(seed=task.seed) as ep:
                try:
                    replay_gold(ep, task)
                except CallReferenceError as exc:
                    self.problem("tasks.jsonl", f"line {self.lines[task.id]} (task {task.id})", str(exc))
                except TaskError:
                    pass


def load_domain(ref: str | Path) -> Domain:
    """Load and compile a domain folder (or a bundled domain by name). Raises SpecError with every problem."""
    folder = resolve(ref)
    loader = _Loader(folder)
    spec = loader.read_spec()
    if spec is None:
        raise SpecError(loader.problems)
    # every input array gets a size bound (what agents see, too): `maxItems` where none was given
    tools_bounded = [t.model_copy(update={"input_schema": bound_arrays(t.input_schema)}) for t in spec.tools]
    spec = spec.model_copy(update={"tools": tools_bounded})
    loader.tables = dict(spec.tables)
    before = len(loader.problems)
    loader.check_tables(spec)
    if len(loader.problems) > before or not spec.tables:
        raise SpecError(loader.problems)  # tables must be sound before tools and seed rows can be checked
    _, infos = build_tables(spec.tables)
    tools = loader.compile_tools(spec, infos)
    validators: dict[str, jsonschema.Draft202012Validator] = {}
    for tool in spec.tools:
        try:
            jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        except jsonschema.SchemaError:
            continue
        validators.setdefault(tool.name, input_validator(tool.input_schema))
    seed = loader.read_seed(spec, infos)
    tasks = loader.read_tasks({t.name for t in spec.tools}, validators)
    if loader.problems:
        raise SpecError(loader.problems)
    policy_file = folder / "policy.md"
    policy = policy_file.read_text(encoding="utf-8") if policy_file.is_file() else (spec.policy or "")
    domain = Domain(
        spec=spec,
        path=folder,
        policy=policy,
        tables=infos,
        tools=tools,
        validators=validators,
        seed_rows=seed,
        tasks=tasks,
    )
    loader.check_reference_paths(domain)
    if loader.problems:
        raise SpecError(loader.problems)
    return domain
