"""What a tool became (`Bound`) and the wording rules its binders share: sentences, entity names,
arguments, and literals and messages holding values from the data or the spec.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from toolgen.model import Operation
from toolgen.naming import words
from toolgen.synth.effects import STATE_VERBS

from ._records import one_of

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


@dataclass
class Bound:
    """What one tool became: its steps, and in words what it does and what it leaves out."""

    kind: str
    steps: list[dict[str, Any]]
    does: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    not_modelled: list[str] = field(default_factory=list)
    #: sentences once not modelled whose steps a model proposed (`--llm`) and checks kept
    proposed: list[str] = field(default_factory=list)


def _lit(value: Any) -> Any:
    """A value from the data or the spec as a literal of the steps (a leading `$` is not a name)."""
    return "$" + value if isinstance(value, str) and value.startswith("$") else value


def _say(text: str) -> str:
    """An error message holding values from the data or the spec, braces not read as a template."""
    return text.replace("{", "{{").replace("}", "}}")


def _typed(rows: list[dict[str, Any]], kind: str, rest: list[str]) -> dict[Any, list[str]]:
    """Rows by their `kind`, each as the sorted JSON of its `rest` columns."""
    out: dict[Any, list[str]] = {}
    for row in rows:
        out.setdefault(row.get(kind), []).append(json.dumps([row.get(c) for c in rest]))
    return {k: sorted(v) for k, v in out.items()}


def _participle(verb: str) -> str:
    """`exchange` -> `exchanged`, `modify` -> `modified`, `cancel` -> `cancelled` (by rule)."""
    if verb in STATE_VERBS:
        return STATE_VERBS[verb][0]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in tuple("aeiou"):
        return verb[:-1] + "ied"
    return verb + "ed"


def _stem_in(value: str, sentence: str) -> bool:
    """Whether every word of `value` appears in the sentence, as itself or inflected (refund: refunded)."""
    said = words(sentence)
    return all(any(w.startswith(v) and len(v) >= 4 or w == v for w in said) for v in words(value))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


def _entity(table: str) -> str:
    """`payment_methods` -> `Payment method`."""
    return " ".join(words(one_of(table))).capitalize()


def _properties(op: Operation) -> dict[str, dict[str, Any]]:
    """The arguments a step can name (`$args.NAME`): the others are left to the input schema."""
    props = op.input_schema.get("properties") or {}
    return {k: v for k, v in props.items() if isinstance(v, dict) and _NAME.fullmatch(k)}


def _is_list(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "array"


def _in_name(value: str, name_words: tuple[str, ...]) -> bool:
    """Whether a state's words appear together in a tool's name (`pending` in cancel_pending_order)."""
    state = words(value)
    n = len(state)
    return n > 0 and any(name_words[i : i + n] == state for i in range(len(name_words) - n + 1))


def _first(op: Operation, why: str) -> str:
    sentences = _sentences(op.description)
    return f"not modelled ({why}): {sentences[0] if sentences else op.name}"
