"""The loader's tool checks: each tool's input and output schemas, the literals of its steps and
its compilation, with each fragment compiled on its own too (a problem inside a fragment is
reported once, at the fragment); and the warnings of the steps (values lost, old spellings).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import jsonschema

from ..codegen.fastschema import backtracking_patterns, unknown_keywords
from ..errors import Problem
from ..plan.compiler import CompileError, compile_tool
from ..plan.runsteps import CompiledTool
from ..plan.tables import TableInfo, add_indexes
from ._loadspec import SpecReader
from .lint import Spelling, literal_problems, lost_values, old_spellings
from .spec import DomainSpec, Fragment, Tool, UseStep

#: how the compiler names a step inside a fragment a tool uses: `operation[0] -> fragments.NAME[1]...`
_IN_FRAGMENT = " -> fragments."


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


class ToolChecker(SpecReader):
    """Tools and fragments checked and compiled."""

    # set by the loader (simulator.format.loader)
    generated: bool
    seen: set[tuple[str, str]]
    spellings: list[Spelling]

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

    def lint(self, spec: DomainSpec) -> None:
        """Warnings: values that are lost, old spellings (see simulator/format/lint.py)."""
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
