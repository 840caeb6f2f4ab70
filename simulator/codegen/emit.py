"""Python source for a step list (`runsteps.compile_steps`): the one builder with what steps need.

`compile_steps` turns a list of steps into one generated function; a step that can write its own work
out (`emit`) adds lines to a `StepSource` instead of being called through its method. `value(fn)` is
the source of `fn(env)`: a plain reference written out as dict lookups, else a call of the closure.
Design notes: docs/design/engine.md.
"""

from __future__ import annotations

from typing import Any

from ..lang.compile import shape_of
from ..lang.generated import Source


class StepSource(Source):
    """A generated step function's body under construction (bound values are closure variables)."""

    def __init__(self, **fixed: Any) -> None:
        super().__init__(**fixed)
        self.runtime = False  # a line reads `conn`, `cache` or `reads` (set up first)

    def value(self, fn: Any) -> str:
        """Source of `fn(env)`."""
        shape = shape_of(fn)
        if shape is not None and shape[0] == "literal":
            return self.bind(shape[1], "k")
        if shape is not None and shape[0] == "ref":
            head, rest = self.bind(shape[1], "h"), shape[2]
            if not rest:
                return f"env.get({head})"
            if len(rest) == 1:
                held, field = self.temp("v"), self.bind(rest[0], "h")
                return f"({held}.get({field}) if type({held} := env.get({head})) is dict else {self.bind(fn, 'f')}(env))"
        return f"{self.bind(fn, 'f')}(env)"
