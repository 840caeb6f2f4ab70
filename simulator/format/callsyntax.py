"""How a `$calls.N.path` reference is written: the text, the call it names and the path.

A gold call's argument `"$calls.N.path"` names a path of an earlier call's result. The builders
write such references (`simulator.builders.calls_ref`) and read them back (`lift`); resolving
them against results is the grading side's (`scoring.calls`, whose `CallRef` extends this one).
Nothing the server runs imports this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Self

__all__ = ["PREFIX", "CallRef"]

PREFIX = "$calls."
INDEX = re.compile(r"-?[0-9]+", re.ASCII)


@dataclass(frozen=True)
class CallRef:
    """One `$calls.N.path` reference: the text, the call it names (None: it names none) and the path."""

    text: str
    index: int | None
    path: tuple[str, ...]

    @classmethod
    def parse(cls, value: Any) -> Self | None:
        """The reference a value is, or None when it is not one (not a string starting `$calls.`)."""
        if not isinstance(value, str) or not value.startswith(PREFIX):
            return None
        head, *path = value[len(PREFIX) :].split(".")
        index = int(head) if INDEX.fullmatch(head) and not head.startswith("-") else None
        return cls(value, index, tuple(path))
