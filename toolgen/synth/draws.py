"""What seed values are drawn from: a column's `Field`, the `Draw` (its seeded Faker, the row's
`Person`, the clock), JSON-Schema fragments made plain, datetimes relative to the clock, and the
small makers the value rules share.

Seed data never reads the wall clock: datetimes lie before the domain's clock start (after it for
names like `expires_at`), drawn from the column's own stream.
"""

from __future__ import annotations

import math
import random
import re
import string
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any, cast

from faker import Faker

from ..naming import fold_ascii, singular, words
from .lexicon import (
    AFTER_ADJECTIVES,
    in_full,
    is_acronym,
    is_birth,
    is_future,
)

__all__ = [
    "Draw",
    "Field",
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_PROPERTIES",
    "Maker",
    "Person",
    "clock_start",
    "datetime_maker",
    "digits",
    "examples_of",
    "fake_method",
    "job_title",
    "note_about",
    "description_of",
    "fits",
    "flatten_schema",
    "full_name",
    "hex_digits",
    "make_faker",
    "noun",
    "person_of",
    "place_name",
    "random_person",
    "sentence",
    "subject_line",
    "code_of",
    "is_code_of",
    "head_noun",
    "TOPICS",
    "title_case",
    "uuid_value",
    "whole",
]

#: nested JSON values: how deep, how many properties of an object, how many items of an array
MAX_DEPTH = 3
MAX_PROPERTIES = 8
MAX_ITEMS = 3
#: seed datetimes lie this many days before the clock start (or after it, for future-ish names)
PAST_DAYS = 730
FUTURE_DAYS = 365


def make_faker() -> Faker:
    """Faker's en_US generator for seed data: unweighted choices (several times faster, as
    realistic), called directly rather than through the `Faker` proxy (half the cost a call).
    Typed as the proxy, whose stub lists the provider methods the generator answers at run time."""
    return cast(Faker, Faker("en_US", use_weighting=False).factories[0])


@dataclass(frozen=True)
class Person:
    """One person a row describes: its name, email and username agree."""

    first: str
    last: str
    domain: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def email(self) -> str:
        local = re.sub(r"[^a-z0-9.]", "", fold_ascii(f"{self.first}.{self.last}").lower())
        return f"{local or 'user'}@{self.domain}"

    @property
    def username(self) -> str:
        return re.sub(r"[^a-z0-9_]", "", fold_ascii(f"{self.first[:1]}{self.last}").lower()) or "user"


@dataclass
class Draw:
    """What a maker draws from: the column's seeded Faker generator and its `random` (`Draw.of`),
    the clock, the row's person."""

    fake: Faker
    rng: random.Random
    clock: datetime
    person: Person | None = None

    @classmethod
    def of(cls, fake: Faker, seed: int, clock: datetime) -> Draw:
        """`fake` reseeded with `seed` (its `random` is only its own once seeded: taken after)."""
        fake.seed_instance(seed)
        return cls(fake, fake.random, clock)


Maker = Callable[[Draw], Any]


@dataclass(frozen=True)
class Field:
    """A column (or a property inside a json column): what its values are made from.

    `type` is the column's type (string, integer, number, boolean, datetime, json); `hint` its
    JSON-Schema fragment from the source spec; `role`: the part of the row's person the column
    holds (`first`, `last`, `full`, `email`, `username`; see `person_role`), so that they agree.
    """

    table: str
    name: str
    type: str
    hint: Mapping[str, Any] = field(default_factory=dict)
    enum: tuple[Any, ...] | None = None
    default: Any = None
    role: str | None = None
    description: str | None = None
    #: what a row describes (`lexicon.row_kind`), when known beyond its table's name
    kind: str | None = None
    depth: int = 0


# ---------------------------------------------------------------------------------------------
# JSON Schema fragments


def flatten_schema(schema: Any, depth: int = 0) -> dict[str, Any]:
    """One plain schema from a fragment: `allOf` merged, the first non-null `anyOf`/`oneOf`
    alternative taken, a type list reduced to its first non-null type; never raises."""
    if not isinstance(schema, Mapping) or depth > 8:
        return {}
    out: dict[str, Any] = {k: v for k, v in schema.items() if k not in ("allOf", "anyOf", "oneOf")}
    for part in schema.get("allOf") or []:
        for key, value in flatten_schema(part, depth + 1).items():
            if key == "properties" and isinstance(out.get(key), Mapping):
                out[key] = {**out[key], **value}
            else:
                out.setdefault(key, value)
    for key in ("anyOf", "oneOf"):
        options = [flatten_schema(o, depth + 1) for o in schema.get(key) or []]
        options = [o for o in options if o.get("type") != "null"]
        if options:
            for k, v in options[0].items():
                out.setdefault(k, v)
    kind = out.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        out["type"] = kinds[0] if kinds else "null"
    return out


def examples_of(hint: Mapping[str, Any]) -> list[Any]:
    found = list(hint.get("examples") or []) if isinstance(hint.get("examples"), list) else []
    if "example" in hint:
        found.insert(0, hint["example"])
    return found


def whole(hint: Mapping[str, Any], key: str) -> int | None:
    """A schema keyword's value when it is a whole number >= 0 (`minLength`, `maxItems`), else None."""
    value = hint.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def fits(kind: str, value: Any) -> bool:
    """Whether `value` can be stored in a column of type `kind` (enums aside)."""
    if value is None:
        return False
    if kind in ("string", "datetime"):
        if kind == "datetime" and isinstance(value, str):
            try:
                datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                return False
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if kind == "boolean":
        return isinstance(value, bool)
    return True  # json


def clock_start(text: str) -> datetime:
    """The domain clock's start as an aware datetime (UTC when it names no zone)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _moment(d: Draw, future: bool, days: tuple[int, int] | None = None) -> datetime:
    low, high = days or ((1, FUTURE_DAYS) if future else (0, PAST_DAYS))
    seconds = d.rng.randint(low * 86400, high * 86400)
    base = d.clock.astimezone(UTC).replace(microsecond=0)
    return base + timedelta(seconds=seconds) if future else base - timedelta(seconds=seconds)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def datetime_maker(ws: tuple[str, ...], shape: str = "datetime") -> Maker:
    future = is_future(ws)
    days = (18 * 365, 90 * 365) if is_birth(ws) else None

    def make(d: Draw) -> Any:
        moment = _moment(d, future and days is None, days)
        if shape == "date":
            return moment.strftime("%Y-%m-%d")
        if shape == "time":
            return moment.strftime("%H:%M:%S")
        if shape == "clock":  # (a time of day as people say it: `14:35`)
            return f"{moment:%H}:{moment.minute - moment.minute % 5:02d}"
        if shape == "rfc2822":
            return format_datetime(moment.astimezone(UTC), usegmt=True)
        if shape == "epoch":
            return int(moment.timestamp())
        if shape == "epoch_ms":
            return int(moment.timestamp()) * 1000
        return _iso(moment)

    return make


def random_person(d: Draw) -> Person:
    return Person(d.fake.first_name(), d.fake.last_name(), d.fake.free_email_domain())


def full_name(d: Draw) -> str:
    """A person's first and last name (no titles or suffixes: what a user would type)."""
    return f"{d.fake.first_name()} {d.fake.last_name()}"


def person_of(d: Draw) -> Person:
    return d.person or random_person(d)


def title_case(text: str) -> str:
    """Each word capitalized; a short word without a vowel is an acronym (`NFS Share`, `VPC`)."""
    return " ".join(w.upper() if is_acronym(w) else w[:1].upper() + w[1:] for w in text.split())


def _phrase(d: Draw, low: int = 2, high: int = 5) -> str:
    return str(d.fake.sentence(nb_words=d.rng.randint(low, high), variable_nb_words=False)).rstrip(".")


def head_noun(entity: str) -> str:
    """An entity's last two words, singular and title-cased (`soundboard_default_sounds` →
    `Default Sound`): what a made-up name of one ends in."""
    ws = [in_full(w) for w in words(entity)[-2:]]
    if len(ws) == 2 and singular(ws[1]) in AFTER_ADJECTIVES:  # (`files_remotes`: a `Remote File`)
        ws = [singular(ws[1]), ws[0]]
    return title_case(" ".join([*ws[:-1], singular(ws[-1])])) if ws else ""


def place_name(entity: str) -> Maker:
    noun = head_noun(entity)  # (`Lake Ryan Deployed Branch`, not `... Deployed Branches`)
    if noun.split()[-1:] in (["Region"], ["Zone"]):  # (`EU West Region`, not `East Isabel Region`)
        return lambda d: f"{d.rng.choice(_AREAS)} {d.rng.choice(_SIDES)} {noun}"
    if noun.split()[-1:] in (["Location"], ["Place"]):  # (a location is named as its town is)
        return lambda d: str(d.fake.city())
    return lambda d: f"{d.fake.city()} {noun}"


#: where a provider's regions and zones are, and which part of it
_AREAS = "US EU Asia Canada Brazil Australia India Japan".split()
_SIDES = "East West North South Central".split()


def digits(count: int) -> Maker:
    return lambda d: "".join(d.rng.choice(string.digits) for _ in range(count))


def hex_digits(count: int) -> Maker:
    return lambda d: f"{d.rng.getrandbits(4 * count):0{count}x}"


def uuid_value(d: Draw) -> str:
    return str(uuid.UUID(int=d.rng.getrandbits(128), version=4))


def noun(d: Draw) -> str:
    """A category-like noun (`platform`, `hierarchy`)."""
    return str(d.fake.catch_phrase()).split()[-1].lower()


#: what a note, a message or a description is about: plain nouns of everyday work
TOPICS = (
    "invoice delivery contract report payment schedule order ticket request account address budget "
    "meeting shipment refund estimate proposal booking renewal appointment upgrade return password "
    "subscription warranty receipt quote inspection installation"
).split()
#: sentences a person writes in such a field, filled with a topic, a first name, a weekday, a company
_NOTES = (
    "Customer asked about the {topic}.",
    "Please review the {topic} before {day}.",
    "Called {name} about the {topic}; will follow up on {day}.",
    "Waiting for the {topic} from {company}.",
    "Updated the {topic} after the call with {name}.",
    "{name} confirmed the {topic} by email.",
    "The {topic} is due on {day}.",
    "Sent the {topic} to {company} for approval.",
    "Needs a second look at the {topic}.",
    "{name} will handle the {topic} next week.",
)
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


#: subject lines a person writes, filled with a topic
_SUBJECTS = (
    "Question about the {topic}",
    "{Topic} update",
    "{Topic} reminder",
    "Your {topic} is ready",
    "Follow-up on the {topic}",
    "{Topic} for {day}",
)


def subject_line(d: Draw) -> str:
    """A subject line as a person writes one (`Question about the invoice`)."""
    topic = d.rng.choice(TOPICS)
    return d.rng.choice(_SUBJECTS).format(topic=topic, Topic=topic.capitalize(), day=d.rng.choice(_DAYS))


def sentence(d: Draw) -> str:
    """A short note as a person writes one (a topic, a name, a day, a company), never filler words."""
    return d.rng.choice(_NOTES).format(
        topic=d.rng.choice(TOPICS),
        name=d.fake.first_name(),
        day=d.rng.choice(_DAYS),
        company=d.fake.company(),
    )


def job_title(d: Draw) -> str:
    """A job as a person says it: Faker's `Engineer, water` as `Water engineer`."""
    job = str(d.fake.job())
    head, _, kind = job.partition(", ")
    return f"{kind.capitalize()} {head.lower()}" if kind else job


#: parts of a document, whose text is what the document says, not a note about the part
_WRITTEN_PARTS = frozenset("paragraph heading footnote endnote section caption sentence chapter".split())


def note_about(entity: str) -> Maker:
    """A note written in a record's own field: half of them about the record itself (`Needs a
    second look at the custom model.`), the others about everyday work (`sentence`)."""
    own = " ".join(w.lower() for w in head_noun(entity).split())
    if own.split()[-1:] and own.split()[-1] in _WRITTEN_PARTS:
        own = ""  # (a paragraph's text is not about the paragraph: no `Sent the paragraph to ...`)

    def make(d: Draw) -> str:
        note = sentence(d)
        if own and d.rng.random() < 0.5:
            topic = next((t for t in TOPICS if f"the {t}" in note), None)
            return note.replace(f"the {topic}", f"the {own}", 1) if topic else note
        return note

    return make


def description_of(entity: str) -> Maker:
    """What a record's `description` says of it: what it is for (`Shared role for the support
    team.`), not a note about the day's work."""
    own = " ".join(w.lower() for w in head_noun(entity).split()) or "record"

    def make(d: Draw) -> str:
        return f"{d.rng.choice(_PURPOSES)} {own} for the {d.rng.choice(_TEAMS)} team."

    return make


_PURPOSES = "Shared Default Internal Main Backup Test Standard Temporary Primary Legacy".split()
_TEAMS = "billing support sales marketing finance design platform data security operations".split()


def _code_prefix(name: str) -> str:
    ws = words(name)
    return ("".join(c for c in (ws[-1] if ws else name) if c.isalpha())[:3] or "VAL").upper()


def code_of(name: str) -> Maker:
    """Values of a field nothing else describes: a code a person can read out (`ATT-40213` for an
    `attribution`), not filler words."""
    prefix = _code_prefix(name)
    return lambda d: f"{prefix}-{d.rng.randint(10000, 99999)}"


def is_code_of(name: str, value: Any) -> bool:
    """Whether `value` is one `code_of(name)` draws: a stand-in for a value nothing described,
    which a person would never write into that field."""
    return isinstance(value, str) and re.fullmatch(rf"{_code_prefix(name)}-\d{{5}}", value) is not None


def fake_method(method: str) -> Maker:
    return lambda d: getattr(d.fake, method)()
