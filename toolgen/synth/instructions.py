"""Task instructions from templates: every fact the agent needs, nothing of the solution.

A row is named the way a person would name it; a write is said with the verb of its operation,
never with a tool's name; values are quoted as they must be given. The phrasing is chosen by a
seeded `random.Random`, so the same seed gives the same text. `row_phrase`, `value_text` and
`write_sentence` make the phrases for a row, a value and a write.
Design notes: docs/design/toolgen.md.
Over 500 lines: the phrase makers every instruction is assembled from, read together.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, zip_longest
from typing import Any

from toolgen.entities import is_verb
from toolgen.naming import plural, plural_phrase, singular, words

from .lexicon import AFTER_ADJECTIVES, SHORT_NOUNS, in_full, is_acronym, named_as

__all__ = [
    "Said",
    "plain",
    "ask_many",
    "acting_on",
    "ask_sentence",
    "capitals",
    "compounds",
    "as_written",
    "compare_sentence",
    "field_phrase",
    "id_phrase",
    "join_clauses",
    "noun",
    "own_field",
    "refusal_sentence",
    "marking",
    "row_phrase",
    "refer_once",
    "row_where",
    "rows_phrase",
    "settings_phrase",
    "total_sentence",
    "value_text",
    "verb_phrase",
    "via_phrase",
    "write_sentence",
]

_OPENERS = ("", "Please ", "Hi, could you ", "I need you to ", "Can you ")
_QUESTION = (
    "What is the {field} of {target}?",
    "Tell me the {field} of {target}.",
    "Look up the {field} of {target}.",
)
_CODE_WORDS = re.compile(r"[a-z]+(?:_[a-z]+)+")
_FILLER = frozenset("a an the of for to by with and or in on at from into".split())
_HTTP_VERBS = frozenset("get post put patch delete head".split())


def noun(entity: str) -> str:
    """An entity's name as words (`reservation_flight` → `reservation flight`), a plural before
    its head said in the singular as a modifier is (`realms_admin` → `realm admin`; not `sales`)."""
    ws = [w.upper() if is_acronym(w) else in_full(w) for w in words(entity)]  # (`NFS`, `VPC`)
    said = [w if w in _PLURAL_MODIFIERS or w.isupper() else singular(w) for w in ws[:-1]] + ws[-1:]
    if len(said) > 1 and said[-1] in AFTER_ADJECTIVES:  # (Slack's `files.remote`: a remote file)
        said = [said[-1], *said[:-1]]
    if said and said[-1] in _MASS:  # (`each of the weather`: `each of the weather records`)
        said.append(_MASS[said[-1]])
    return " ".join(said) or entity


#: nouns of no count, and what one of them is called
_MASS = {
    **dict.fromkeys(
        "weather music software equipment furniture feedback traffic advice research".split(), "record"
    ),
    **dict.fromkeys("evidence information info data metadata".split(), "record"),
    **dict.fromkeys("news media".split(), "item"),
    "staff": "member",
    "history": "entry",
    "content": "item",
}
#: plurals that stay plural before a noun (`sales order`, `sports team`, `goods receipt`)
_PLURAL_MODIFIERS = frozenset("sales sports goods terms means savings earnings arms customs".split())


def field_phrase(column: str) -> str:
    """A column's name as words (`first_name` → `first name`; `emailAddress` → `email address`),
    short forms said in full (`num_pages` → `number of pages`, `no_of_nights` → `number of nights`)."""
    ws = list(words(column))
    if len(ws) == 1 and ws[0] in _ENDPOINTS:  # (`the from`: a message's sender)
        return _ENDPOINTS[ws[0]]
    said = [_SHORT.get(w, w) if w != "no" or ws[i + 1 : i + 2] == ["of"] else w for i, w in enumerate(ws)]
    after = said[-1] in AFTER_ADJECTIVES and said[0] not in _FLAG_HEADS  # (`email_pending`)
    if len(said) == 2 and (after or said[-1] == "total" and said[0] in _TOTALLED):  # (`amount_total`)
        said = [said[-1], said[0]]
    if said[:1] == ["number"] and len(said) > 1 and said[1] != "of" and singular(said[-1]) != said[-1]:
        said.insert(1, "of")  # (`number_nodes`: the number of nodes, no `number nodes 48`)
    return " ".join(said) or column


#: measures whose total an API names measure first (`amount_total`: the total amount)
_TOTALLED = frozenset("amount price tax cost count weight discount fee distance duration quantity".split())
#: first words of a yes-or-no field (`is_public`), which stay where they are
_FLAG_HEADS = frozenset("is has was are can should allow allows".split())
#: fields named by a bare preposition: who or where a thing goes from and to
_ENDPOINTS = {"from": "sender", "to": "recipient", "cc": "copy recipient", "bcc": "blind copy recipient"}
#: short forms of words in field names
_SHORT = {"num": "number", "no": "number", "qty": "quantity", "amt": "amount", "pct": "percent", "cnt": "count",
          "def": "definition", "pub": "publication", **SHORT_NOUNS}  # fmt: skip


@dataclass(frozen=True)
class Said:
    """A value the instruction does not state but points at: a row (`the user whose ...`), or with
    `copy` another row's value of the field being set (`to match the user whose ...`); `calls` are
    the lookups that reveal it."""

    value: Any
    text: str
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list, compare=False)
    copy: bool = False


def plain(value: Any) -> Any:
    """The value itself (of a `Said`, what it points at)."""
    return value.value if isinstance(value, Said) else value


def value_text(value: Any) -> str:
    """A value written so that the agent can pass it back (a `Said`: its words; a code of lower-case
    words, `round_trip`, as those words: the tool's schema or description names the code; a list
    of plain values as a list is said); an object stays JSON, which the checks reject."""
    if isinstance(value, Said):
        return f"the same one as {value.text}" if value.copy else value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        if _CODE_WORDS.fullmatch(value):  # `round_trip`: a person says "round trip"
            return value.replace("_", " ")
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list) and value and all(isinstance(v, str | int | float) for v in value):
        return join_clauses([value_text(v) for v in value])  # (`"red" and "blue"`, as said)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def row_phrase(entity: str, column: str, value: Any) -> str:
    """`the <entity> whose <column> is <value>`; `the artist "Ada Lovelace"` by a column named as
    the thing itself."""
    if named_as(column, tuple(singular(w) for w in words(entity))):
        return f"the {noun(entity)} {value_text(value)}"
    return f"the {noun(entity)} whose {field_phrase(column)} is {value_text(value)}"


#: a state said before its noun (`pending`, `in progress`), not a number or a code
_STATE = re.compile(r"[a-z]+(?:[ _][a-z]+)?")


def row_where(entity: str, pairs: Sequence[tuple[str, Any]], owners: Sequence[str] = ()) -> str:
    """`the <entity> whose <a> is <x> and <b> is <y> of <owner>`; a row told apart by its state
    alone is `the stopped chart of ...`, as a person says it (not `whose status is "stopped"`)."""
    text = f"the {noun(entity)}"
    if (
        len(pairs) == 1
        and tuple(words(pairs[0][0])[-1:]) in (("status",), ("state",))
        and _STATE.fullmatch(str(pairs[0][1]).lower())
    ):
        text = f"the {re.sub('[ _]', '-', str(pairs[0][1]).lower())} {noun(entity)}"
        pairs = []
    if pairs:
        said = dict.fromkeys(f"{field_phrase(c)} is {value_text(v)}" for c, v in pairs)  # (each once)
        text += " whose " + join_clauses(list(said))
    if owners:  # (after its own values: `the shape whose name is "A" of the page whose name is "B"`)
        text += " of " + owners_phrase(owners)
    return text


def owners_phrase(owners: Sequence[str]) -> str:
    """The rows a row belongs to, each said once: two parents may be one row, and one may be said
    inside another (`the employee ... of the tenant T-1` and `the tenant T-1`: the first only)."""
    said = list(dict.fromkeys(owners))
    return join_clauses([o for o in said if not any(o != other and o in other for other in said)])


def id_phrase(entity: str, key: Any) -> str:
    """`the <entity> <id>`: a row named by its id (the instruction gives it)."""
    return f"the {noun(entity)} {key}"


def via_phrase(entity: str, child_entity: str, child: str) -> str:
    """`the <entity> of <child phrase>`: a row named through a row that refers to it (`the
    settings of the table ...`, not `the table settings of the table ...`)."""
    if child_entity == entity:
        return child
    own, lead = noun(entity), noun(child_entity) + " "
    return f"the {own[len(lead) :] if own.startswith(lead) else own} of {child}"


#: words of an operation's name that say which rows, not what it does (`delete_specific_...`)
_SAYS_WHICH = frozenset("specific single multiple given existing selected one".split())


#: words after which an operation's name says what the verb acts for, not another verb
_OBJECT_AFTER = frozenset("for to from of in on by with via".split())


def verb_phrase(op_words: Sequence[str], entity: str, owners: Iterable[str] = ()) -> str:
    """What an operation does, in its own words without its entity (`cancel_order` → `cancel`)
    nor the words of the rows it belongs to, `owners` (`sync_guild_template` → `sync`)."""
    mine = set(words(entity)) | {plural(w) for w in words(entity)} | {w + "s" for w in words(entity)}
    mine |= set(owners) | {plural(w) for w in owners} | _SAYS_WHICH
    words_kept = [w for w in op_words if w not in mine and w not in ("id", "ids") and not w.isdigit()]
    # `approve_pending_for_list`, `send_invoice_to_customer`: after its verb, a preposition starts
    # what the verb acts for, which is said elsewhere (or not at all)
    first = next((i for i, w in enumerate(words_kept) if is_verb(w) and w not in _HTTP_VERBS), None)
    if first is not None:
        cut = next((i for i in range(first + 1, len(words_kept)) if words_kept[i] in _OBJECT_AFTER), None)
        words_kept = words_kept if cut is None else words_kept[:cut]
    kept = [w for w in words_kept if w not in _FILLER]
    if kept and (kept[0] in _HTTP_VERBS or not is_verb(kept[0])):
        # `post_treasury_id_cancel`, `apps_cancel_job`: a method or a namespace, then the verb
        later = next((i for i in range(1, len(kept)) if is_verb(kept[i])), None)
        if later is not None:
            kept = kept[later:]
    if len(kept) > 1 and kept[-1] in ("action", "actions"):  # Stripe's `cancel_action`
        kept = kept[:-1]
    if len(kept) >= 3 and is_verb(kept[-1]):  # `test helpers issuing refund`: a namespace, then the verb
        kept = kept[-1:]
    return " ".join(kept) or " ".join(op_words) or "update"


#: verbs whose object follows a preposition
_PREPOSITIONS = {"reply": "to", "respond": "to", "subscribe": "to", "unsubscribe": "from", "comment": "on"}


def acting_on(verb: str) -> str:
    """A verb phrase with its own object said as a part of the row (`reset database` → `reset
    the database of`, then the row); a verb alone, or one before `all` or a preposition, as it is."""
    first, _, rest = verb.partition(" ")
    if not rest and first in _PREPOSITIONS:  # (`reply to the conversation ...`)
        return f"{first} {_PREPOSITIONS[first]}"
    if not rest or not is_verb(first) or any(is_verb(w) for w in rest.split()):
        return verb
    if rest.split()[0] in _FILLER or rest.split()[0] in ("all", "as", "every", "each"):
        return verb
    return f"{first} the {rest} of"


def marking(verb: str, target: str) -> tuple[str, str]:
    """(verb, target) of a clause: a state a verb marks the row with follows it (`mark the
    invoice INV-1 as uncollectible`, not `mark the uncollectible of ...`); else `acting_on`."""
    first, _, rest = verb.partition(" ")
    state = rest.split()[1:] if rest.startswith("as ") else rest.split()
    if first in ("mark", "flag") and len(state) == 1:
        return first, f"{target} as {state[0]}"
    return acting_on(verb), target


def _to(value: Any) -> str:
    """`to "open"`; a copied value `to match the user whose ...`."""
    return f"to match {value.text}" if isinstance(value, Said) and value.copy else f"to {value_text(value)}"


def _with(column: str, value: Any) -> str:
    """`status "open"`; a copied value `the same city as the user whose ...`."""
    if isinstance(value, Said) and value.copy:
        return f"the same {field_phrase(column)} as {value.text}"
    if isinstance(value, bool):  # (`inclusive`, `not public`: no `inclusive true`)
        ws = field_phrase(column).split()
        flag = " ".join(ws[1:] if len(ws) > 1 and ws[0] in _FLAG_HEADS else ws)
        return flag if value else f"not {flag}"
    said = field_phrase(column).removeprefix("number of ")
    if said in _COUNTED and isinstance(value, int) and value > 1:
        return f"{value} {said}"  # (`11 nights`, no `nights 11` or `number of nights 11`)
    return f"{field_phrase(column)} {value_text(value)}"


#: plural things a count of them is said before (`3 nights`, `2 guests`)
_COUNTED = frozenset(
    "nights days weeks months years hours minutes guests adults children seats rooms tickets".split()
)


def settings_phrase(settings: Sequence[tuple[str, Any]]) -> str:
    """`its status to "open" and its priority to 2`."""
    parts = [f"its {field_phrase(c)} {_to(v)}" for c, v in settings]
    return join_clauses(parts)


def join_clauses(parts: Sequence[str]) -> str:
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _sentence(rng: random.Random, body: str) -> str:
    opener = rng.choice(_OPENERS)
    text = opener + (body if opener else body[:1].upper() + body[1:])
    return text.rstrip(".") + ("?" if opener.endswith("you ") else ".")


def write_sentence(rng: random.Random, clauses: Sequence[str]) -> str:
    """One request made of clauses (`cancel the order ...`, `then set ...`)."""
    return _sentence(rng, join_clauses(clauses))


def refusal_sentence(rng: random.Random, clause: str) -> str:
    """A request the tools will refuse: the agent must try, then say why it could not."""
    return _sentence(rng, clause) + " If that is not possible, tell me the reason, naming its current state."


#: a row named by what a person knows of it (`the user whose name is "Ada" and city is "Oslo"`)
#: or by its id (`the site SIT-1007`)
ROW = re.compile(
    r'\bthe ([a-z]+(?: (?!the\b|of\b|for\b)[a-z]+)*) (?:whose [a-z0-9 ]+? is "(?:[^"\\]|\\.)*"'
    r'(?:(?:,| and) [a-z0-9 ]+? is "(?:[^"\\]|\\.)*")*|[A-Z][A-Z0-9]*-[0-9]+\b)'
)


def refer_once(text: str) -> str:
    """`text` with a row named a second time said as `that <noun>` (`... and delete that user`)."""
    seen: set[str] = set()

    def once(m: re.Match[str]) -> str:
        if m.group(0) in seen:
            return f"that {m.group(1)}"
        seen.add(m.group(0))
        return m.group(0)

    return ROW.sub(once, text)


_CAPITALS = re.compile(r"\b([A-Z][A-Z0-9]{1,5})s?\b")
_LOWER_WORD = re.compile(r"\b[A-Za-z][a-z0-9]{1,5}\b")  # (`Audit` beside `AUDIT`: a word, not a name)
#: words a description writes in capitals for emphasis or as code, not as a name
_NOT_NAMES = (
    _FILLER
    | _HTTP_VERBS
    | frozenset(
        "all any not no yes new only must should may can will none true false null ok is are be "
        "if else then when this that it you we id note notes warning important deprecated todo".split()
    )
)
_QUOTED_TEXT = re.compile(r'"(?:[^"\\]|\\.)*"')


def capitals(texts: Sequence[str]) -> dict[str, str]:
    """The names the domain's own words write in capitals and never otherwise (`SCU`, `DICOM`,
    `URL`; not `AUDIT` beside `Audit`), by their lower-case form; plurals with them (`SCUs`)."""
    upper = {m.group(1) for t in texts for m in _CAPITALS.finditer(t)}
    lower = {m.group(0).lower() for t in texts for m in _LOWER_WORD.finditer(t)}
    found: dict[str, str] = {}
    for name in sorted(upper):
        low = name.lower()
        if low in lower or low in _NOT_NAMES or len(name) < 2 or not name[0].isalpha():
            continue
        found[low] = name
        if not name.endswith("S"):
            found.setdefault(f"{low}s", f"{name}s")
    return found


#: words English writes joined
_JOINED = frozenset(
    "username password timestamp keyword database webhook workflow filename hostname checkout "
    "playlist bookmark snapshot download upload feedback endpoint metadata namespace dataset "
    "datasource workspace framework payload notebook spreadsheet storefront nonprofit".split()
)


def compounds(texts: Sequence[str], names: Sequence[str]) -> dict[str, str]:
    """Words of `names` (tables) that join two words the domain's own words write apart
    and never write joined (`invoiceitem` -> `invoice item`), with their plurals."""
    said = {w for t in texts for w in words(t)}  # (`ReplicationController`: two words)
    found: dict[str, str] = {}
    for word in sorted({w for n in names for w in words(n)}):
        one = word[:-1] if word.endswith("s") and word[:-1] not in said else word
        if len(one) < 7 or one in said or one in _JOINED or not one.isalpha():
            continue
        for i in range(3, len(one) - 2):
            if one[:i] in said and (one[i:] in said or plural(one[i:]) in said):
                found[one] = f"{one[:i]} {one[i:]}"
                found[f"{one}s"] = f"{one[:i]} {plural(one[i:])}"
                break
    return found


def as_written(text: str, names: dict[str, str]) -> str:
    """`text` with each word of `names` (`capitals`, `compounds`) outside a quoted value written
    as the domain writes it."""
    if not names:
        return text
    parts = _QUOTED_TEXT.split(text)
    quoted = _QUOTED_TEXT.findall(text)
    cased = [re.sub(r"\b[a-z][a-z0-9]*\b", lambda m: names.get(m.group(0), m.group(0)), p) for p in parts]
    return "".join(chain.from_iterable(zip_longest(cased, quoted, fillvalue="")))


def ask_sentence(rng: random.Random, column: str, target: str, entity: str = "") -> str:
    """A question about one value of a row (of `entity`: a field named after it is asked for without
    its name, `the id of the flight ...`, not `the flight id of the flight ...`)."""
    return rng.choice(_QUESTION).format(field=own_field(column, entity), target=target)


def own_field(column: str, entity: str) -> str:
    """A column's words without its entity's name in front (`flight_id` of a flight: `id`)."""
    field, own = field_phrase(column), noun(entity) if entity else ""
    return field[len(own) + 1 :] if own and field.startswith(own + " ") else field


def ask_many(
    rng: random.Random, columns: str | Sequence[str], entity: str, field: str, values: Sequence[str]
) -> str:
    """One question about one or more values of several rows named by one field: `Tell me the
    currency of each of the shipping rates whose display names are "A" and "B".` (`values` as
    said; with no `field`, the rows' ids: `the tasks TAS-1 and TAS-2`)."""
    named = [columns] if isinstance(columns, str) else list(columns)
    asked = join_clauses([f"{'the ' if i else ''}{own_field(c, entity)}" for i, c in enumerate(named)])
    rows = rows_phrase(entity, field, values)
    return rng.choice(
        (
            f"What {'are' if len(named) > 1 else 'is'} the {asked} of each of {rows}?",
            f"Tell me the {asked} of each of {rows}.",
            f"Look up the {asked} of each of {rows}.",
        )
    )


def rows_phrase(entity: str, field: str, values: Sequence[str]) -> str:
    """`the shipping rates whose display names are "A" and "B"`; with no `field`, by id: `the
    tasks TAS-1 and TAS-2`; an acronym with no plural leaves the ids alone (`NFS-1 and NFS-2`,
    no `the NFS NFS-1`)."""
    thing = noun(entity)
    if not field and plural_phrase(thing) == thing and is_acronym(thing.split()[-1]):
        return join_clauses(list(values))
    rows = f"the {plural_phrase(thing)} "
    return rows + (f"whose {plural_phrase(field)} are " if field else "") + join_clauses(list(values))


def total_sentence(rng: random.Random, entity: str, field: str, values: Sequence[str], column: str) -> str:
    """`What is the total price of the products whose names are "A", "B" and "C"?`."""
    asked, rows = own_field(column, entity), rows_phrase(entity, field, values)
    return rng.choice(
        (
            f"What is the total {asked} of {rows}?",
            f"Add up the {asked} of {rows} and tell me the total.",
            f"I need the combined {asked} of {rows}.",
        )
    )


def compare_sentence(
    rng: random.Random, entity: str, field: str, values: Sequence[str], column: str, highest: bool
) -> str:
    """`Of the products whose name is "A", "B" or "C", which has the highest price? ...` (`values`
    as the instruction gives them)."""
    most, asked, own = ("highest" if highest else "lowest"), own_field(column, entity), noun(entity)
    many = f"the {plural_phrase(own)} whose {field} is " + ", ".join(values[:-1]) + " or " + values[-1]
    return rng.choice(
        (
            f"Of {many}, which has the {most} {asked}, and what is it?",
            f"I am comparing {many}. What is the {most} {asked} among them?",
            f"Look up {many} and tell me the {most} {asked} of them.",
        )
    )


def count_sentence(rng: random.Random, entity: str, column: str, value: Any) -> str:
    """A question about how many rows have a value."""
    return rng.choice(
        ("How many {e} records have {c} {v}?", "Count the {e} records whose {c} is {v}.")
    ).format(e=noun(entity), c=field_phrase(column), v=value_text(value))


def clause(verb: str, target: str, settings: Sequence[tuple[str, Any]] = ()) -> str:
    """`<verb> <target>` (+ `, setting its x to y`)."""
    text = f"{verb} {target}"
    if settings:
        text += ", setting " + settings_phrase(settings)
    return text


def update_clause(target: str, settings: Sequence[tuple[str, Any]]) -> str:
    """`change <field> of <target> to <value> (and ...)`."""
    parts = [f"the {field_phrase(c)} {_to(v)}" for c, v in settings]
    return (
        f"change {join_clauses(parts)} for {target}"
        if len(parts) > 1
        else (f"change the {field_phrase(settings[0][0])} of {target} {_to(settings[0][1])}")
    )


#: verbs that get a thing rather than make one: `book a hotel`, not `book a new hotel`
_BOOKS = frozenset("book reserve schedule order buy purchase place request apply enroll subscribe".split())
#: verbs an operation's name may start with that say how a record comes to be
_ACTS = frozenset(
    "send book calculate add schedule register submit issue open start generate upload invite request "
    "reserve place order buy purchase import log record assign transfer publish file report compute "
    "convert subscribe enroll apply".split()
)


def creates(verb: str) -> bool:
    """Whether an operation whose verb is `verb` makes a record a person asks for (`book`, `add`,
    `send`; `products`, no verb at all): not one that sorts, tests or clones (`create a new t`)."""
    return verb in _ACTS or verb in ("create", "new", "insert", "make", "post") or not is_verb(verb)


#: fields that name the file a new part goes into (a Word server's `filename`), not a field of the part
_FILE_FIELDS = frozenset(("filename", "file name", "file path", "document name", "document path"))


def create_clause(
    verb: str,
    entity: str,
    owners: Sequence[str],
    settings: Sequence[tuple[str, Any]],
    using: Sequence[str] = (),
) -> str:
    """`create a new <entity> for <owner> with <field> <value>, ... using <row>` (`send a new
    ...`; `book a ...`): `using` names rows the new one uses, not its owners."""
    verb = verb if verb in _ACTS else "create"
    thing = noun(entity)
    a = ("an" if thing[:1] in "aeiou" else "a") if verb in _BOOKS else "a new"  # (`book a hotel`)
    text = f"{verb} {a} {thing}"
    own = {noun(entity), f"{noun(entity)} name", "name"}
    named = next((v for c, v in settings if field_phrase(c) in own and not isinstance(v, Said)), None)
    if named is not None:  # `a new namespace named "billing-staging"`, not `with namespace "..."`
        text += f" named {value_text(named)}"
        settings = [(c, v) for c, v in settings if v is not named]
    filed = next(
        (v for c, v in settings if field_phrase(c) in _FILE_FIELDS and not isinstance(v, Said)), None
    )
    if filed is not None and thing not in ("file", "document"):  # `a new paragraph to the file ...`
        text += f" to the file {value_text(filed)}"
        settings = [(c, v) for c, v in settings if v is not filed]
    if owners:
        text += " for " + join_clauses(owners)
    if settings:
        text += " with " + join_clauses([_with(c, v) for c, v in settings])
    if using:
        text += " using " + join_clauses(using)
    return text


__all__ += ["clause", "count_sentence", "create_clause", "creates", "update_clause"]
