"""Runnable steps: what a compiled operation is made of, and how a call runs them.

Each step kind of the operation language has a runnable class (`Run`): the control steps
(`require`, `let`, `for_each`, `when`, `use`, `return`) are here, the reads in `readsteps.py`, the
writes in `writesteps.py`. `compile_steps` makes a step list one generated function (each step writing
its own lines where it can, `Run.emit`); `run_steps` and `run_body` are what it must equal.
`CompiledTool.execute` is a tool call's whole operation.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..codegen.emit import StepSource
from ..errors import ToolError
from ..format.spec import Tool
from ..lang.expressions import Compiled, Env, EvalError, brief
from ..runtime.budget import charge
from ._query import MISSING, Runtime
from .tables import BIND_ERRORS, ValueProblem

#: a list of steps as one function of the runtime and the environment (`compile_steps`)
Body = Callable[[Runtime, Env], Any]


class Run:
    """A runnable step. `yields`: True for a data step, whose value the call returns when it is
    the last step; None for a step that yields only a non-null value; False otherwise."""

    bind: str | None = None
    yields: bool | None = False

    def run(self, rt: Runtime, env: Env) -> Any:
        raise NotImplementedError

    def run_unread(self, rt: Runtime, env: Env) -> None:
        """`run` where nothing reads the step's value (`compile_steps` knows): the same effects and
        errors; a step may skip building its value."""
        self.run(rt, env)

    def emit(self, src: StepSource, keep: bool) -> str | None:
        """Lines of `src` doing what `run` does (`run_unread`, unless `keep`), and the expression of its
        value; None when the step is called instead (`compile_steps`)."""
        return None


class ReturnSignal(Exception):
    def __init__(self, value: Any):
        self.value = value


@dataclass
class RequireRun(Run):
    cond: Compiled
    error: Callable[[Env], str]

    def run(self, rt: Runtime, env: Env) -> Any:
        if not self.cond(env):
            raise ToolError(self.error(env))
        return None


@dataclass
class LetRun(Run):
    value: Compiled
    bind: str | None

    def run(self, rt: Runtime, env: Env) -> Any:
        return self.value(env)


@dataclass
class ForEachRun(Run):
    items: Compiled
    name: str
    index: str | None
    steps: list[Run]
    bind: str | None
    _body: Body | None = field(default=None, init=False, repr=False, compare=False)

    def run(self, rt: Runtime, env: Env) -> Any:
        items = self.items(env)
        if items is None:
            items = []
        if not isinstance(items, list):
            raise EvalError(f"for_each: expected a list, got {brief(items)}")
        charge(len(items))
        body = self._body
        if body is None:
            body = self._body = compile_steps(self.steps)
        collected = []
        name, index = self.name, self.index
        for i, item in enumerate(items):
            env[name] = item
            if index:
                env[index] = i
            collected.append(body(rt, env))
        return collected

    def emit(self, src: StepSource, keep: bool) -> str | None:
        """`run` written out, its body's steps inside the loop (`write_steps`); the list of their
        values is built only when read (`keep`)."""
        items, item, at, last, collected = (src.temp(n) for n in ("items", "item", "i", "last", "collected"))
        src.add(f"{items} = {src.value(self.items)}", f"if {items} is None: {items} = []")
        src.add(
            f"if not isinstance({items}, list): raise EvalError('for_each: expected a list, got ' + brief({items}))"
        )
        src.add(f"charge(len({items}))")
        if keep:
            src.add(f"{collected} = []")
        with src.block(f"for {at}, {item} in enumerate({items}):"):
            src.add(f"env[{src.bind(self.name, 'h')}] = {item}")
            if self.index:
                src.add(f"env[{src.bind(self.index, 'h')}] = {at}")
            src.add(f"{last} = None")
            write_steps(src, self.steps, last, emit=True)
            if keep:
                src.add(f"{collected}.append({last})")
        return collected if keep else "None"


@dataclass
class WhenRun(Run):
    """Runs the inner step only when the condition holds; binds null otherwise."""

    cond: Compiled
    inner: Run
    bind: str | None

    def __post_init__(self) -> None:
        self.yields = None if self.inner.yields else False

    def run(self, rt: Runtime, env: Env) -> Any:
        if self.cond(env):
            return self.inner.run(rt, env)
        return None

    def run_unread(self, rt: Runtime, env: Env) -> None:
        if self.cond(env):
            self.inner.run_unread(rt, env)


@dataclass
class UseRun(Run):
    """A fragment: its own environment holding only its parameters (and the clock)."""

    params: dict[str, Compiled]
    steps: list[Run]
    bind: str | None
    _body: Body | None = field(default=None, init=False, repr=False, compare=False)

    def run(self, rt: Runtime, env: Env) -> Any:
        inner: Env = {name: fn(env) for name, fn in self.params.items()}
        if "now" in env:
            inner["now"] = env["now"]
        body = self._body
        if body is None:
            body = self._body = compile_steps(self.steps, whole=True)
        return body(rt, inner)


@dataclass
class ReturnRun(Run):
    value: Compiled

    def run(self, rt: Runtime, env: Env) -> Any:
        raise ReturnSignal(self.value(env))


#: the helpers every generated step function may name (its fixed text, not bound values)
_FIXED: dict[str, Any] = {
    "ReturnSignal": ReturnSignal,
    "ToolError": ToolError,
    "ValueProblem": ValueProblem,
    "MISSING": MISSING,
    "BIND_ERRORS": BIND_ERRORS,
    "WRITE_ERRORS": (*BIND_ERRORS, sqlite3.IntegrityError),
    "STORE_ERRORS": (ValueProblem, *BIND_ERRORS, sqlite3.IntegrityError),
    "EvalError": EvalError,
    "brief": brief,
    "charge": charge,
}


def compile_steps(steps: list[Run], whole: bool = False, emit: bool = True) -> Body:
    """`run_steps` of this list (`run_body` when `whole`) as one generated function: each step's
    work, its binding and whether its value is the last one, written out in order (no loop, no
    per-step checks of `bind` and `yields`). A `let`, a `require` and a step that can `emit` its
    own lines (simulator.codegen.emit) are written out; any other step is called (`run`, or `run_unread` when
    nothing reads its value). Made on a list's first run, after compilation has set every step.
    `emit=False`: every step but `let` and `require` called (what tests hold the lines to)."""
    src = StepSource(**_FIXED)
    ends_in_return = whole and bool(steps) and type(steps[-1]) is ReturnRun
    write_steps(src, steps[:-1] if ends_in_return else steps, "last", emit, ends_in_return)
    if ends_in_return:
        ret = steps[-1]
        assert isinstance(ret, ReturnRun)
        src.add(f"return {src.value(ret.value)}")
    else:
        src.add("return last")
    body, src.lines = src.lines, []
    with src.block("def run(rt, env):"):
        src.add("last = None")
        if src.runtime:
            src.add("cur, cache, reads, now = rt.cursor, rt.cache, rt.reads, rt.now")
            src.add("changed, touched = rt.changed, rt.touched")
        if whole:  # a `return` inside a loop or a `when` ends the run
            with src.block("try:"):
                src.add(*body)
            with src.block("except ReturnSignal as signal:"):
                src.add("return signal.value")
        else:
            src.add(*body)
    run: Body = src.define("run", "<steps>", closure=True)
    return run


def write_steps(
    src: StepSource, running: list[Run], last: str, emit: bool, ends_in_return: bool = False
) -> None:
    """The lines of `compile_steps` for `running` (its steps but a final `return`), keeping the last
    value in local `last` (`ends_in_return`: a `return` follows, so no value of these is the last)."""
    for i, step in enumerate(running):
        kind = type(step)
        if kind is RequireRun and not step.bind:
            assert isinstance(step, RequireRun)
            src.add(f"if not {src.value(step.cond)}: raise ToolError({src.bind(step.error, 'e')}(env))")
            continue
        # a value nothing reads: not bound, and a later step's value (or the `return`) is the last
        # (`run_unread` is Run's; a step of another class only has to `run`; Run's own `run_unread` is `run`)
        unread = (
            isinstance(step, Run)
            and not step.bind
            and (ends_in_return or any(later.bind or later.yields is True for later in running[i + 1 :]))
        )
        call: str | None = None
        if kind is LetRun:
            assert isinstance(step, LetRun)
            call = src.value(step.value)
        elif emit and isinstance(step, Run):
            call = step.emit(src, not unread)
            if call is not None and unread:
                continue
        if call is None:
            method = step.run_unread if unread and kind.run_unread is not Run.run_unread else step.run
            call = f"{src.bind(method, 'r')}(rt, env)"
        if unread:
            src.add(call)
        elif step.bind:
            src.add(f"{last} = env[{src.bind(step.bind, 'h')}] = {call}")
        elif step.yields is True:
            src.add(f"{last} = {call}")
        elif step.yields is None:
            src.add(f"value = {call}", f"if value is not None: {last} = value")
        else:
            src.add(call)


def run_steps(steps: list[Run], rt: Runtime, env: Env) -> Any:
    last = None
    for step in steps:
        value = step.run(rt, env)
        if step.bind:
            env[step.bind] = value
            last = value
        elif step.yields is True or (step.yields is None and value is not None):
            last = value
    return last


def run_body(steps: list[Run], rt: Runtime, env: Env) -> Any:
    """The steps of an operation or a fragment, run as a whole: the value of a `return`, else of
    the last data step. A `return` that is the last step is evaluated in place; one inside a loop
    or a `when` ends the run with a `ReturnSignal`."""
    try:
        last = steps[-1] if steps else None
        if type(last) is ReturnRun:
            run_steps(steps[:-1], rt, env)
            return last.value(env)
        return run_steps(steps, rt, env)
    except ReturnSignal as signal:
        return signal.value


@dataclass(frozen=True)
class Analysis:
    """What a tool's operation does, derived from its step tree (fragments and loops included)."""

    tables_read: frozenset[str] = frozenset()
    tables_written: frozenset[str] = frozenset()
    destructive: bool = False  # it can update or delete rows
    uses_now: bool = False
    arguments_read: frozenset[str] = frozenset()


@dataclass
class CompiledTool:
    """A tool ready to run: its spec, its plan, and the analyses of its step tree."""

    spec: Tool
    steps: list[Run]
    uses_now: bool
    writes: bool
    analysis: Analysis = field(default_factory=Analysis)
    _body: Body | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def of(cls, spec: Tool, steps: list[Run], analysis: Analysis) -> CompiledTool:
        return cls(spec, steps, analysis.uses_now, bool(analysis.tables_written), analysis)

    @property
    def tables_read(self) -> frozenset[str]:
        return self.analysis.tables_read

    @property
    def tables_written(self) -> frozenset[str]:
        return self.analysis.tables_written

    @property
    def destructive(self) -> bool:
        """Whether a call can update or delete rows (the MCP `destructiveHint`)."""
        return self.analysis.destructive

    @property
    def arguments_read(self) -> frozenset[str]:
        return self.analysis.arguments_read

    def execute(self, rt: Runtime, arguments: dict[str, Any]) -> Any:
        env: Env = {"args": arguments}
        if self.uses_now:
            env["now"] = rt.now()
        body = self._body
        if body is None:
            body = self._body = compile_steps(self.steps, whole=True)
        return body(rt, env)

    def call_every_step(self) -> None:
        """Make this tool's bodies (its loops' and fragments' too) with every step called through
        its method (`compile_steps(..., emit=False)`): what profiles time step by step."""
        self._make_bodies(lambda steps, whole: compile_steps(steps, whole=whole, emit=False))

    def interpret(self) -> None:
        """Run this tool's bodies (its loops' and fragments' too) through `run_body` and
        `run_steps`, no generated function: the reference path (`load_domain(..., generated=False)`)."""
        self._make_bodies(lambda steps, whole: functools.partial(run_body if whole else run_steps, steps))

    def _make_bodies(self, make: Callable[[list[Run], bool], Body]) -> None:
        """Set the body of each step list of this tool to `make(steps, whole)`."""
        stack: list[Any] = list(self.steps)
        while stack:
            step = stack.pop()
            if isinstance(step, ForEachRun):
                step._body = make(step.steps, False)
            elif isinstance(step, UseRun):
                step._body = make(step.steps, True)
            stack.extend(getattr(step, "steps", None) or [])
            if getattr(step, "inner", None) is not None:
                stack.append(step.inner)
        self._body = make(self.steps, True)
