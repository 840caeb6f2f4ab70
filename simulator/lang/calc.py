"""`calc`: a safe evaluator of arithmetic expression text (never `eval`).

It accepts numbers, + - * / // ** and parentheses, with Python's semantics. Anything else (a stray
character, a syntax error, division by zero, an overflow, a huge power) gives None, so the
operator is total and a domain decides what error to raise. Integer results that would be too
large are refused before they are computed. Grammar and limits: docs/design/engine.md.
"""

from __future__ import annotations

import re
from typing import Any

from .numbers import LIMIT, finite

_TOKEN = re.compile(r"[ \t]*(?:([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)|(\*\*|//|[-+*/()]))", re.ASCII)
_MAX_EXPONENT = 1000
_MAX_LENGTH = 10_000
_MAX_BITS = 16_384  # intermediate integers (results above 10**308, ~1024 bits, are refused anyway)
_MAX_DIGITS = 4_000  # integer literals (Python refuses to parse more than 4,300 digits)


class _Bad(Exception):
    pass


def _check_bits(bits: int) -> None:
    """Refuse an integer result of up to `bits` bits before computing it, when that is too large."""
    if bits > _MAX_BITS:
        raise _Bad


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    text = text.rstrip(" \t")
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _Bad
        out.append(m.group(1) or m.group(2))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, tokens: list[str]):
        self.tokens = tokens
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str:
        if self.i >= len(self.tokens):
            raise _Bad
        self.i += 1
        return self.tokens[self.i - 1]

    def expr(self) -> Any:
        value = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            rhs = self.term()
            value = value + rhs if op == "+" else value - rhs
        return value

    def term(self) -> Any:
        value = self.unary()
        while self.peek() in ("*", "/", "//"):
            op = self.take()
            rhs = self.unary()
            if op == "*":
                if isinstance(value, int) and isinstance(rhs, int):
                    _check_bits(value.bit_length() + rhs.bit_length())
                value = value * rhs
            elif op == "/":
                value = value / rhs
            else:
                value = value // rhs
        return value

    def unary(self) -> Any:
        if self.peek() in ("+", "-"):
            op = self.take()
            value = self.unary()
            return value if op == "+" else -value
        return self.power()

    def power(self) -> Any:
        base = self.atom()
        if self.peek() == "**":
            self.take()
            exponent = self.unary()
            if abs(exponent) > _MAX_EXPONENT:
                raise _Bad
            if isinstance(base, int) and isinstance(exponent, int) and exponent > 0:
                _check_bits(exponent * base.bit_length())  # |base**e| < 2**(e * bits(base))
            return base**exponent
        return base

    def atom(self) -> Any:
        token = self.take()
        if token == "(":
            value = self.expr()
            if self.take() != ")":
                raise _Bad
            return value
        if token[0].isdigit() or token[0] == ".":
            if "." in token:
                return float(token)
            if len(token) > 1 and token[0] == "0" and token.strip("0"):
                raise _Bad  # Python rejects leading zeros in integers
            if len(token) > _MAX_DIGITS:
                raise _Bad
            return int(token)
        raise _Bad


def calc(text: Any) -> int | float | None:
    """Evaluate arithmetic text; None when it is not a valid, finite expression."""
    if not isinstance(text, str) or len(text) > _MAX_LENGTH:
        return None
    try:
        parser = _Parser(_tokens(text))
        value: int | float | complex = parser.expr()
        if parser.peek() is not None:
            return None
    except (_Bad, ZeroDivisionError, OverflowError, RecursionError, TypeError):
        return None
    if isinstance(value, complex) or (isinstance(value, float) and not finite(value)):
        return None
    if isinstance(value, int) and abs(value) > LIMIT:
        return None
    return value
