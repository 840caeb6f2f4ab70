"""Generated Python functions: the one source builder (`Source`) and the one place source is compiled.

Safety rule: source text is only the generator's own fixed text (keywords, operators, local names),
identifiers the builder makes (`bind`, `temp`) and ints it checks (`integer`). Every other value (a
name or literal from a spec, a function, a statement) is bound in the namespace under a generated
identifier, never pasted into the source, so nothing a spec says is ever evaluated as code.
The same shapes recur across tools and domains, so each text is compiled once (`define`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from types import CodeType
from typing import Any


@lru_cache(maxsize=4096)
def _code(source: str, filename: str) -> CodeType:
    return compile(source, filename, "exec")


def define(source: str, filename: str, namespace: dict[str, Any], name: str) -> Any:
    """Run `source` (compiled once per text) in `namespace`; the object it defines as `name`."""
    exec(_code(source, filename), namespace)  # noqa: S102
    return namespace[name]


class Source:
    """Generated source under construction: lines, indentation, and the values its names stand for."""

    def __init__(self, **fixed: Any) -> None:
        self.lines: list[str] = []
        self.bound: dict[str, Any] = {}  # generated identifier -> the value it holds
        self.fixed = fixed  # the generator's own helpers, under their fixed names
        self._names: dict[int, str] = {}  # id of a bound value -> its identifier (`bound` keeps it alive)
        self.namespace: dict[str, Any] = {}  # what the defined code runs in (`define`)
        self._depth = 0
        self._temps = 0

    def bind(self, value: Any, prefix: str = "b") -> str:
        """An identifier holding `value` (the same one for the same object)."""
        name = self._names.get(id(value))
        if name is None:
            name = self._names[id(value)] = f"{prefix}{len(self.bound)}"
            self.bound[name] = value
        return name

    def temp(self, prefix: str = "t") -> str:
        """A fresh local name."""
        self._temps += 1
        return f"{prefix}_{self._temps}"

    @staticmethod
    def integer(value: int) -> str:
        """An int the generator computed (a position, a count), as source text."""
        if type(value) is not int:
            raise TypeError(f"not an int: {value!r}")
        return str(value)

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

    def text(self, indent: int = 0) -> str:
        pad = "    " * indent
        return "".join(f"{pad}{line}\n" for line in self.lines)

    def define(self, name: str, filename: str, closure: bool = False) -> Any:
        """Compile the lines (defining `name`) with the bound values as globals; the object `name`.
        `closure`: the bound values are instead closure variables of `name` (the lines are the body
        of a function `make` taking them by their identifiers, called once), so the same text
        compiles once whatever the values and `name` reads them as locals of its closure."""
        if not closure:
            self.namespace = {**self.fixed, **self.bound}
            return define(self.text(), filename, self.namespace, name)
        if not name.isidentifier():
            raise ValueError(f"not an identifier: {name!r}")
        self.namespace = dict(self.fixed)
        source = f"def make({', '.join(self.bound)}):\n{self.text(1)}    return {name}\n"
        return define(source, filename, self.namespace, "make")(**self.bound)
