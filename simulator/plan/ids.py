"""Generated keys: how `create` makes a key the call did not give, per table's id scheme.

Four schemes, all deterministic per episode: `hash` (the default: a prefix and 8 hex digits),
`counter` (a prefix and a zero-padded running number), `pattern` (a prefix and one drawn character
per pattern slot) and `uuid` (a version-4 UUID). Integer keys are max + 1 (within the rest of a
composite key), or at least `start` for a counter. Scheme details: docs/design/engine.md.
"""

from __future__ import annotations

import hashlib
import re
import string
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

SLOTS = {
    "A": string.ascii_uppercase,
    "a": string.ascii_lowercase,
    "9": string.digits,
    "X": string.ascii_uppercase + string.digits,
    "x": string.ascii_lowercase + string.digits,
}

#: candidates one `create` tries before it gives up (a small pattern can run out of free keys)
MAX_TRIES = 1000


def generated_key(seed: int, table: str, prefix: str, n: int) -> str:
    """The n-th generated string key of a table under a seed: prefix + 8 hex digits of a hash."""
    return prefix + hashlib.sha256(f"{seed}:{table}:{n}".encode()).hexdigest()[:8]


def uuid_key(seed: int, table: str, n: int) -> str:
    """The n-th generated key of a table under the `uuid` scheme: a version-4 UUID from a hash."""
    digest = hashlib.sha256(f"{seed}:{table}:{n}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def parse_pattern(pattern: str) -> tuple[str, ...]:
    """A pattern's slots: an alphabet (several characters) or one literal character each.

    Raises ValueError for a dangling `\\` or a pattern without any slot."""
    slots: list[str] = []
    escaped = False
    for char in pattern:
        if escaped:
            slots.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            slots.append(SLOTS.get(char, char))
    if escaped:
        raise ValueError(f"pattern {pattern!r} ends in a lone `\\`")
    if not any(len(s) > 1 for s in slots):
        raise ValueError(f"pattern {pattern!r} has no slot (A, a, 9, X or x): it could make one key only")
    return tuple(slots)


@dataclass(frozen=True)
class IdMaker:
    """A table's id scheme, ready to make keys. `floor`: counter values the seed already uses."""

    table: str
    scheme: str = "hash"
    prefix: str = ""
    start: int = 1
    width: int = 0
    slots: tuple[str, ...] = ()
    floor: int = 0

    @classmethod
    def of(cls, table: str, spec: object, id_prefix: str = "") -> IdMaker:
        """From a table's `ids` (a HashIds, CounterIds or PatternIds model, or None) and `id_prefix`."""
        if spec is None:
            return cls(table, prefix=id_prefix)
        scheme = getattr(spec, "scheme", "hash")
        slots = parse_pattern(spec.pattern) if scheme == "pattern" else ()  # type: ignore[attr-defined]
        return cls(
            table,
            scheme=scheme,
            prefix=getattr(spec, "prefix", ""),
            start=getattr(spec, "start", 1),
            width=getattr(spec, "width", 0),
            slots=slots,
        )

    def key(self, seed: int, n: int) -> str:
        """The n-th candidate key (n = 1, 2, ...) of an episode with `seed`."""
        if self.scheme == "counter":
            return f"{self.prefix}{self.start + n - 1:0{self.width}d}"
        if self.scheme == "pattern":
            number = int.from_bytes(hashlib.sha256(f"{seed}:{self.table}:{n}".encode()).digest(), "big")
            out = []
            for slot in self.slots:
                if len(slot) > 1:
                    number, i = divmod(number, len(slot))
                    slot = slot[i]
                out.append(slot)
            return self.prefix + "".join(out)
        if self.scheme == "uuid":
            return uuid_key(seed, self.table, n)
        return generated_key(seed, self.table, self.prefix, n)

    def candidates(self, seed: int, count: int) -> list[str]:
        """The first `count` keys an episode would try, in order."""
        return [self.key(seed, n) for n in range(self.floor + 1, self.floor + count + 1)]

    def with_floor(self, existing: Iterable[object]) -> IdMaker:
        """For a counter: start numbering after the largest number the keys `existing` use."""
        if self.scheme != "counter":
            return self
        shape = re.compile(re.escape(self.prefix) + r"([0-9]+)")
        top = 0
        for key in existing:
            found = shape.fullmatch(key) if isinstance(key, str) else None
            if found is not None:
                top = max(top, int(found[1]) - self.start + 1)
        return IdMaker(self.table, self.scheme, self.prefix, self.start, self.width, self.slots, top)
