"""Answer facts: values the agent's final message must contain, matched as tokens, not substrings.

Text is split into tokens: numbers and words. A number is a run of digits, with optional
thousands separators (`1,327`), a decimal part (`.50`) and a leading minus; currency signs and
other punctuation around it are dropped, and it compares by value (`$1,327.50` == `1327.5`).
A digit run glued to letters (`a4`, `4b`) is a word, so is one with a leading zero (`0042`, kept
as written). Words compare case-insensitively. A fact matches when its tokens occur as a
contiguous run of the message's tokens: `327` does not match inside `$1327`, `4` does not match
inside `14` or `4.5`, and `Ada Byrne` matches `ada byrne,` but not `Ada Lovelace Byrne`.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

_TOKEN = re.compile(r"(?P<num>\d+(?:,\d{3})*(?:\.\d+)?)(?![^\W_])|(?P<word>[^\W_]+)")
#: A '-' right before a number is its sign when it starts the text or follows one of these.
_SIGN_AFTER = " \t\n([{:=$"

Token = tuple[str, Any]


def tokens(text: str) -> list[Token]:
    """The normalised tokens of a text: ("n", Decimal) for numbers, ("w", casefolded str) for words."""
    out: list[Token] = []
    for m in _TOKEN.finditer(text):
        number = m.group("num")
        if number is not None:
            digits = number.replace(",", "")
            if len(digits) > 1 and digits[0] == "0" and "." not in digits:
                out.append(("w", digits))  # an identifier such as 0042
                continue
            start = m.start()
            if start and text[start - 1] == "-" and (start == 1 or text[start - 2] in _SIGN_AFTER):
                digits = "-" + digits
            try:
                out.append(("n", Decimal(digits)))
            except InvalidOperation:  # digits of other scripts that Decimal does not read
                out.append(("w", number.casefold()))
        else:
            out.append(("w", m.group("word").casefold()))
    return out


def fact_text(fact: Any) -> str:
    """A fact as text: strings as is, booleans as true/false, numbers in plain notation, else JSON."""
    if isinstance(fact, str):
        return fact
    if isinstance(fact, bool):
        return "true" if fact else "false"
    if isinstance(fact, int | float):
        return format(Decimal(str(fact)), "f")
    return json.dumps(fact, ensure_ascii=False)


def contains(message: list[Token], fact: list[Token]) -> bool:
    """Whether `fact` occurs as a contiguous run of `message`."""
    n = len(fact)
    if n == 0:
        return False
    first = fact[0]
    return any(message[i] == first and message[i : i + n] == fact for i in range(len(message) - n + 1))


def find_facts(message: str | None, facts: list[Any]) -> list[bool]:
    """For each fact, whether the message contains it (all False when there is no message)."""
    if message is None:
        return [False] * len(facts)
    have = tokens(message)
    found = []
    for fact in facts:
        want = tokens(fact_text(fact))
        if not want:  # a fact of punctuation only: fall back to a case-insensitive substring
            text = fact_text(fact).strip()
            found.append(bool(text) and text.casefold() in message.casefold())
        else:
            found.append(contains(have, want))
    return found
