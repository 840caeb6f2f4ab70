"""policy.md: what the agent may do and the rules the tools enforce, and a probe that they do.

    text = policy_text(plan, schema, toolset)     # each rule said exactly as the tool is compiled
    probe = probe_policy(folder)                  # each rule tried on the domain's seed: false ones listed

A rule says what its tool refuses (a state already there, a final state, a state it does not
leave, a row that does not exist) and nothing it does not; `probe_policy` calls the tool on rows
in each state the rule names, and on a key that names no row, and lists each rule that did not hold.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from simulator import load_domain
from simulator.errors import ToolError
from toolgen.model import PlannedDomain
from toolgen.naming import plural_phrase, words
from toolgen.pure import NOTHING

from .effects import Repoint, StateChange
from .schema import DomainSchema, TablePlan
from .tools import ToolPlan, Toolset

__all__ = ["PolicyProbe", "policy_text", "probe_policy"]

#: words opening with a vowel letter said with a "y" or "w" sound (a user, a one-time code)
_SAID_WITH_Y = ("uni", "use", "usa", "usu", "uti", "uri", "eu", "one", "once")
#: a key that names no row, in any format and in those a schema may ask for
_MISSING = "no-such-record-0"
_MISSING_BY_FORMAT = {
    "uuid": "00000000-0000-4000-8000-000000000000",
    "email": "nobody@example.invalid",
    "uri": "https://example.invalid/none",
    "date": "1900-01-01",
    "date-time": "1900-01-01T00:00:00Z",
}
_CLEARED = re.compile(r"; its (?P<names>.+) given as null is cleared$")
_RULE = re.compile(r"^- `(?P<tool>[^`]+)` (?P<rule>.+)\.$")
_SETS = re.compile(
    r"^sets .+? to (?P<value>.+?); it refuses one already (?:so|(?P=value))"
    r"(?:, and one that is not (?P<sources>.+)|, and one that is (?P<finals>.+) \(a final state\))?$"
)


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
        rule = _rule(tool, table, schema)
        if rule is not None:
            lines.append(f"- `{tool.name}` {rule}.")
    if lines[-1] == "":
        lines.append("- Reads never change anything; writes need every required argument.")
    return "\n".join(lines) + "\n"


def _rule(tool: ToolPlan, table: TablePlan | None, schema: DomainSchema) -> str | None:
    """What `tool` enforces, exactly as it is compiled (`tools.py`): the state it sets and the
    states it refuses, the row a reference must name, ...; None for a tool that enforces nothing."""
    if tool.compiled_as == NOTHING:
        return "changes nothing and returns nothing"
    if table is None:
        return None
    noun = _a(table.entity.replace("_", " "))
    change = tool.effect if isinstance(tool.effect, StateChange) else None
    if tool.compiled_as == "status" and change is not None:
        what = " ".join(words(change.column))
        if change.aspect:
            what = f"{change.aspect} {what}"
        if isinstance(change.value, bool):
            rule = f"sets {noun}'s {what} to {str(change.value).lower()}; it refuses one already so"
        else:
            rule = f"sets {noun}'s {what} to {change.value}; it refuses one already {change.value}"
        if change.sources:
            rule += f", and one that is not {' or '.join(str(v) for v in change.sources)}"
        elif change.finals:
            finals = " or ".join(str(v) for v in change.finals)
            rule += f", and one that is {finals} (a final state)"
        return rule
    if tool.compiled_as == "reference" and isinstance(tool.effect, Repoint):
        other = schema.tables[tool.effect.table].entity.replace("_", " ")
        return f"points {noun} at another {other}; that {other} must exist"
    if tool.compiled_as == "delete":
        if tool.steps and "delete" in tool.steps[0].raw:  # (no lookup first: a filter)
            many = plural_phrase(table.entity.replace("_", " "))
            return f"deletes for good the {many} its arguments match; none matching is no error"
        return f"deletes {noun} for good; it refuses one that does not exist"
    if tool.compiled_as == "update":
        cleared = [" ".join(words(arg)) for arg in _clearable(tool, table)]
        rule = f"changes only the fields given of {noun}"
        if len(cleared) == 1:
            rule += f"; its {cleared[0]} given as null is cleared"
        elif cleared:
            rule += f"; its {', '.join(cleared[:-1])} or {cleared[-1]} given as null is cleared"
        return rule
    if tool.compiled_as == "event":
        return f"records the action against {noun}, which must exist"
    return None


def _a(noun: str) -> str:
    vowel = noun[:1].lower() in "aeiou" and not noun.lower().startswith(_SAID_WITH_Y)
    return f"{'an' if vowel else 'a'} {noun}"


def _properties(tool: ToolPlan) -> dict[str, Any]:
    props = tool.input_schema.get("properties")
    return {k: v for k, v in props.items() if isinstance(v, dict)} if isinstance(props, dict) else {}


def _nullable(schema: dict[str, Any]) -> bool:
    """Whether an argument's schema lets it be null (an enum without null does not)."""
    kind = schema.get("type")
    enum = schema.get("enum")
    if isinstance(enum, list) and None not in enum:
        return False
    return kind == "null" or (isinstance(kind, list) and "null" in kind)


def _clearable(tool: ToolPlan, table: TablePlan) -> list[str]:
    """The arguments an update writes to a column that may be null, and that may be given as null."""
    props = _properties(tool)
    out: list[str] = []
    for step in tool.steps:
        patch = step.raw.get("patch") if "update" in step.raw else None
        for column, value in (patch or {}).items() if isinstance(patch, dict) else ():
            arg = value.removeprefix("$args.") if isinstance(value, str) else None
            plan = table.columns.get(column)
            if arg is None or plan is None or column == table.primary_key or not plan.nullable:
                continue
            if _nullable(props.get(arg, {})) and arg not in out:
                out.append(arg)
    return out


def _table_of(schema: DomainSchema, op_id: str) -> TablePlan | None:
    op = schema.operations.get(op_id)
    return schema.table_of(op) if op is not None else None


@dataclass
class PolicyProbe:
    """What `probe_policy` found: the rules tried, the ones no seed row could try, the false ones."""

    probed: int = 0
    untried: int = 0
    false: list[str] = field(default_factory=list)


def probe_policy(folder: Path) -> PolicyProbe:
    """Each rule of `folder`'s policy.md tried on a fresh episode of its seed: a refused state
    must be refused and an allowed one changed to the rule's value; a field the rule clears,
    given as null, must be cleared; a delete, a reference or a recorded action given a key that
    names no row must be refused. Arguments a rule does not concern come from a gold call of the
    tool (tasks.jsonl); a rule whose tool cannot be called so is counted as untried."""
    domain = load_domain(folder)
    raw = yaml.safe_load((folder / "domain.yaml").read_text(encoding="utf-8"))
    tools = {t["name"]: t for t in raw.get("tools", [])}
    examples = _examples(folder)
    found = PolicyProbe()
    for line in (folder / "policy.md").read_text(encoding="utf-8").splitlines():
        m = _RULE.match(line)
        if m is None or m["tool"] not in tools:
            continue
        probe = _Probe.of(domain, tools[m["tool"]], examples.get(m["tool"], {}))
        rule = m["rule"]
        results: list[str | None] = []
        if probe is None:
            pass
        elif (sets := _SETS.match(rule)) is not None:
            results = probe.states(sets)
        elif (cleared := _CLEARED.search(rule)) is not None:
            results = probe.nulls(set(re.split(r", | or ", cleared["names"])))
        elif "does not exist" in rule or "must exist" in rule:
            results = probe.missing(refused=True)
        elif rule.endswith("none matching is no error"):
            results = probe.missing(refused=False)
        found.untried += not results
        found.probed += bool(results)
        found.false += [f"{folder.name}: `{m['tool']}` {rule}: {r}" for r in results if r]
    return found


def _examples(folder: Path) -> dict[str, dict[str, Any]]:
    """Each tool's arguments in the first gold call that names no earlier call's result."""
    path = folder / "tasks.jsonl"
    out: dict[str, dict[str, Any]] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    for line in lines:
        for call in json.loads(line).get("calls", []):
            arguments = call.get("arguments") or {}
            if call.get("name") not in out and "$calls" not in json.dumps(arguments):
                out[call["name"]] = arguments
    return out


@dataclass
class _Probe:
    """One tool that first finds its row by arguments: the table, column -> argument of that
    lookup, the state column its first check reads, and a gold call's arguments."""

    domain: Any
    tool: dict[str, Any]
    table: str
    keys: dict[str, str]
    exact: bool
    state: str | None
    example: dict[str, Any]

    @classmethod
    def of(cls, domain: Any, tool: dict[str, Any], example: dict[str, Any]) -> _Probe | None:
        steps = tool.get("operation") or []
        first = steps[0] if steps and isinstance(steps[0], dict) else {}
        table = next((first[k] for k in ("get", "delete", "update") if k in first), None)
        where = first.get("where")
        if table is None or not isinstance(where, list):
            return None
        keys: dict[str, str] = {}
        for cond in where:
            value = cond.get("value")
            if isinstance(value, str) and value.startswith("$args."):
                keys[cond["column"]] = value.removeprefix("$args.")
        if not keys:
            return None
        exact = all(c.get("op") == "eq" for c in where) and "get" in first
        state = None
        check = steps[1].get("require") if len(steps) > 1 and isinstance(steps[1], dict) else None
        operands = check.get("ne") if isinstance(check, dict) else None
        if isinstance(operands, list) and str(operands[0]).startswith(f"${first.get('as')}."):
            state = str(operands[0]).split(".", 1)[1]
        return cls(domain, tool, str(table), keys, exact, state, example)

    def _arguments(self, row: dict[str, Any]) -> dict[str, Any] | None:
        """The gold call's arguments naming `row`; None when a required one is still missing."""
        arguments = {**self.example, **{arg: row[col] for col, arg in self.keys.items()}}
        return None if set(self.tool["input_schema"].get("required", [])) - set(arguments) else arguments

    def _episode(self) -> Any:
        return self.domain.episode(seed=0)

    def _rows(self) -> list[dict[str, Any]]:
        """The seed's rows of the table that the lookup can name (no key column null)."""
        episode = self._episode()
        try:
            rows = episode.export().get(self.table, [])
        finally:
            episode.close()
        return [row for row in rows if all(row.get(col) is not None for col in self.keys)]

    def _call(self, arguments: dict[str, Any]) -> str | None:
        """None when the call went through, else the tool's error."""
        episode = self._episode()
        try:
            episode.call(self.tool["name"], arguments)
            return None
        except ToolError as exc:
            return str(exc)
        finally:
            episode.close()

    def states(self, sets: re.Match[str]) -> list[str | None]:
        """One row of each state: refused when the rule refuses that state, else changed."""
        if self.state is None or not self.exact:
            return []
        said = sets["value"]
        refused = {said} | set((sets["finals"] or "").split(" or ")) - {""}
        allowed = set(sets["sources"].split(" or ")) if sets["sources"] else None
        results: list[str | None] = []
        tried: set[str] = set()
        for row in self._rows():
            state = _said(row.get(self.state), said in ("true", "false"))
            arguments = self._arguments(row)
            if state in tried or arguments is None:
                continue
            tried.add(state)
            must_refuse = state in refused or (allowed is not None and state not in allowed)
            error = self._call(arguments)
            if (error is None) == must_refuse:
                results.append(
                    f"a row that is {state} was {'changed' if error is None else f'refused: {error}'}"
                )
            else:
                results.append(None)
        return results

    def nulls(self, names: set[str]) -> list[str | None]:
        """Each field the rule `names`, given as null: the call must clear it."""
        rows = self._rows()
        steps = self.tool.get("operation") or []
        patch = next((s.get("patch") for s in steps if isinstance(s, dict) and "update" in s), None)
        arguments = self._arguments(rows[0]) if rows else None
        if arguments is None or not self.exact or not isinstance(patch, dict):
            return []
        key = {col: rows[0].get(col) for col in self.keys}
        results: list[str | None] = []
        for column, value in patch.items():
            arg = value.removeprefix("$args.") if isinstance(value, str) else None
            if arg is None or " ".join(words(arg)) not in names:
                continue
            episode = self._episode()
            try:
                episode.call(self.tool["name"], {**arguments, arg: None})
                row = next(
                    r for r in episode.export()[self.table] if all(r.get(c) == v for c, v in key.items())
                )
                results.append(None if row.get(column) is None else f"{arg} given as null was kept")
            except ToolError as exc:
                results.append(f"{arg} given as null was refused: {exc}")
            finally:
                episode.close()
        return results

    def missing(self, refused: bool) -> list[str | None]:
        """A key that names no row: the call must be `refused` (or go through)."""
        required = set(self.tool["input_schema"].get("required", []))
        rows = self._rows()
        if self.example and not required - set(self.example):
            arguments: dict[str, Any] | None = dict(
                self.example
            )  # (a gold call names a row as the tool does)
        else:
            arguments = self._arguments(rows[0]) if rows else None
        arg = next(iter(self.keys.values()))
        if arguments is None:
            return []
        arguments = {k: v for k, v in arguments.items() if k in required or k == arg or k in self.example}
        missing = _missing_value(self.tool["input_schema"].get("properties", {}).get(arg) or {})
        if missing is None:
            return []
        arguments[arg] = missing
        error = self._call(arguments)
        if (error is not None) == refused:
            return [None]
        return [f"a key that names no row was {'accepted' if refused else f'refused: {error}'}"]


def _missing_value(schema: dict[str, Any]) -> Any:
    """A value of `schema`'s type and format that names no seed row; None when the schema pins
    its values (an enum, a pattern)."""
    if "enum" in schema or "pattern" in schema or "const" in schema:
        return None
    kind = schema.get("type")
    if kind in ("integer", "number"):
        return 987654321
    if kind == "array":
        items = schema.get("items")
        item = _missing_value(items if isinstance(items, dict) else {})
        return None if item is None else [item]
    return _MISSING_BY_FORMAT.get(str(schema.get("format")), _MISSING)


def _said(value: Any, truth: bool) -> str:
    """A row's state as a rule says it (a 0/1 of a true/false state as false/true)."""
    if truth and isinstance(value, bool | int):
        return str(bool(value)).lower()
    return str(value)
