"""A domain folder from a schema and its tools, written only through `simulator.builders`.

    builder = build_domain(plan_domain, schema, toolset, seed=0)   # tables + tools
    builder.seed(table, rows) ...                                   # rows from toolgen.synth.seed
    write_folder(builder, folder, plan_domain, schema, toolset, sources)

The folder holds domain.yaml, seed/<table>.jsonl, tasks.jsonl (when there are tasks), policy.md
(from the tools and their preconditions) and README.md (what the domain was generated from).
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import json
import re
import tarfile
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from simulator.builders import DomainBuilder, Step, clock, column, counter_ids
from toolgen.model import PlannedDomain
from toolgen.naming import words
from toolgen.pure import NOT_MODELLED, NOTHING

from .effects import Repoint, StateChange
from .keys import KEY_START, key_prefix
from .schema import DomainSchema, TablePlan
from .tools import EVENTS_TABLE, FINAL_STATES, Toolset

__all__ = [
    "CLOCK_START",
    "VERSION",
    "build_domain",
    "policy_text",
    "readme_text",
    "source_licenses",
    "write_folder",
]

#: when every generated domain's clock starts (seed timestamps lie around it)
CLOCK_START = "2026-03-02T09:00:00Z"
VERSION = "1.0.0"
UNKNOWN = "unknown"
_LICENSE_YAML = re.compile(r"^\s*license:\s*\n((?:\s+\S.*\n){1,4})", re.MULTILINE)
_LICENSE_JSON = re.compile(r'"license"\s*:\s*\{([^{}]*)\}')
_NAME_YAML = re.compile(r"^\s+name:\s*['\"]?(.+?)['\"]?\s*$", re.MULTILINE)
_NAME_JSON = re.compile(r'"name"\s*:\s*"((?:[^"\\]|\\.)*)"')


def build_domain(plan: PlannedDomain, schema: DomainSchema, toolset: Toolset) -> DomainBuilder:
    """The domain's tables, tools and policy in a `DomainBuilder` (no seed rows or tasks yet)."""
    apis = ", ".join(plan.apis) or "its specs"
    description = f"Generated from {apis}: {', '.join(plan.entities[:8]) or 'records'}."
    d = DomainBuilder(
        plan.name,
        VERSION,
        description=description,
        clock=clock(CLOCK_START),
        policy=policy_text(plan, schema, toolset),
    )
    for table in schema.tables.values():
        columns = {
            c.name: column(
                c.type,
                nullable=c.nullable,
                enum=c.enum,
                default=c.default,
                references=c.references,
                description=c.description,
            )
            for c in table.columns.values()
        }
        key_type = table.columns[table.primary_key].type
        ids = table.ids or (
            counter_ids(key_prefix(table.entity), start=KEY_START) if key_type == "string" else None
        )
        d.table(
            table.name,
            table.primary_key,
            columns,
            ids=ids,
            description=table.description or f"{table.entity.replace('_', ' ')} records",
        )
    for tool in toolset.tools:
        # each step's YAML as its own tree: a part built once and used twice (a filter list in
        # several sorted reads, a page size in limit and offset) would be written as a YAML alias
        steps = [Step(json.loads(json.dumps(step.raw))) for step in tool.steps]
        d.tool(tool.name, tool.description, tool.kind, tool.input_schema, steps)
    return d


def policy_text(plan: PlannedDomain, schema: DomainSchema, toolset: Toolset) -> str:
    """policy.md: what the agent may do, and the rules each write tool enforces."""
    lines = [
        f"# {plan.name}",
        "",
        f"You help a user with {', '.join(plan.apis) or 'this service'} through the tools below.",
        "",
        "- Act only on records that exist: look ids up with the read tools rather than guessing them.",
        "- Change only what the user asked for; an update changes only the fields you give.",
        "- When a tool refuses a request, tell the user why instead of working around it.",
        "",
        "## Rules the tools enforce",
        "",
    ]
    for tool in toolset.tools:
        table = _table_of(schema, tool.op_id) if tool.op_id not in schema.tableless else None
        change = tool.effect if isinstance(tool.effect, StateChange) else None
        if tool.compiled_as == "status" and table is not None and change is not None:
            noun = table.entity.replace("_", " ")
            what = " ".join(words(change.column))
            rule = f"- `{tool.name}` changes a {noun}'s {what}; it refuses one already in that state"
            if isinstance(change.value, bool):
                rule = f"- `{tool.name}` sets a {noun}'s {what} to {str(change.value).lower()}; it refuses one already so"
            finals = _finals(table) if change.column == table.status else list(change.finals)
            if change.sources:
                rule += f", and one that is not {' or '.join(str(v) for v in change.sources)}"
            elif finals:
                rule += f", and one that is {', '.join(finals)} (final states)"
            lines.append(rule + ".")
        elif tool.compiled_as == "reference" and table is not None and isinstance(tool.effect, Repoint):
            other = schema.tables[tool.effect.table].entity.replace("_", " ")
            noun = table.entity.replace("_", " ")
            lines.append(f"- `{tool.name}` points a {noun} at another {other}; that {other} must exist.")
        elif tool.compiled_as == NOTHING:
            lines.append(f"- `{tool.name}` changes nothing and returns nothing.")
        elif tool.compiled_as == "delete":
            lines.append(f"- `{tool.name}` deletes for good; it refuses a record that does not exist.")
        elif tool.compiled_as == "update":
            lines.append(f"- `{tool.name}` changes only the fields given; a field given as null is cleared.")
        elif tool.compiled_as == "event":
            lines.append(f"- `{tool.name}` is recorded in the {EVENTS_TABLE} against an existing record.")
    if lines[-1] == "":
        lines.append("- Reads never change anything; writes need every required argument.")
    return "\n".join(lines) + "\n"


def _finals(table: TablePlan) -> list[str]:
    status = table.status
    enum = table.columns[status].enum if status else None
    return [v for v in enum or [] if isinstance(v, str) and v.lower() in FINAL_STATES]


def _table_of(schema: DomainSchema, op_id: str) -> TablePlan | None:
    op = schema.operations.get(op_id)
    return schema.table_of(op) if op is not None else None


def readme_text(
    plan: PlannedDomain,
    schema: DomainSchema,
    toolset: Toolset,
    licenses: Mapping[str, str],
    *,
    seed: int,
    rows: Mapping[str, int],
) -> str:
    """README.md: where the domain came from (apis, files, licenses), its tables, what was left out."""
    sources = sorted({op.source for op in schema.operations.values()})
    lines = [
        f"# {plan.name}",
        "",
        "Generated by `toolgym generate` from API descriptions; every tool is compiled from one of",
        "their operations (see the table below).",
        "",
        "## Sources",
        "",
        "| api | source | license |",
        "|---|---|---|",
    ]
    for source in sources:
        apis = sorted({op.api for op in schema.operations.values() if op.source == source})
        lines.append(
            f"| {_cell(', '.join(apis))} | `{_cell(source)}` | {_cell(licenses.get(source, UNKNOWN))} |"
        )
    lines += [
        "",
        f"Seed rows generated with seed {seed}.",
        "",
        "## Tables",
        "",
        "| table | rows | columns |",
        "|---|---|---|",
    ]
    for table in schema.tables.values():
        lines.append(f"| `{table.name}` | {rows.get(table.name, 0)} | {len(table.columns)} |")
    lines += ["", "## Tools", "", "| tool | operation | compiled as |", "|---|---|---|"]
    for tool in toolset.tools:
        lines.append(f"| `{tool.name}` | `{_cell(tool.op_id)}` | {tool.compiled_as} |")
    unmodelled = [s for s in toolset.not_compiled if s.reason.startswith(NOT_MODELLED)]
    if unmodelled:
        lines += [
            "",
            "## Not modelled",
            "",
            "What the spec describes that the tools cannot do, per operation.",
            "",
        ]
        lines += ["| tool | operation | what it does |", "|---|---|---|"]
        for skipped in unmodelled:
            op = schema.operations.get(skipped.id)
            said = skipped.reason[len(NOT_MODELLED) :].lstrip(": ")
            name = schema.tool_names.get(skipped.id, op.name if op is not None else skipped.id)
            lines.append(f"| `{_cell(name)}` | `{_cell(skipped.id)}` | {_cell(said)} |")
    others = [s for s in toolset.not_compiled if s not in unmodelled]
    if others:
        lines += ["", "## Not compiled", "", "| operation | reason |", "|---|---|"]
        for skipped in others:
            lines.append(f"| `{_cell(skipped.id)}` | {_cell(skipped.reason)} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return " ".join(str(text).replace("|", "\\|").split())


def write_folder(
    builder: DomainBuilder,
    folder: Path,
    plan: PlannedDomain,
    schema: DomainSchema,
    toolset: Toolset,
    licenses: Mapping[str, str],
    *,
    seed: int,
) -> Path:
    """The domain folder: domain.yaml, seed, tasks (via the builder), policy.md and README.md."""
    builder.write(folder)  # domain.yaml, policy.md, seed/, tasks.jsonl
    rows = {table: len(r) for table, r in builder.rows.items()}
    (folder / "README.md").write_text(
        readme_text(plan, schema, toolset, licenses, seed=seed, rows=rows), encoding="utf-8"
    )
    return folder


# -- licenses as the specs declare them ------------------------------------------------------------


def _license_in(text: str) -> str:
    """`info.license.name` of a spec's text (YAML or JSON), else "unknown"."""
    head = text[:200_000]
    match = _LICENSE_JSON.search(head)
    if match:
        name = _NAME_JSON.search(match.group(1))
        if name:
            return name.group(1).strip() or UNKNOWN
    match = _LICENSE_YAML.search(head)
    if match:
        name = _NAME_YAML.search(match.group(1))
        if name:
            try:
                value = yaml.safe_load(name.group(1))
            except yaml.YAMLError:
                value = name.group(1)
            return str(value).strip() or UNKNOWN
    return UNKNOWN


@lru_cache(maxsize=4096)
def _file_license(path: str) -> str:
    try:
        return _license_in(Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return UNKNOWN


def source_licenses(sources: Iterable[str]) -> dict[str, str]:
    """Each source's license as its spec declares it (`info.license.name`), else "unknown".

    A source is a path or `ARCHIVE!member`; each archive is read once for all its members.
    """
    out: dict[str, str] = {}
    members: dict[str, set[str]] = {}
    for source in set(sources):
        archive, sep, member = source.partition("!")
        if sep:
            members.setdefault(archive, set()).add(member)
        else:
            out[source] = _file_license(source)
    for archive, wanted in members.items():
        found: dict[str, str] = {}
        try:
            with tarfile.open(archive, "r:*") as tar:
                for info in tar:
                    if info.isfile() and info.name in wanted:
                        handle = tar.extractfile(info)
                        if handle is not None:
                            found[info.name] = _license_in(handle.read().decode("utf-8", "replace"))
        except (OSError, tarfile.TarError):
            pass
        for member in wanted:
            out[f"{archive}!{member}"] = found.get(member, UNKNOWN)
    return out


def describe_tables(schema: DomainSchema) -> dict[str, Any]:
    """{table: {columns, primary_key}}: a compact view for reports."""
    return {
        t.name: {"primary_key": t.primary_key, "columns": list(t.columns)} for t in schema.tables.values()
    }
