"""Loading a domain folder: parse, validate, compile, and report every problem at once.

`load_domain(ref)` takes a bundled domain's name or a folder path and returns a `Domain`, or
raises `SpecError` listing every problem with its file and location. `check_domain(ref)` returns
the same errors and the warnings (`lint.py`) without raising. Each mistake is reported once, at
its source. Design notes: docs/design/engine.md.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from .calls import CallRef, call_references, run_calls
from .compiler import CompileError, compile_tool
from .domain import Domain
from .errors import CallReferenceError, Problem, SpecError
from .fastschema import backtracking_patterns, bound_inputs, input_validator, unknown_keywords
from .folders import BUNDLED, domain_folders, domain_search_path, list_domain_dirs, local_roots, resolve
from .layout import layout_problems
from .lint import Spelling, literal_problems, lost_values, old_spellings
from .seedrows import SeedReader
from .spec import Column, DomainSpec, Fragment, LetStep, Step, Table, Task, Tool, UseStep
from .steps import CompiledTool
from .tables import TableInfo, add_indexes, build_tables, value_problem

__all__ = [
    "BUNDLED",
    "CheckReport",
    "check_domain",
    "domain_folders",
    "domain_search_path",
    "list_domain_dirs",
    "load_domain",
    "local_roots",
    "resolve",
]

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: how many calls of an unknown tool its problem names
MAX_PLACES = 11
#: a column standing in for one whose definition is wrong: it takes any value, so nothing cascades
_STAND_IN = Column(type="json", nullable=True)
_KEY_STAND_IN = Column(type="string", nullable=True)  # (a key is a string or an integer)
#: how the compiler names a step inside a fragment a tool uses: `operation[0] -> fragments.NAME[1]...`
_IN_FRAGMENT = " -> fragments."


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
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


@lru_cache(maxsize=4096)
def _schema_message(text: str) -> str | None:
    try:
        jsonschema.Draft202012Validator.check_schema(json.loads(text))
    except jsonschema.SchemaError as exc:
        return str(exc.message)
    return None


def _check_schema(schema: Any) -> None:
    """`Draft202012Validator.check_schema`, its verdict remembered by the schema's JSON text (a load
    checks each input schema twice, and generated domains share many)."""
    try:
        text = json.dumps(schema)
    except (TypeError, ValueError):  # (a YAML date in a schema: checked as it is)
        jsonschema.Draft202012Validator.check_schema(schema)
        return
    message = _schema_message(text)
    if message is not None:
        raise jsonschema.SchemaError(message)


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


class _Loader(SeedReader):
    def __init__(self, folder: Path, generated: bool = True):
        self.folder = folder
        self.generated = generated  # the tools' code generated (False: the reference path)
        self.problems: list[Problem] = []
        self.tables: dict[str, Table] = {}
        self.warnings: list[Problem] = []
        self.spellings: list[Spelling] = []  # old spellings in domain.yaml (also among the warnings)
        self.tool_positions: list[int] = []  # index in domain.yaml of each valid tool
        self.lines: dict[str, int] = {}  # task id -> its line in tasks.jsonl
        # what is wrong is reported once, at its source; these keep it from showing up again elsewhere
        self.stand_ins: dict[str, set[str]] = {}  # table -> columns whose definition is wrong
        self.invalid_tools: set[str] = set()  # tools whose definition is wrong
        self.stand_in_tools: list[tuple[str, Tool]] = []  # (label, what of it is right) of each
        self.rejected: dict[str, list[tuple[dict[str, Any], int]]] = {}  # table -> seed rows refused, lines
        self.seen: set[tuple[str, str]] = set()  # (location, message) of compile problems reported

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

    def compile_tools(self, spec: DomainSpec, infos: dict[str, TableInfo]) -> dict[str, CompiledTool]:
        file = "domain.yaml"
        compiled: dict[str, CompiledTool] = {}
        names: set[str] = set()
        wanted: set[tuple[str, str]] = set()
        for i, tool in enumerate(spec.tools):
            where = f"tools[{self.tool_positions[i]}] ({tool.name})"
            duplicate = tool.name in names
            names.add(tool.name)
            if duplicate:  # (its own problems are still reported; the first of the name is kept)
                self.problem(
                    file, where, f"duplicate tool name {tool.name!r}: every tool name must be unique"
                )
            checked = tool
            try:
                _check_schema(tool.input_schema)
                if tool.input_schema.get("type") != "object":
                    self.problem(file, f"{where}.input_schema", "the input schema must be `type: object`")
                for key in unknown_keywords(tool.input_schema):
                    self.problem(
                        file,
                        f"{where}.input_schema",
                        f"{key!r} is not a JSON Schema keyword (a typo, or an unquoted comma in YAML?)",
                    )
                backtracking = list(backtracking_patterns(tool.input_schema))
                for why in backtracking:
                    self.problem(file, f"{where}.input_schema", why)
                if backtracking:  # (never compiled: no agent input reaches a backtracking engine)
                    checked = tool.model_copy(update={"input_schema": {}})
            except jsonschema.SchemaError as exc:
                self.problem(file, f"{where}.input_schema", f"invalid JSON Schema: {exc.message}")
                checked = tool.model_copy(update={"input_schema": {}})  # `$args.x` is not checked against it
            if tool.output_schema is not None:
                try:
                    _check_schema(tool.output_schema)
                except jsonschema.SchemaError as exc:
                    self.problem(file, f"{where}.output_schema", f"invalid JSON Schema: {exc.message}")
            for at, message in literal_problems(
                tool.steps, "operation", infos, self.stand_ins, spec.fragments
            ):
                self.problem(file, f"{where}.{at}", message)
            try:
                ctool, indexed = compile_tool(checked, infos, spec.fragments, self.generated)
            except CompileError as exc:
                for e in exc.all:
                    self._compile_problem(file, where, e)
                continue
            if not duplicate:
                compiled[tool.name] = ctool
                wanted |= indexed
        for where, tool in self.stand_in_tools:
            for at, message in literal_problems(
                tool.steps, "operation", infos, self.stand_ins, spec.fragments
            ):
                self.problem(file, f"{where}.{at}", message)
            try:
                compile_tool(tool, infos, spec.fragments, self.generated)
            except CompileError as exc:
                for e in exc.all:
                    self._compile_problem(file, where, e)
        for name, fragment in spec.fragments.items():
            for at, message in literal_problems(
                fragment.steps, "steps", infos, self.stand_ins, spec.fragments
            ):
                self.problem(file, f"fragments.{name}.{at}", message)
            self._compile_fragment(spec, infos, name, fragment)
        add_indexes(infos, wanted)
        return compiled

    def _compile_fragment(
        self, spec: DomainSpec, infos: dict[str, TableInfo], name: str, fragment: Fragment
    ) -> None:
        """Compile a fragment on its own (through a tool that only uses it), so that one no tool uses
        is checked too; a problem tools already reported for it is not repeated."""
        probe = Tool(
            name="fragment",
            description="",
            kind="write",
            operation=[UseStep.model_validate({"use": name, "with": dict.fromkeys(fragment.params)})],
        )
        try:
            compile_tool(probe, infos, spec.fragments, self.generated)
        except CompileError as exc:
            for e in exc.all:
                if _IN_FRAGMENT in e.where:
                    self._compile_problem("domain.yaml", "", e)

    def _compile_problem(self, file: str, where: str, exc: CompileError) -> None:
        """A tool's compile problem; one inside a fragment it uses is the fragment's, reported once,
        at the fragment (every tool using it would otherwise repeat it)."""
        at = exc.where
        if _IN_FRAGMENT in at:
            inner = at.rsplit(_IN_FRAGMENT, 1)[1]  # "NAME[2].values.x"
            name, _, rest = inner.partition("[")
            location = f"fragments.{name}.steps[{rest}" if rest else f"fragments.{name}"
        else:
            location = f"{where}.{at}"
        if (location, exc.message) not in self.seen:
            self.seen.add((location, exc.message))
            self.problem(file, location, exc.message)

    def read_tasks(self, tools: set[str], validators: dict[str, Any]) -> list[Task]:
        path = self.folder / "tasks.jsonl"
        tasks: list[Task] = []
        if not path.is_file():
            return tasks
        file = "tasks.jsonl"
        unknown: dict[str, list[str]] = {}  # tool name -> the calls naming it
        ids: dict[str, int] = {}
        for lineno, text in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
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
                if call.name in self.invalid_tools:
                    continue  # its definition is wrong, and reported there
                if call.name not in tools:  # (a renamed tool: one problem, naming every call)
                    unknown.setdefault(call.name, []).append(f"{where} (task {task.id}).calls[{i}]")
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
        for name, places in unknown.items():
            also = (
                f" (also {', '.join(places[1:MAX_PLACES])}{' and more' if len(places) > MAX_PLACES else ''})"
            )
            self.problem(file, places[0], f"unknown tool {name!r}" + (also if len(places) > 1 else ""))
        return tasks

    def _check_reference(self, task: Task, index: int, ref: CallRef, where: str) -> None:
        target = ref.target(index)
        if isinstance(target, str):
            self.problem("tasks.jsonl", where, target)
        elif task.calls[target].expect_error:
            self.problem(
                "tasks.jsonl",
                where,
                f"{ref.text} refers to call {target}, which is expected to fail and has no result",
            )

    def lint(self, spec: DomainSpec) -> None:
        """Warnings: values that are lost, old spellings (see simulator/lint.py)."""
        file = "domain.yaml"
        parts = [
            (f"tools[{self.tool_positions[i]}] ({tool.name})", "operation", tool.steps)
            for i, tool in enumerate(spec.tools)
        ]
        parts += [(f"fragments.{name}", "steps", f.steps) for name, f in spec.fragments.items()]
        for where, at, steps in parts:
            for sub, message in lost_values(steps, at, spec.fragments):
                self.warnings.append(Problem(file, f"{where}.{sub}", message))
            for spelling in old_spellings(steps, at):
                self.spellings.append(Spelling(f"{where}.{spelling.at}", spelling.old, spelling.new))
                self.warnings.append(Problem(file, f"{where}.{spelling.at}", spelling.message))

    def check_reference_paths(self, domain: Domain) -> None:
        """Replay the gold calls of each task that refers to earlier results, to find references to
        fields those results do not have (only such tasks are replayed: the check costs their calls).
        A gold call that misbehaves is validation's finding (broken-gold), not a load problem: the
        replay stops there."""
        for task in domain.tasks:
            if not any(call_references(call.arguments) for call in task.calls):
                continue
            with domain.episode(seed=task.seed) as ep:
                try:
                    for step in run_calls(ep, task.calls, task.id):
                        unguarded = getattr(step.error, "unguarded", False)
                        if unguarded or step.ok == task.calls[step.index].expect_error:
                            break
                except CallReferenceError as exc:
                    self.problem("tasks.jsonl", f"line {self.lines[task.id]} (task {task.id})", str(exc))


@dataclass
class CheckReport:
    """What loading a domain found: the domain (None when there are errors), every error (each
    independent mistake once, at its source) and every warning (the domain loads, but a value is
    lost, or a spelling is old)."""

    folder: Path
    domain: Domain | None
    errors: list[Problem]
    warnings: list[Problem]
    spellings: list[Spelling] = field(default_factory=list)  # in domain.yaml, for `toolgym migrate`


def reference_forced() -> bool:
    """Whether `TOOLGYM_REFERENCE=1` puts every domain loaded on the reference path."""
    return os.environ.get("TOOLGYM_REFERENCE") == "1"


def check_domain(ref: str | Path, warnings: bool = True, *, generated: bool = True) -> CheckReport:
    """Load and compile a domain folder (or a bundled domain by name), collecting errors and (unless
    `warnings` is false) warnings. `generated=False` (or `TOOLGYM_REFERENCE=1`): every tool call
    runs the plain interpreted path, no generated code (the reference the generated code equals)."""
    folder = resolve(ref)
    loader = _Loader(folder, generated and not reference_forced())
    spec = loader.read_spec()
    if spec is None:
        return CheckReport(folder, None, loader.problems, loader.warnings, loader.spellings)
    # every input array and free-text string gets a size bound (what agents see, too): `maxItems`
    # and `maxLength` where none was given
    tools_bounded = [t.model_copy(update={"input_schema": bound_inputs(t.input_schema)}) for t in spec.tools]
    spec = spec.model_copy(update={"tools": tools_bounded})
    loader.tables = dict(spec.tables)
    if not spec.tables:
        return CheckReport(folder, None, loader.problems, loader.warnings, loader.spellings)
    _, infos = build_tables(loader.check_tables(spec), loader.generated)
    loader.check_snapshot(spec)
    tools = loader.compile_tools(spec, infos)
    if warnings:
        loader.lint(spec)
    validators: dict[str, jsonschema.Draft202012Validator] = {}
    for tool in spec.tools:
        try:
            _check_schema(tool.input_schema)
        except jsonschema.SchemaError:
            continue
        validators.setdefault(tool.name, input_validator(tool.input_schema))
    seed = loader.read_seed(spec, infos)
    tasks = loader.read_tasks({t.name for t in spec.tools}, validators)
    if loader.problems:
        return CheckReport(folder, None, loader.problems, loader.warnings, loader.spellings)
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
        generated=loader.generated,
    )
    loader.check_reference_paths(domain)
    return CheckReport(
        folder, None if loader.problems else domain, loader.problems, loader.warnings, loader.spellings
    )


def load_domain(ref: str | Path, *, generated: bool = True) -> Domain:
    """Load and compile a domain folder (or a bundled domain by name). Raises SpecError with every
    problem. `generated=False` (or `TOOLGYM_REFERENCE=1`): the reference path (`check_domain`)."""
    report = check_domain(ref, warnings=False, generated=generated)
    if report.domain is None:
        raise SpecError(report.errors)
    return report.domain
