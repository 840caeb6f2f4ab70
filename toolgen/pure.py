"""Operations that name no record: computations and scratchpads.

    verb_of(op) -> "calculate"
    tableless(op, names_record) -> "nothing" | "not modelled: <sentence>" | None

A computation (`calculate`, `convert`, …) that names no record and is not declared a write has no
table to act on: it is "not modelled", as is a handoff that names no record
(`transfer_to_human_agents`). A scratchpad (`think`) changes and returns nothing.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import re

from toolgen.entities import VERB_MODIFIERS, PathInfo, analyse_path
from toolgen.model import Operation
from toolgen.naming import words

__all__ = ["NOTHING", "NOT_MODELLED", "free", "path_params", "tableless", "verb_of"]

#: how a scratchpad (`think`) is compiled: a read that changes and returns nothing
NOTHING = "nothing"
#: how an operation the language cannot express is reported (`not modelled: <its description>`)
NOT_MODELLED = "not modelled"
#: the result is the point, computed from the arguments alone
_COMPUTE = frozenset(
    "calculate calc compute recalculate convert translate estimate evaluate solve simulate predict "
    "classify detect recognize recognise summarize summarise analyze analyse parse encode decode hash "
    "encrypt decrypt compress decompress render plot transcribe tokenize paraphrase".split()
)
#: a scratchpad: changes nothing and returns nothing
_THOUGHT = frozenset("think reflect ponder brainstorm".split())
#: a handoff (`transfer_to_human_agents`): the conversation goes elsewhere, no record changes
_HANDOFF = frozenset("transfer escalate forward handoff hand redirect route refer".split())
#: words before a verb that qualify it (`batch_get`); here `re` stays a word of its own
_MODIFIERS = VERB_MODIFIERS - {"re"}
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_TAG = re.compile(r"<[^>]+>")
_OPENAPI = frozenset(("openapi-3.0", "openapi-3.1", "swagger-2.0"))


def _path_info(op: Operation) -> PathInfo | None:
    if op.format not in _OPENAPI or not op.pointer.startswith("/paths/"):
        return None
    parts = op.pointer[len("/paths/") :].rsplit("/", 1)
    if len(parts) != 2:
        return None
    return analyse_path(parts[0].replace("~1", "/").replace("~0", "~"))


def verb_of(op: Operation) -> str:
    """The operation's verb: a path's trailing verb segment, else its name's first word."""
    info = _path_info(op)
    if info is not None and info.verb:
        return str(info.verb)
    ws = words(op.name.rpartition(".")[2])
    i = 0
    while i < len(ws) - 1 and ws[i] in _MODIFIERS:
        i += 1
    return ws[i] if ws else ""


def path_params(op: Operation) -> frozenset[str]:
    """The names of the operation's path parameters (none but for OpenAPI operations)."""
    info = _path_info(op)
    return frozenset(info.params) if info is not None else frozenset()


def _first_sentence(text: str) -> str:
    text = " ".join(_TAG.sub(" ", text).split())
    first = _SENTENCE.split(text, maxsplit=1)[0] if text else ""
    return first if len(first) <= 200 else first[:199] + "…"


def tableless(op: Operation, names_record: bool) -> str | None:
    """How an operation that names no row (`names_record` False) is compiled: `nothing` (a
    scratchpad), `not modelled: <its description's first sentence>` (a computation), else None."""
    if _proxies(op):
        return f"{NOT_MODELLED}: {_said(op)}"  # (Kubernetes' `.../pods/{name}/proxy/{path}`)
    if names_record:
        return None
    verb = verb_of(op)
    ws = words(op.name.rpartition(".")[2])
    at = ws.index(verb) if verb in _HANDOFF and verb in ws else None
    if at is not None and ws[at + 1 : at + 2] == ("to",):
        return f"{NOT_MODELLED}: {_said(op)}"  # a handoff: `transfer_to_human_agents`
    if op.declared == "write":
        return None
    if verb in _THOUGHT:
        return NOTHING
    if verb in _COMPUTE:
        return f"{NOT_MODELLED}: {_said(op)}"
    return None


def _proxies(op: Operation) -> bool:
    """Whether an HTTP operation passes the request on to what its path names (its path ends in
    a `proxy` segment, then at most a parameter): a transport, no record of its own."""
    if not op.pointer.startswith("/paths/"):
        return False
    path = op.pointer[len("/paths/") :].rpartition("/")[0].replace("~1", "/").replace("~0", "~")
    static = [s for s in path.split("/") if s and not s.startswith("{")]
    tail = path.rstrip("/").rsplit("/", 2)
    return (
        bool(static)
        and static[-1].lower() == "proxy"
        and (tail[-1].lower() == "proxy" or (tail[-1].startswith("{") and tail[-2].lower() == "proxy"))
    )


def _said(op: Operation) -> str:
    return _first_sentence(op.description) or " ".join(words(op.name)).capitalize()


def free(op: Operation) -> bool:
    """Whether the operation takes and returns no record's id and names no record: it needs no
    table, and no entity to share with its domain."""
    return not op.consumes and not op.produces and tableless(op, False) is not None
