"""The two errors of the expression language: at load time (`ExprError`), at call time (`EvalError`)."""

from __future__ import annotations

from ..errors import ToolError, ToolgymError


class ExprError(ToolgymError):
    """An expression is malformed or refers to a name that is not in scope (load time).

    `path` is where inside the expression (`add[1]`, `map.to`; empty at its root); `message` is
    the problem without it.
    """

    def __init__(self, message: str, path: str = ""):
        super().__init__(f"{message} (at {path})" if path else message)
        self.message = message
        self.path = path


class EvalError(ToolError):
    """An expression could not be evaluated on these values: a tool error, worded for the agent.

    The values come from the agent's arguments and the rows they reach, so the failure is the
    agent's to act on (validation replays every gold call, so a domain whose own calls fail is caught).
    """
