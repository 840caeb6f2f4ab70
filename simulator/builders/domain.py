"""A whole domain from code (tables, fragments, tools, seed rows, tasks) as a spec or a folder.

`DomainBuilder` collects the parts; `spec()` gives the `DomainSpec`, `write(folder)` the folder and
`load()` the loaded `Domain`. Argument strings in gold calls are literals (`"$5"` is written
`"$$5"`); `calls_ref(0, "id")` is the `"$calls.0.id"` reference to an earlier call's result.
Example: docs/design/engine.md.
"""

from __future__ import annotations

import json
import tempfile
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ValidationError

from ..format._loadtasks import LINE_FIELDS, TaskHead
from ..format.callsyntax import PREFIX, CallRef
from ..format.spec import DomainSpec, Fragment, Table, Tool
from ..lang.numbers import finite
from .steps import Step, steps_raw

if TYPE_CHECKING:
    from ..format.loader import CheckReport
    from ..runtime.domain import Domain

__all__ = [
    "NOW_DEFAULT",
    "CallRef",
    "DomainBuilder",
    "call",
    "calls_ref",
    "clock",
    "column",
    "counter_ids",
    "dump_jsonl",
    "dump_yaml",
    "hash_ids",
    "inputs",
    "param",
    "pattern_ids",
]

#: a column default of the simulated clock (`default: $now`)
NOW_DEFAULT = object()


def column(
    type: str,  # noqa: A002 - the format's own word
    *,
    nullable: bool = False,
    unique: bool = False,
    enum: Sequence[Any] | None = None,
    default: Any = None,
    references: str | None = None,
    description: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A column: `column("string", enum=["a", "b"], default="a")`; `default=NOW_DEFAULT` is `$now`.

    `extra` passes keys this function does not name yet (newer column options) through as written.
    """
    if default == "$now":
        raise ValueError("a literal default of '$now' cannot be written; NOW_DEFAULT is the clock")
    options = {
        "nullable": nullable or None,
        "unique": unique or None,
        "enum": None if enum is None else list(enum),
        "default": "$now" if default is NOW_DEFAULT else default,
        "references": references,
        "description": description,
    }
    return {"type": type, **_given(options), **extra}


def hash_ids(prefix: str = "") -> dict[str, Any]:
    """Generated keys: `prefix` + 8 hex digits from the episode's seed (the default scheme)."""
    return {"scheme": "hash", "prefix": prefix}


def counter_ids(prefix: str = "", *, start: int = 1, width: int = 0) -> dict[str, Any]:
    """Generated keys: `prefix` + a running number from `start`, zero-padded to `width` digits."""
    return {"scheme": "counter", "prefix": prefix, "start": start, "width": width}


def pattern_ids(pattern: str, prefix: str = "") -> dict[str, Any]:
    """Generated keys: `prefix` + `pattern` (`A` letter, `9` digit, ... drawn from the seed): `AAA999`."""
    return {"scheme": "pattern", "prefix": prefix, "pattern": pattern}


def uuid_ids() -> dict[str, Any]:
    """Generated keys: a version-4 UUID drawn from the episode's seed (for `format: uuid` keys)."""
    return {"scheme": "uuid"}


def clock(start: str, tick_seconds: int = 60, format: str | None = None) -> dict[str, Any]:  # noqa: A002
    """The simulated clock; `$now` is rendered like `start`, or with the strftime `format`."""
    return {"start": start, "tick_seconds": tick_seconds, **_given({"format": format})}


def param(type: str | None = None, description: str | None = None, **keywords: Any) -> dict[str, Any]:  # noqa: A002
    """A JSON Schema for one argument: `param("integer", minimum=1)`; keywords as JSON Schema spells them."""
    return {**_given({"type": type, "description": description}), **keywords}


def _given(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options that were given (not None), in order."""
    return {k: v for k, v in options.items() if v is not None}


def inputs(
    properties: Mapping[str, Mapping[str, Any]],
    required: Sequence[str] = (),
    *,
    additional: bool = False,
) -> dict[str, Any]:
    """A tool's input schema: an object of these properties (no others, unless `additional`)."""
    unknown = [name for name in required if name not in properties]
    if unknown:
        raise ValueError(f"required arguments {unknown} are not among the properties {sorted(properties)}")
    schema: dict[str, Any] = {"type": "object", "properties": {k: dict(v) for k, v in properties.items()}}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = additional
    return schema


def calls_ref(index: int, *path: str | int) -> CallRef:
    """`"$calls.N.path"`: a path of gold call N's result (`calls_ref(0, "booking_id")`), resolved
    at replay by `scoring.calls` (this `CallRef` is the syntax, `simulator.format.callsyntax`)."""
    if index < 0:
        raise ValueError(f"a call index is 0 or more, got {index}")
    segments = tuple(str(s) for s in path)
    for segment in segments:
        if not segment or "." in segment:
            raise ValueError(f"a path segment is a non-empty key without '.', got {segment!r}")
    return CallRef(PREFIX + ".".join([str(index), *segments]), index, segments)


def _argument(value: Any) -> Any:
    """A gold call's argument as written in tasks.jsonl: a leading `$` of a literal string doubled."""
    if isinstance(value, CallRef):
        return value.text
    if isinstance(value, str):
        return "$" + value if value.startswith("$") else value
    if isinstance(value, Mapping):
        return {str(k): _argument(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_argument(v) for v in value]
    if isinstance(value, float) and not finite(value):
        raise ValueError(f"an argument number must be finite, got {value}")
    return value


def call(
    name: str, arguments: Mapping[str, Any] | None = None, *, expect_error: bool = False
) -> dict[str, Any]:
    """A gold call; argument strings are literals, `calls_ref(...)` refers to an earlier result."""
    raw: dict[str, Any] = {"name": name, "arguments": _argument(dict(arguments or {}))}
    if expect_error:
        raw["expect_error"] = True
    return raw


#: characters `str.splitlines` breaks a line at that JSON leaves raw: escaped so a row stays one line
_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def dump_jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    """One JSON object a line, non-ASCII text kept readable; a line break inside a string is escaped."""
    lines = []
    for r in rows:
        text = json.dumps(r, ensure_ascii=False)
        for char, escaped in _LINE_BREAKS.items():
            text = text.replace(char, escaped)
        lines.append(text + "\n")
    return "".join(lines)


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper, with every string that holds a control character or a Unicode line
    break double-quoted (escaped): plain and single-quoted scalars fold `\x85` into a space."""


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    risky = any(unicodedata.category(c)[0] in "CZ" and c != " " for c in text)
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style='"' if risky else None)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(data: Any) -> str:
    """YAML text that loads back to exactly `data` (key order kept, any string quoted as needed)."""
    return yaml.dump(
        data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False
    )


def _checked(model: type[BaseModel], raw: dict[str, Any], what: str) -> dict[str, Any]:
    """`raw` if it is a valid `model`; else ValueError naming what and each problem's place in it
    (raised where the builder is called, not at load)."""
    try:
        model.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}" for err in exc.errors()[:5]
        )
        raise ValueError(f"{what}: {problems}") from None
    return raw


def _checked_task(raw: dict[str, Any], what: str) -> dict[str, Any]:
    """`raw` if it is a task line (its fields the format's, an id, an instruction and a seed, ignored
    columns as `table.column`); else ValueError. Its gold calls are checked when the folder is
    loaded by the grading side (`scoring.load_domain`), against the tools."""
    _checked(TaskHead, raw, what)
    problems = [f"{name}: not a field of a task" for name in raw if name not in LINE_FIELDS]
    problems += [
        f"ignore_columns: entry {entry!r} is not `table.column`"
        for entry in raw.get("ignore_columns", ())
        if not isinstance(entry, str) or entry.count(".") != 1
    ]
    if problems:
        raise ValueError(f"{what}: {'; '.join(problems[:5])}")
    return raw


class DomainBuilder:
    """Collects a domain's parts; `raw()` is domain.yaml's content, `write(folder)` the folder."""

    def __init__(
        self,
        name: str,
        version: str,
        *,
        description: str = "",
        policy: str | None = None,
        clock: Mapping[str, Any] | None = None,
        answers: str | None = None,
    ) -> None:
        self.head: dict[str, Any] = {"name": name, "version": version, "description": description}
        if clock is not None:
            self.head["clock"] = dict(clock)
        if answers is not None:
            self.head["answers"] = answers
        self.policy = policy
        self.tables: dict[str, dict[str, Any]] = {}
        self.fragments: dict[str, dict[str, Any]] = {}
        self.tools: list[dict[str, Any]] = []
        self.rows: dict[str, list[dict[str, Any]]] = {}
        self.tasks: list[dict[str, Any]] = []

    def table(
        self,
        name: str,
        primary_key: str | Sequence[str],
        columns: Mapping[str, Mapping[str, Any]],
        *,
        id_prefix: str = "",
        ids: Mapping[str, Any] | None = None,
        description: str | None = None,
        **extra: Any,
    ) -> DomainBuilder:
        """A table; `primary_key` one column or a list (a composite key); `ids` how `create`
        generates a key (`hash_ids`, `counter_ids`, `pattern_ids`); `extra` passes newer options."""
        if name in self.tables:
            raise ValueError(f"table {name!r} is defined twice")
        raw: dict[str, Any] = {}
        if description is not None:
            raw["description"] = description
        raw["primary_key"] = primary_key if isinstance(primary_key, str) else list(primary_key)
        if id_prefix:
            raw["id_prefix"] = id_prefix
        if ids is not None:
            raw["ids"] = dict(ids)
        raw["columns"] = {k: dict(v) for k, v in columns.items()}
        raw.update(extra)
        self.tables[name] = _checked(Table, raw, f"table {name!r}")
        return self

    def fragment(self, name: str, params: Sequence[str], steps: Step | Sequence[Step]) -> DomainBuilder:
        """Shared steps, inlined where a tool says `use(name, {...})`."""
        if name in self.fragments:
            raise ValueError(f"fragment {name!r} is defined twice")
        raw = {"params": list(params), "steps": steps_raw(steps)}
        self.fragments[name] = _checked(Fragment, raw, f"fragment {name!r}")
        return self

    def tool(
        self,
        name: str,
        description: str,
        kind: str,
        input_schema: Mapping[str, Any],
        operation: Step | Sequence[Step],
        *,
        output_schema: Mapping[str, Any] | None = None,
    ) -> DomainBuilder:
        """A tool: what the agent sees and the steps it runs (`kind`: read or write)."""
        if any(t["name"] == name for t in self.tools):
            raise ValueError(f"tool {name!r} is defined twice")
        raw: dict[str, Any] = {
            "name": name,
            "description": description,
            "kind": kind,
            "input_schema": dict(input_schema),
        }
        if output_schema is not None:
            raw["output_schema"] = dict(output_schema)
        body = steps_raw(operation)
        raw["operation"] = body[0] if isinstance(operation, Step) else body
        self.tools.append(_checked(Tool, raw, f"tool {name!r}"))
        return self

    def seed(self, table: str, rows: Sequence[Mapping[str, Any]]) -> DomainBuilder:
        """Seed rows of a table (stored as written: seed files hold data, not expressions)."""
        self.rows.setdefault(table, []).extend(dict(r) for r in rows)
        return self

    def task(
        self,
        id: str,  # noqa: A002 - the format's own word
        instruction: str,
        calls: Sequence[Mapping[str, Any]],
        *,
        answer_facts: Sequence[Any] = (),
        ignore_columns: Sequence[str] = (),
        **extra: Any,
    ) -> DomainBuilder:
        """A task: gold `call(...)`s, answer facts, ignored columns; `extra`: other Task fields."""
        raw: dict[str, Any] = {
            "id": id,
            "instruction": instruction,
            "calls": [dict(c) for c in calls],
            "answer_facts": list(answer_facts),
            "ignore_columns": list(ignore_columns),
            **extra,
        }
        self.tasks.append(_checked_task(raw, f"task {id!r}"))
        return self

    def raw(self) -> dict[str, Any]:
        """domain.yaml's content."""
        out = dict(self.head)
        if self.policy is not None:
            out["policy"] = self.policy
        out["tables"] = self.tables
        if self.fragments:
            out["fragments"] = self.fragments
        out["tools"] = self.tools
        return out

    def spec(self) -> DomainSpec:
        """The domain as the validated pydantic model (ValidationError names what is wrong)."""
        return DomainSpec.model_validate(self.raw())

    def write(self, folder: str | Path, *, overwrite: bool = False) -> Path:
        """domain.yaml, policy.md, seed/<table>.jsonl and tasks.jsonl in `folder` (made if missing).

        A folder that already holds a domain is refused (FileExistsError) unless `overwrite`; then
        the files this builder writes are replaced and seed files of tables it no longer has are
        removed, so nothing stale is loaded with it. Other files are left alone.
        """
        root = Path(folder)
        written = ["domain.yaml", "policy.md", "tasks.jsonl", "seed"]
        present = [name for name in written if (root / name).exists()]
        if present and not overwrite:
            raise FileExistsError(
                f"{root} already holds {', '.join(present)}; pass overwrite=True to replace them"
            )
        (root / "seed").mkdir(parents=True, exist_ok=True)
        for stale in (root / "seed").glob("*.jsonl"):
            if stale.stem not in self.rows:
                stale.unlink()
        raw = self.raw()
        policy = raw.pop("policy", None)
        (root / "domain.yaml").write_text(dump_yaml(raw), encoding="utf-8")
        if policy is not None:
            (root / "policy.md").write_text(policy, encoding="utf-8")
        elif (root / "policy.md").exists():
            (root / "policy.md").unlink()
        for table, rows in self.rows.items():
            (root / "seed" / f"{table}.jsonl").write_text(dump_jsonl(rows), encoding="utf-8")
        if self.tasks:
            (root / "tasks.jsonl").write_text(dump_jsonl(self.tasks), encoding="utf-8")
        elif (root / "tasks.jsonl").exists():
            (root / "tasks.jsonl").unlink()
        return root

    def check(self) -> CheckReport:
        """What `toolgym check` says of the domain: every error and warning, each at its source."""
        from ..format.loader import check_domain

        with tempfile.TemporaryDirectory(prefix=f"toolgym-build-{self.head['name']}-") as tmp:
            return check_domain(self.write(Path(tmp) / str(self.head["name"])))

    def load(self) -> Domain:
        """Write to a temporary folder and load it (SpecError lists every problem, as `check` does)."""
        from ..format.loader import load_domain

        with tempfile.TemporaryDirectory(prefix=f"toolgym-build-{self.head['name']}-") as tmp:
            return load_domain(self.write(Path(tmp) / str(self.head["name"])))
