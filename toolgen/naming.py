"""Words and names: splitting identifiers into words, snake_case, singular nouns, tool names.

Everything here is a pure function of its arguments; `words` and `singular` are memoised.

    words("getWeatherForecast") -> ["get", "weather", "forecast"]
    singular("categories") -> "category"                  # `plural` the other way
    tool_name(words, used) -> a name matching ^[a-zA-Z0-9_-]{1,64}$, not in `used`

Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

#: A tool name valid for MCP, OpenAI and Anthropic tool calling.
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
#: A property name valid in an OpenAI / Anthropic input schema.
PROPERTY_NAME = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")
MAX_NAME = 64

# camelCase boundaries: "HTTPServer" -> HTTP Server, "getV2Items" -> get V2 Items, "UUIDv4" -> UUID v4,
# "uploadURLs" -> upload URLs.
_CAMEL = re.compile(
    r"[A-Z]{2,}(?=v[0-9])|[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+"
)
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_POSSESSIVE = re.compile(r"['’]s\b")
_NON_PROPERTY = re.compile(r"[^A-Za-z0-9_.-]+")

# Words whose singular is themselves or irregular; the rules below handle the rest.
_SINGULAR_SAME = frozenset(
    "news series species data metadata status bus campus analysis basis thesis axis chassis "
    "alias canvas atlas bonus census corpus virus gas lens address access process business "
    "class glass pass boss loss progress success stress express wireless dns sms os ios aws "
    "this its is was has gps https http css us plus minus always sometimes whereas focus "
    "settings details statistics stats analytics metrics physics mathematics economics "
    "politics ethics logistics credentials permissions whois tennis".split()
)
# Plurals used as the name of one record: keep them (a `settings` record, `details`).
_KEEP_PLURAL = frozenset(
    "settings details statistics stats analytics metrics credentials permissions".split()
)
_IRREGULAR = {
    "people": "person",
    "children": "child",
    # (short plurals of abbreviations: `the dbs of the database`, `each of the gpus`)
    "dbs": "db",
    "vms": "vm",
    "ips": "ip",
    "gpus": "gpu",
    "cpus": "cpu",
    "men": "man",
    "women": "woman",
    "mice": "mouse",
    "geese": "goose",
    "feet": "foot",
    "teeth": "tooth",
    "indices": "index",
    "matrices": "matrix",
    "vertices": "vertex",
    "criteria": "criterion",
    "phenomena": "phenomenon",
    "leaves": "leaf",
    "knives": "knife",
    "lives": "life",
    "wives": "wife",
    "halves": "half",
    "shelves": "shelf",
    "quizzes": "quiz",
    "movies": "movie",
    "cookies": "cookie",
    "series": "series",
    "buses": "bus",
    "aliases": "alias",
    "statuses": "status",
    "addresses": "address",
    "analyses": "analysis",
    "responses": "response",
    "licenses": "license",
    "databases": "database",
    "releases": "release",
    "purchases": "purchase",
    "cases": "case",
    "bases": "base",
    "phases": "phase",
    "courses": "course",
    "sources": "source",
    "resources": "resource",
    "invoices": "invoice",
    "prices": "price",
    "devices": "device",
    "services": "service",
    "spaces": "space",
    "places": "place",
    "choices": "choice",
    "voices": "voice",
    "pages": "page",
    "images": "image",
    "messages": "message",
    "packages": "package",
    "languages": "language",
    "ranges": "range",
    "changes": "change",
    "exchanges": "exchange",
    "charges": "charge",
    "badges": "badge",
    "edges": "edge",
    "bridges": "bridge",
    "ties": "tie",
    "lies": "lie",
    "pies": "pie",
}


def fold_ascii(text: str) -> str:
    """`text` with accents removed and other non-ASCII characters dropped."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return decomposed.encode("ascii", "ignore").decode("ascii")


@lru_cache(maxsize=65536)
def words(identifier: str) -> tuple[str, ...]:
    """The lower-case words of an identifier in any case style."""
    out: list[str] = []
    for chunk in _NON_ALNUM.split(_POSSESSIVE.sub("", fold_ascii(identifier))):
        if chunk:
            out.extend(w.lower() for w in _CAMEL.findall(chunk))
    return tuple(out)


def snake(identifier: str) -> str:
    """`identifier` in snake_case (may be empty when it has no ASCII letters or digits)."""
    return "_".join(words(identifier))


@lru_cache(maxsize=65536)
def singular(word: str) -> str:
    """The singular of an English noun (lower case), by rule; unknown shapes are kept."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or word in _SINGULAR_SAME or not word.isalpha() or word.endswith("news"):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return word[:-2]
    if word.endswith("ves") and len(word) > 4:
        return word[:-3] + "f" if word[-4] in "lr" else word[:-1]
    if word.endswith(("ss", "sis", "xis", "tus", "rus", "pus", "bus", "mus", "ius", "ous", "aas")):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


#: words that are their own plural (a table of them keeps the name)
_SAME_PLURAL = frozenset(
    "news series species data metadata media sheep fish info information music software equipment "
    "furniture feedback weather traffic advice research evidence staff".split()
)


_IRREGULAR_PLURAL = {one: many for many, one in _IRREGULAR.items()}


def plural_phrase(phrase: str) -> str:
    """A noun phrase in words with its last word plural, irregular ones too (`block child` →
    `block children`, `filter properties` kept), for text a person reads."""
    *head, last = phrase.split(" ")
    if last.isupper() and last.endswith("S"):
        return phrase  # (an acronym: `NFS`, `SMS`; `VPC` -> `VPCs`)
    return " ".join([*head, _IRREGULAR_PLURAL.get(last) or plural(last)])


@lru_cache(maxsize=65536)
def plural(word: str) -> str:
    """The plural of an English noun (lower case), by rule; a word already plural is kept
    (`orders`, `settings`, `news`): `category` → `categories`, `analysis` → `analyses`."""
    if not word or not word[-1].isalpha():
        return word + "s" if word else word
    if (
        word in _KEEP_PLURAL
        or word in _SAME_PLURAL
        or singular(word) != word
        or word.endswith(("ics", "news"))
    ):
        return word
    if 1 < len(word) <= 4 and word.endswith("s") and word[-2] not in "aeious":  # "txs", "ids"
        return word
    if word.endswith("sis") and len(word) > 4:
        return word[:-3] + "ses"
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def singular_phrase(parts: tuple[str, ...] | list[str]) -> str:
    """snake_case of `parts` with the last word made singular: (order, items) → order_item."""
    if not parts:
        return ""
    last = parts[-1]
    if last not in _KEEP_PLURAL:
        last = singular(last)
    return "_".join([*parts[:-1], last])


def short_hash(*parts: str, length: int = 8) -> str:
    """A short, stable hex digest of `parts`."""
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8", "surrogatepass"), digest_size=16)
    return digest.hexdigest()[:length]


def clip(name: str, limit: int = MAX_NAME) -> str:
    """`name` cut to `limit` characters at a word boundary where one is near."""
    if len(name) <= limit:
        return name
    cut = name[:limit]
    boundary = max(cut.rfind("_"), cut.rfind("-"))
    if boundary >= limit // 2:
        cut = cut[:boundary]
    return cut.strip("_-") or name[:limit]


def unique_name(base: str, used: set[str], salt: str) -> str:
    """`base` (a valid name) or a variant of it not in `used`; adds the result to `used`.

    A clash gets `_2`, `_3`, … ; a base that had to be clipped gets a short hash of `salt` so
    that two long names sharing their first 64 characters stay told apart.
    """
    name = base
    counter = 2
    while name in used:
        suffix = f"_{counter}"
        name = clip(base, MAX_NAME - len(suffix)) + suffix
        counter += 1
        if counter > 50:  # pathological: hundreds of identical names; a hash settles it
            suffix = "_" + short_hash(salt, str(counter))
            name = clip(base, MAX_NAME - len(suffix)) + suffix
    used.add(name)
    return name


def tool_base_name(identifier: str, fallback: str) -> str:
    """A snake_case tool name for `identifier`, or for `fallback` when it has no usable words."""
    name = snake(identifier) or snake(fallback) or "operation"
    if len(name) > MAX_NAME:
        suffix = "_" + short_hash(identifier, length=6)
        name = clip(name, MAX_NAME - len(suffix)) + suffix
    return name


def property_name(name: str) -> str:
    """A property name valid for tool-calling APIs, as close to `name` as possible."""
    if PROPERTY_NAME.match(name):
        return name
    cleaned = _NON_PROPERTY.sub("_", fold_ascii(name)).strip("_")
    if not cleaned:
        cleaned = "param_" + short_hash(name, length=6)
    if len(cleaned) > MAX_NAME:
        suffix = "_" + short_hash(name, length=6)
        cleaned = cleaned[: MAX_NAME - len(suffix)] + suffix
    return cleaned


def slug(text: str, limit: int = 40) -> str:
    """A lower-case, hyphenated slug of `text` for ids (never empty)."""
    s = "-".join(words(text))
    return clip(s, limit).strip("-") or "api"
