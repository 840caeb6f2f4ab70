"""Strings drawn from a JSON-Schema `pattern`: a small parser of the regex syntax specs use and a
seeded generator over it, with its work counted so a hostile pattern costs a bounded amount.

`draw(pattern, rng, budget)` raises `TooCostly` past `budget` units (a node visited or a character
made) and `Unsupported` for syntax it does not model; callers check the result against the pattern
(on RE2) and fall back to an unconstrained value. Lookarounds and anchors draw nothing.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["REPEAT_LIMIT", "TooCostly", "Unsupported", "draw"]

#: how many times an unbounded repeat (`*`, `+`, `{2,}`) repeats at most
REPEAT_LIMIT = 100
#: how deep groups may nest before a pattern counts as unsupported
_DEPTH = 200
_PRINTABLE = string.printable
_CLASSES = {
    "d": string.digits,
    "w": string.ascii_letters + string.digits + "_",
    "s": " \t\n\r\f\v",
}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "0": "\0"}


class TooCostly(Exception):
    """A draw went over its budget."""


class Unsupported(ValueError):
    """The pattern uses syntax this generator does not model (or is not a valid pattern)."""


# a node: ("chars", ranges) | ("seq", nodes) | ("alt", nodes) | ("repeat", node, low, high)
#       | ("group", number, node) | ("backref", number) | ("empty",)
Node = tuple


@dataclass
class _Parser:
    text: str
    at: int = 0
    groups: int = 0
    depth: int = 0

    def peek(self, ahead: int = 0) -> str:
        i = self.at + ahead
        return self.text[i] if i < len(self.text) else ""

    def take(self) -> str:
        if self.at >= len(self.text):
            raise Unsupported("unexpected end of pattern")
        self.at += 1
        return self.text[self.at - 1]

    def alternation(self, names: dict[str, int]) -> Node:
        branches = [self.sequence(names)]
        while self.peek() == "|":
            self.at += 1
            branches.append(self.sequence(names))
        return branches[0] if len(branches) == 1 else ("alt", tuple(branches))

    def sequence(self, names: dict[str, int]) -> Node:
        items: list[Node] = []
        while self.peek() not in ("", "|", ")"):
            atom = self.atom(names)
            items.append(self.quantified(atom))
        return ("seq", tuple(items))

    def quantified(self, atom: Node) -> Node:
        while True:
            c = self.peek()
            if c in ("*", "+", "?"):
                self.at += 1
                low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            elif c == "{" and (bounds := self.bounds()) is not None:
                low, high = bounds
            else:
                return atom
            if self.peek() in ("?", "+"):  # lazy or possessive: the same strings
                self.at += 1
            atom = ("repeat", atom, low, high)

    def bounds(self) -> tuple[int, int | None] | None:
        """`{n}`, `{n,}`, `{,m}`, `{n,m}` at the cursor (consumed), or None for a literal `{`."""
        end = self.text.find("}", self.at)
        if end < 0:
            return None
        inside = self.text[self.at + 1 : end]
        low_text, comma, high_text = inside.partition(",")
        if not (low_text.isdigit() or (comma and not low_text)) or (high_text and not high_text.isdigit()):
            return None
        if not low_text and not high_text:
            return None
        self.at = end + 1
        low = int(low_text) if low_text else 0
        high = (int(high_text) if high_text else None) if comma else low
        if high is not None and high < low:
            raise Unsupported("repeat bounds out of order")
        return low, high

    def atom(self, names: dict[str, int]) -> Node:
        c = self.take()
        if c == "(":
            return self.group(names)
        if c == "[":
            return ("chars", self.char_class())
        if c == ".":
            return ("chars", _ranges(_PRINTABLE.replace("\n", "")))
        if c in ("^", "$"):
            return ("empty", "anchor")
        if c == "\\":
            return self.escape(names)
        if c in ("*", "+", "?"):
            raise Unsupported("nothing to repeat")
        return ("chars", ((ord(c), ord(c)),))

    def group(self, names: dict[str, int]) -> Node:
        self.depth += 1
        if self.depth > _DEPTH:
            raise Unsupported("groups nest too deep")
        number: int | None = None
        lookaround = False
        if self.peek() == "?":
            self.at += 1
            kind = self.take()
            if kind == ":":
                pass
            elif kind in ("=", "!") or (kind == "<" and self.peek() in ("=", "!")):
                self.at += kind == "<"
                lookaround = True
            elif kind == "P" and self.peek() == "=":
                end = self.text.find(")", self.at)
                name = self.text[self.at + 1 : end] if end >= 0 else ""
                if name not in names:
                    raise Unsupported("unknown group name")
                self.at, self.depth = end + 1, self.depth - 1
                return ("backref", names[name])
            elif kind in ("P", "<"):
                if kind == "P" and self.take() != "<":
                    raise Unsupported("unknown group syntax")
                end = self.text.find(">", self.at)
                if end < 0:
                    raise Unsupported("unterminated group name")
                self.groups += 1
                number, names[self.text[self.at : end]] = self.groups, self.groups
                self.at = end + 1
            elif kind.isalpha() or kind == "-":  # inline flags: `(?i)`, `(?i:...)`
                while self.peek() and self.peek() not in (")", ":"):
                    self.at += 1
                if self.take() == ")":
                    self.depth -= 1
                    return ("empty", "flags")
            else:
                raise Unsupported(f"unknown group syntax (?{kind}")
        else:
            self.groups += 1
            number = self.groups
        inner = self.alternation(names)
        if self.take() != ")":
            raise Unsupported("unbalanced parenthesis")
        self.depth -= 1
        if lookaround:
            return ("empty", "lookaround")
        return ("group", number, inner) if number is not None else inner

    def escape(self, names: dict[str, int]) -> Node:
        c = self.take()
        if c.lower() in _CLASSES:
            chars = _CLASSES[c.lower()]
            return ("chars", _ranges(chars if c.islower() else _without(_PRINTABLE, chars)))
        if c in "bBAZz":
            return ("empty", "anchor")
        if c.isdigit() and c != "0":
            return ("backref", int(c))
        return ("chars", ((ord(self.escaped(c)),) * 2,))

    def escaped(self, c: str) -> str:
        """The character an escape `\\c...` (after its backslash and `c`) stands for."""
        if c in _ESCAPES:
            return _ESCAPES[c]
        width = {"x": 2, "u": 4, "U": 8}.get(c)
        if width is None:
            return c
        digits = self.text[self.at : self.at + width]
        if len(digits) != width or any(d not in string.hexdigits for d in digits):
            raise Unsupported(f"bad escape \\{c}{digits}")
        self.at += width
        code = int(digits, 16)
        if code > 0x10FFFF:
            raise Unsupported("code point out of range")
        return chr(code)

    def char_class(self) -> tuple[tuple[int, int], ...]:
        negated = self.peek() == "^"
        self.at += negated
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            c = self.take()
            if c == "]" and not first:
                break
            first = False
            if c == "\\":
                e = self.take()
                if e.lower() in _CLASSES:
                    chars = _CLASSES[e.lower()]
                    ranges += _ranges(chars if e.islower() else _without(_PRINTABLE, chars))
                    continue
                c = "\b" if e == "b" else self.escaped(e)
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.at += 1
                end = self.take()
                if end == "\\":
                    end = self.escaped(self.take())
                if ord(end) < ord(c):
                    raise Unsupported("bad character range")
                ranges.append((ord(c), ord(end)))
            else:
                ranges.append((ord(c), ord(c)))
        if negated:  # (what it leaves of the printable characters, in their order)
            return _ranges(
                "".join(ch for ch in _PRINTABLE if not any(lo <= ord(ch) <= hi for lo, hi in ranges))
            )
        return tuple(ranges)


def _without(chars: str, taken: str) -> str:
    return "".join(c for c in chars if c not in taken)


def _ranges(chars: str) -> tuple[tuple[int, int], ...]:
    return tuple((ord(c), ord(c)) for c in chars)


@lru_cache(maxsize=1024)
def _parsed(pattern: str) -> Node:
    parser = _Parser(pattern)
    node = parser.alternation({})
    if parser.at != len(pattern):
        raise Unsupported("unbalanced parenthesis")
    return node


def draw(pattern: str, rng: random.Random, budget: int) -> str:
    """A string the pattern matches (for what this module models), drawn with `rng`."""
    made: list[str] = []
    work = 0
    groups: dict[int, str] = {}

    def charge(units: int) -> None:
        nonlocal work
        work += units
        if work > budget:
            raise TooCostly

    def walk(node: Node) -> None:
        charge(1)
        kind = node[0]
        if kind == "chars":
            ranges = node[1]
            if not ranges:
                raise Unsupported("a class that matches nothing")
            pick = rng.randrange(sum(hi - lo + 1 for lo, hi in ranges))
            for lo, hi in ranges:
                if pick <= hi - lo:
                    made.append(chr(lo + pick))
                    return
                pick -= hi - lo + 1
        elif kind == "seq":
            for item in node[1]:
                walk(item)
        elif kind == "alt":
            walk(rng.choice(node[1]))
        elif kind == "repeat":
            _, inner, low, high = node
            top = min(REPEAT_LIMIT if high is None else high, max(low, REPEAT_LIMIT))
            for _ in range(rng.randint(low, max(low, top))):
                walk(inner)
        elif kind == "group":
            start = len(made)
            walk(node[2])
            groups[node[1]] = "".join(made[start:])
        elif kind == "backref":
            if node[1] not in groups:
                raise Unsupported("a reference to a group not drawn")
            charge(len(groups[node[1]]))
            made.append(groups[node[1]])

    walk(_parsed(pattern))
    return "".join(made)
