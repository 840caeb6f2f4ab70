"""Checks that a task's instruction reads as a person would say it, before the task is validated.

    problems = instruction_problems(instruction, calls, tools)   # [] when it reads well

Each problem is (check, detail); the checks are `repeated`, `internal name`, `opaque id` (a
UUID, a long hex or letters-and-digits token: no person knows one by heart), `structured` (a
JSON object or list written out), `circular` (a row named through a row of its own kind: `every
attribute of the rule of the attribute ...`), `placeholder`, `filler` and `missing fact`.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from ..naming import words
from .draws import is_code_of

__all__ = ["CHECKS", "instruction_problems", "opaque", "text_problems", "unsayable"]

CHECKS = (
    "repeated",
    "internal name",
    "opaque id",
    "structured",
    "circular",
    "placeholder",
    "filler",
    "missing fact",
)
#: a thing, then the row it belongs to named through a thing of the same kind
_CIRCULAR = re.compile(
    r'\b((?:[a-z]+ ){0,2}[a-z]+) (?:for|of) the (?:[a-z]+ ){1,3}?(?:whose (?:[a-z]+ ){1,4}is "" )?of the \1\b'
)

_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9']*")
_SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9]\b")
_CAMEL = re.compile(r"\b[a-z]+[A-Z][A-Za-z]*\b")
_DATE_PLACEHOLDER = re.compile(r"^(?:[YyMDdHhms]{1,4}[-/.: T]?){2,}[YyMDdHhms]*$")
_STAND_INS = frozenset(
    "string text value example sample foo bar baz todo tbd n/a null none undefined lorem ipsum "
    "placeholder xxx xxxx".split()
)
#: a value that names its own field (`System-Name`, `device name`, `my_title`): a spec's stand-in
_STAND_IN_NAME = re.compile(
    r"(?i:my|your|the|some)[ _-]?[A-Za-z]+[ _-](?i:name|title|label)"
    r"|[A-Za-z]+[_-](?i:name|title|label)|[a-z]+ (?:name|title|label)"
)
_BRACKETED = re.compile(r"^[<{\[].*[>}\]]$")
#: an address that stands in for someone's (`name@company.com`, `user@example.com`)
_STAND_IN_EMAIL = re.compile(
    r"(?i)^(?:name|user|username|email|example|you|me|someone|somebody|john\.?doe|jane\.?doe)@[\w.-]+$"
)
#: an id no person knows by heart: a UUID, 16+ hex digits, or a 16+ character run of letters and
#: digits with at least 8 digits (a Twilio sid `AC0123...`)
_OPAQUE = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
    r"|\b(?=[A-Za-z0-9]{16,}\b)(?:[A-Za-z]*[0-9]){8}[A-Za-z0-9]*\b"
    # eight or more capitals and digits mixed (`M76I8LWL`; not `SUMMER2024`): a machine's code
    r"|\b(?=[A-Z0-9]{8,}\b)[A-Z]*[0-9]+[A-Z]+[0-9]+[A-Z]+[A-Z0-9]*\b"
    r"|\b(?=[A-Z0-9]{8,}\b)[0-9]+[A-Z]+[0-9]+[A-Z]+[0-9][A-Z0-9]*\b"
    # ten or more lowercase hex digits, two digits and two letters among them (`b798596fcd9a`)
    r"|\b(?=(?:[a-f]*[0-9]){2})(?=(?:[0-9]*[a-f]){2})[0-9a-f]{10,}\b"
)
#: eight or more capitals and digits, a digit among them: a machine's code when its letters are
#: hardly pronounceable (`KPPFHB5A`, `ZW97CBCC`, `EWWZ2RUD`; not `SUMMER2024`, `COVID19XX`); eight
#: or more capitals without a vowel (`BXRYXVKF`)
_CODE = re.compile(r"\b(?=[A-Z0-9]{8,}\b)(?=[A-Z]*[0-9])[A-Z0-9]+\b|\b[B-DF-HJ-NP-TV-Z]{8,}\b")
_RUN = re.compile(r"[A-Z]{4,}")
#: a JSON object or list written out (`{"dob": ...}`, `["a", "b"]`): no person writes that
_STRUCTURED = re.compile(r'[\[{]\s*["{\[]|\{\s*\}|\[\s*\]')
#: a clause said twice: this many words in a row, with a quoted value among them
_CLAUSE_WORDS = 4
_FUNCTION_WORDS = frozenset("a an the of to for and or is are in on at by with true false null".split())
#: a stutter: three words said again within this many words of their end
_STUTTER_WORDS, _STUTTER_GAP = 3, 3


@lru_cache(maxsize=1)
def _lorem() -> frozenset[str]:
    from faker.providers.lorem.en_US import Provider

    return frozenset(w.lower() for w in Provider.word_list)


def opaque(text: str) -> bool:
    """Whether `text` holds an id no person knows by heart (the `opaque id` check)."""
    return _opaque_found(text) is not None


def _opaque_found(text: str) -> str | None:
    if (m := _OPAQUE.search(text)) is not None:
        return m.group(0)
    for code in _CODE.findall(text):
        letters = [c for c in code if c.isalpha()]
        if len(letters) < 4:
            continue  # (a number with a letter or two: `TX1234567`; eight capitals, no vowel: `BXRYXVKF`)
        vowels = sum(c in "AEIOU" for c in letters)
        spoken = any(sum(c in "AEIOU" for c in run) >= 2 for run in _RUN.findall(code))
        if vowels < 0.25 * len(letters) or (re.search(r"[0-9][A-Z]", code) and not spoken):
            return str(code)
    for token in _MIXED.findall(text):
        runs = _CLASS_RUN.findall(token)
        spoken = any(sum(c in "aeiou" for c in run) >= 2 for run in runs if run.islower())
        if 2 * len(runs) >= len(token) and not spoken:
            return str(token)  # (`H8dYp8Q3w7QEJK57`: a random token; not `iPhone15ProMax`)
    return None


#: a long token of capitals, small letters and digits, and the runs of one kind in it
_MIXED = re.compile(r"\b(?=\w*[0-9])(?=\w*[a-z])(?=\w*[A-Z])[A-Za-z0-9]{12,}\b")
_CLASS_RUN = re.compile(r"[A-Z]+|[a-z]+|[0-9]+")


def _values(value: Any) -> Iterable[Any]:
    """The scalar values in an argument (list elements and object values included)."""
    if isinstance(value, dict):
        for v in value.values():
            yield from _values(v)
    elif isinstance(value, list):
        for v in value:
            yield from _values(v)
    else:
        yield value


def _quoted(instruction: str) -> list[str]:
    """The quoted values of an instruction, list elements apart (`["a b", "c"]` gives both); the
    keys of a JSON object it shows (`{"name": ...}`) are not values."""
    return [
        m.group(1)
        for m in _QUOTED.finditer(instruction)
        if not instruction[m.end() :].lstrip().startswith(":")
    ]


def repeated(instruction: str) -> str | None:
    """The clause said twice in the instruction (the `repeated` check), or None."""
    tokens = [  # words and quoted values; a JSON object's keys are left out (they are names)
        m.group(0)
        for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[A-Za-z0-9][A-Za-z0-9\'-]*', instruction)
        if not (m.group(0).startswith('"') and instruction[m.end() :].lstrip().startswith(":"))
    ]
    lowered = [t.lower() for t in tokens]
    n = _STUTTER_WORDS
    for i in range(len(tokens) - n + 1):
        run = lowered[i : i + n]
        if all(t in _FUNCTION_WORDS or t.startswith('"') or t[0].isdigit() for t in run):
            continue  # ("to true the", said of each of several settings)
        for j in range(i + n, min(i + n + _STUTTER_GAP + 1, len(tokens) - n + 1)):
            if lowered[j : j + n] == run:
                return " ".join(tokens[i : j + n])
    seen: set[tuple[str, ...]] = set()
    for i in range(len(tokens) - _CLAUSE_WORDS + 1):
        clause = tuple(lowered[i : i + _CLAUSE_WORDS])
        if not any(t.startswith('"') or any(c.isdigit() for c in t) for t in clause):
            continue  # (a clause names something by a value: a quoted one, a number or an id)
        if clause in seen:
            return " ".join(tokens[i : i + _CLAUSE_WORDS])
        seen.add(clause)
    return None


def _internal(instruction: str, tool_names: Sequence[str]) -> str | None:
    outside = _QUOTED.sub(" ", instruction)
    for pattern in (_SNAKE, _CAMEL):
        if m := pattern.search(outside):
            return m.group(0)
    lowered = outside.lower()
    for name in tool_names:  # (a one-word tool name is a plain word: "calculate", "search")
        if re.search(r"[_A-Z-]", name) and re.search(rf"\b{re.escape(name.lower())}\b", lowered):
            return name
    for value in _quoted(instruction):  # (a JSON object's keys are the tool's names: not said)
        if _SNAKE.fullmatch(value) and not any(c.isdigit() for c in value):
            return f'"{value}"'
    return None


def _placeholder(values: Iterable[str]) -> str | None:
    for value in values:
        v = value.strip()
        if not v:
            continue
        if _DATE_PLACEHOLDER.fullmatch(v) and not any(c.isdigit() for c in v):
            return f'"{value}"'
        if v.lower() in _STAND_INS or (_BRACKETED.match(v) and len(v) < 40 and " " not in v):
            return f'"{value}"'
        if _STAND_IN_EMAIL.match(v) or _STAND_IN_NAME.fullmatch(v):
            return f'"{value}"'
    return None


def is_placeholder(value: str) -> bool:
    """Whether a value stands in for a real one (`string`, `YYYY-MM-DD`, `name@company.com`)."""
    return _placeholder([value]) is not None


def _filler(values: Iterable[str]) -> str | None:
    lorem = _lorem()
    for value in values:
        words = [w.strip(".,;:!?") for w in value.split()]
        if len(words) < 2 or not all(_WORD.fullmatch(w) for w in words):
            continue
        if all(w.lower() in lorem for w in words) and (len(words) >= 4 or value == value.lower()):
            return f'"{value}"'  # (a short one only in lower case: "Blue Ridge" may be a name)
    return None


def _said(value: Any, text: str) -> bool:
    if isinstance(value, bool) or value is None:
        return True  # (said in words: "make it public", "clear the note")
    if isinstance(value, int | float):
        number = f"{value:g}" if isinstance(value, float) else str(value)
        return number in text or f"{value:,}" in text
    if isinstance(value, str):
        if value.startswith("$calls.") or len(value) < 2 or _looks_like_an_id(value):
            return True  # (an id may come from a lookup's result, which validation checks)
        return value.lower() in text or value.replace("_", " ").lower() in text
    return True


def _looks_like_an_id(value: str) -> bool:
    return " " not in value and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _fixed(schema: dict[str, Any] | None, argument: str) -> bool:
    """Whether the tool's schema allows `argument` one value only (`const`, a one-value `enum`)."""
    prop = ((schema or {}).get("properties") or {}).get(argument)
    return isinstance(prop, dict) and ("const" in prop or len(prop.get("enum") or ()) == 1)


def _missing(
    instruction: str, calls: Sequence[dict[str, Any]], tools: Mapping[str, Any], results: Sequence[str]
) -> str | None:
    text = instruction.lower()
    for i, call in enumerate(calls):
        if i and i <= len(results):  # what the calls before it returned is known by now
            text += "\n" + results[i - 1].lower()
        schema = tools.get(call.get("name", ""))
        for argument, given in (call.get("arguments") or {}).items():
            if _fixed(schema, argument):
                continue  # (a person need not say what can only be one thing)
            for value in _values(given):
                if not _said(value, text):
                    return f"{call.get('name')}: {value!r}"
    return None


def text_problems(instruction: str, calls: Sequence[dict[str, Any]], tools: Sequence[str] = ()) -> str | None:
    """The first check `instruction` fails that needs no call's result (all but "missing fact"),
    or None: for a request built a clause at a time, each clause checked as it is added."""
    problems = instruction_problems(instruction, calls, tools, results=None)
    return problems[0][0] if problems else None


def instruction_problems(
    instruction: str,
    calls: Sequence[dict[str, Any]],
    tools: Mapping[str, Any] | Sequence[str] = (),
    results: Sequence[str] | None = (),
) -> list[tuple[str, str]]:
    """The checks `instruction` fails, each as (check, what was found); [] when it reads well.

    `tools`: the domain's tools, name -> input schema (or just their names); `results`: the text of
    each gold call's result, in order (a value an earlier call returned need not be said); None
    skips the "missing fact" check, which needs them."""
    if not isinstance(tools, Mapping):
        tools = dict.fromkeys(tools)
    problems: list[tuple[str, str]] = []
    strings = [
        v
        for call in calls
        for v in _values(call.get("arguments") or {})
        if isinstance(v, str) and not v.startswith("$calls.")
    ]
    said = _quoted(instruction) + strings
    for check, found in (
        ("repeated", repeated(instruction)),
        ("internal name", _internal(instruction, list(tools))),
        ("opaque id", _opaque_found(instruction)),
        ("structured", m.group(0) if (m := _STRUCTURED.search(_QUOTED.sub('""', instruction))) else None),
        ("circular", m.group(0) if (m := _CIRCULAR.search(_QUOTED.sub('""', instruction))) else None),
        ("placeholder", _placeholder(said)),
        ("filler", _filler(said)),
        ("missing fact", None if results is None else _missing(instruction, calls, tools, results)),
    ):
        if found is not None:
            problems.append((check, found))
    return problems


def _structured(value: Any) -> bool:
    """Whether `value` holds an object (`{"op": ...}`, `[{...}]`): no request says one in words."""
    return isinstance(value, dict) or (
        isinstance(value, list) and any(isinstance(v, dict | list) for v in value)
    )


#: the longest text a request gives a field (a note, a description, an address)
_LONGEST_SAID = 200


#: last words of a field that holds a state or a kind, which a number can only code
STATE_WORDS = frozenset("type kind mode category status state".split())


def unsayable(column: str, value: Any) -> bool:
    """Whether no person would write `value` into `column`: a record (`_structured`), a UUID or
    a sid (`checks.opaque`), a stand-in code the seed drew for a field nothing described
    (`ITE-86837` as an item), a number for a type or a state (`group type 416`: a code whose
    meaning nothing says), or a text too long to type (a 1,000-character SAML document)."""
    values = value if isinstance(value, list) else [value]
    coded = bool(STATE_WORDS.intersection(words(column)[-1:]))
    return (
        _structured(value)
        or coded
        and any(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
        or any(isinstance(v, str) and len(v) > _LONGEST_SAID for v in values)
        or any(isinstance(v, str) and opaque(v) for v in values)
        or any(is_code_of(column, v) for v in values)
    )
