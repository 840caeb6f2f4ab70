"""Python source for a step list (`steps.compile_steps`): lines, closure variables, plain expressions.

`compile_steps` turns a list of steps into one generated function; a step that can write its own work
out (`emit`) adds lines here instead of being called through its method. Only generated names,
indices and `repr` string literals appear in the source, never a column name or value as code.
`value(fn)` is the source of `fn(env)`: a plain reference written out as dict lookups, else a
call of the closure. Design notes: docs/design/engine.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .lang.compile import shape_of


class Source:
    """A generated function's body under construction."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.bound: dict[str, Any] = {}  # closure variable -> the value it holds
        self._names: dict[int, str] = {}  # id of a bound value -> its variable (`bound` keeps it alive)
        self.runtime = False  # a line reads `conn`, `cache` or `reads` (set up first)
        self._depth = 0
        self._temps = 0

    def bind(self, value: Any, prefix: str = "b") -> str:
        """A closure variable holding `value` (the same name for the same object)."""
        name = self._names.get(id(value))
        if name is None:
            name = self._names[id(value)] = f"{prefix}{len(self.bound)}"
            self.bound[name] = value
        return name

    def temp(self, prefix: str = "t") -> str:
        """A fresh local variable name."""
        self._temps += 1
        return f"{prefix}_{self._temps}"

    def add(self, *lines: str) -> None:
        pad = "    " * self._depth
        self.lines.extend(pad + line for line in lines)

    @contextmanager
    def block(self, header: str) -> Iterator[None]:
        """`header:` and the lines added inside, indented."""
        self.add(header)
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    def value(self, fn: Any) -> str:
        """Source of `fn(env)`."""
        shape = shape_of(fn)
        if shape is not None and shape[0] == "literal":
            return self.bind(shape[1], "k")
        if shape is not None and shape[0] == "ref":
            head, rest = shape[1], shape[2]
            if not rest:
                return f"env.get({head!r})"
            if len(rest) == 1:
                held = self.temp("v")
                return f"({held}.get({rest[0]!r}) if type({held} := env.get({head!r})) is dict else {self.bind(fn, 'f')}(env))"
        return f"{self.bind(fn, 'f')}(env)"

    def text(self, indent: int) -> str:
        pad = "    " * indent
        return "".join(f"{pad}{line}\n" for line in self.lines)
