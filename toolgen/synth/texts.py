"""String values: by format (`email`, `uri`, `uuid`, `phone`, `date-time`, ...), by the column's
and its table's names (a person's name, a city, a company, a title, a sentence, a code), by a
code-like example's shape; then `pattern`, `minLength` and `maxLength` enforced (a value that
misses the pattern is redrawn from the pattern (`pattern_draw`), seeded from the column's stream; whether a
value meets a pattern is asked on RE2, in linear time, and a draw's work is bounded by
PATTERN_DRAW_BUDGET).
Over 500 lines: one table of string makers by column name (`_string_by_name`), read as one.
"""

from __future__ import annotations

import base64
import re
import string
import warnings
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from simulator.codegen.fastschema import linear_time_problem, search_pattern

from ..naming import singular, words
from .checks import is_placeholder
from .draws import (
    Draw,
    Field,
    Maker,
    code_of,
    datetime_maker,
    description_of,
    digits,
    examples_of,
    fake_method,
    full_name,
    hex_digits,
    job_title,
    note_about,
    noun,
    person_of,
    place_name,
    random_person,
    sentence,
    subject_line,
    uuid_value,
    whole,
)
from .lexicon import (
    COMPANY_NAME_WORDS,
    DATE_WORDS,
    JOB_TABLES,
    PERSON_NAME_WORDS,
    TEXT_WORDS,
    VOCABULARY,
    WRITTEN,
    has_word,
    is_birth,
    is_future,
    labels_written,
    table_kind,
)
from .names import dish_name, genre_name, meeting_title, product_name, thing_name, todo_line, work_title
from .pattern_draw import TooCostly, Unsupported
from .pattern_draw import draw as draw_pattern

__all__ = ["DATE_FORMATS", "FORMATS", "string_maker"]

FORMATS: dict[str, Maker] = {
    "email": lambda d: person_of(d).email,
    "idn-email": lambda d: person_of(d).email,
    "uri": fake_method("url"),
    "url": fake_method("url"),
    "iri": fake_method("url"),
    "uri-reference": fake_method("uri_path"),
    "uuid": uuid_value,
    "guid": uuid_value,
    "hostname": fake_method("domain_name"),
    "idn-hostname": fake_method("domain_name"),
    "ipv4": fake_method("ipv4_public"),
    "ip": fake_method("ipv4_public"),
    "ipv6": fake_method("ipv6"),
    "phone": fake_method("phone_number"),
    "phone-number": fake_method("phone_number"),
    "tel": fake_method("phone_number"),
    "byte": lambda d: base64.b64encode(d.rng.randbytes(12)).decode("ascii"),
    "password": lambda d: d.fake.password(length=12),
    "currency": fake_method("currency_code"),
    "currency-code": fake_method("currency_code"),
    "iso-country-code": fake_method("country_code"),
    "country-code": fake_method("country_code"),
    "person-name": lambda d: person_of(d).full,
    "organization-name": fake_method("company"),
    "snowflake": lambda d: str(d.rng.randint(10**17, 10**19 - 1)),
    "int64": lambda d: str(d.rng.randint(1, 10**12)),
    "uint64": lambda d: str(d.rng.randint(1, 10**12)),
    "int32": lambda d: str(d.rng.randint(1, 10**6)),
    "decimal": lambda d: f"{d.rng.uniform(1, 1000):.2f}",
    "double": lambda d: f"{d.rng.uniform(1, 1000):.2f}",
    "float": lambda d: f"{d.rng.uniform(1, 1000):.2f}",
    "color": fake_method("hex_color"),
    "language": fake_method("language_code"),
    "locale": fake_method("locale"),
    "duration": lambda d: f"P{d.rng.randint(1, 30)}D",
    "mac": fake_method("mac_address"),
    "http-method": lambda d: d.rng.choice(VOCABULARY["method"]),
}
DATE_FORMATS = {
    "date-time": "datetime",
    "datetime": "datetime",
    "dateTime": "datetime",
    "date": "date",
    "full-date": "date",
    "time": "time",
    "partial-time": "time",
    "date-time-rfc-2822": "rfc2822",
    "date-time-rfc1123": "rfc2822",
    "rfc2822": "rfc2822",
    "http-date": "rfc2822",
    "unix-time": "epoch",
    "unixtime": "epoch",
    "timestamp": "epoch",
}


#: a description that says a name is a person's (`Cardholder name.`, `The account holder's name`)
_HOLDER = re.compile(r"(?i)\b(?:card|account)?holder(?:'s)?\b|\bperson'?s? (?:full )?name\b")
#: what is named as a folder is
_FOLDER_THINGS = ("directory", "folder", "dir")


def folder_name(d: Draw) -> str:
    """A folder's name as people name folders: `exports`, `reports-2024`."""
    word = d.rng.choice(_FOLDERS)
    return f"{word}-{d.rng.randint(2019, 2025)}" if d.rng.random() < 0.5 else word


#: what is named by a host name
_HOSTS = ("domain", "hostname", "host", "subdomain")
#: keys people tag their resources with
_TAG_KEYS = ("env", "team", "owner", "project", "cost-center", "stage", "department", "app")
#: works people title (films, books, songs, shows): named by their titles, not `Promo Movie`
_WORKS = frozenset(
    "movie film show episode podcast song track album book novel sculpture painting artwork poem".split()
)
#: meetings and calls, titled as a calendar shows them
_MEETINGS = frozenset("meeting call conference standup huddle".split())
#: things a person writes on a to-do list
_TODO_THINGS = frozenset("task todo to_do reminder chore".split())
#: things named as a dish is
_DISH_THINGS = frozenset("recipe dish meal".split())
#: labels a person puts on what they write
_LABELS = (
    "bug",
    "urgent",
    "billing",
    "question",
    "follow-up",
    "documentation",
    "enhancement",
    "support",
    "blocked",
    "security",
)
#: words before `name` that say which name, not what kind of thing is named
_NOT_KINDS = frozenset(
    "display full short long first last given family nick real official legal common user friendly "
    "pretty canonical unique alias new old custom default preferred global public private primary "
    "secondary alternate alternative original local formal internal external additional middle extra".split()
)


def _string_by_name(f: Field) -> Maker | None:
    """A maker for a string column by its name (and its table's), or None."""
    ws = words(f.name)
    joined = "_".join(ws)
    last = ws[-1] if ws else ""
    kind = f.kind or table_kind(f.table)
    head = singular((words(f.table) or ("",))[-1])  # (the table's thing: `events` → `event`)
    description = str(f.hint.get("description") or "")
    if f.role is not None:
        role = f.role
        return lambda d: getattr(person_of(d), role)
    if ("email" in ws or last == "mail") and last not in _EMAIL_PARTS:  # (an `email_subject` is a subject)
        return lambda d: random_person(d).email
    if has_word(ws, ("phone", "mobile", "fax", "telephone", "tel", "msisdn")):
        return fake_method("phone_number")
    if joined in ("first_name", "given_name", "firstname", "middle_name", "middlename"):
        return fake_method("first_name")
    if joined in ("last_name", "surname", "family_name", "lastname"):
        return fake_method("last_name")
    if (
        joined in ("login", "handle")
        or list(ws[-1:]) == ["username"]  # (a platform's `platform_username` too)
        or list(ws[-2:]) in (["user", "name"], ["screen", "name"])
        or (joined == "nickname" and kind == "person")
    ):
        return fake_method("user_name")
    if joined == "nickname":  # (a price's nickname is no one's login)
        return thing_name(f.table)
    if has_word(ws, ("url", "uri", "website", "homepage", "link", "href")) or joined == "self_link":
        return fake_method("url")
    if joined in ("file_name", "filename"):  # (a file's name, `contract-final.pdf`: no folder before it)
        path = _file_path(ws + tuple(singular(w) for w in words(f.table)))
        return lambda d: path(d).rsplit("/", 1)[-1]
    if last == "path" and not has_word(ws, ("url", "uri")):
        return _file_path(ws + tuple(singular(w) for w in words(f.table)))
    if joined == "zip" and _ARCHIVE.search(description):
        return _file_path(("zip",))  # (a deploy's `zip`: "a zip file of the site", no postcode)
    if labels_written(f.name, f.table):
        return lambda d: d.rng.choice(_LABELS)  # (an issue's label is `bug`, no `West Issue`)
    if last == "name" or joined in ("label", "display_name", "full_name"):
        if has_word(ws[:-1], ("color", "colour")):
            return fake_method("color_name")  # (a color's name is a color's: `MidnightBlue`)
        if has_word(ws[:-1], ("country",)):
            return fake_method("country")
        if joined in ("company_name", "organization_name", "business_name", "bank_name") or has_word(
            ws[:-1], COMPANY_NAME_WORDS
        ):
            return fake_method("company")
        if has_word(ws[:-1], PERSON_NAME_WORDS) or joined == "full_name" or _HOLDER.search(description):
            return full_name  # (a card's `name`, "Cardholder name.": a person's)
        if has_word(ws, _HOSTS) or head in _HOSTS and not ws[:-1]:
            return fake_method("domain_name")  # (a domain's name is `example.com`, no `Main Domain`)
        if has_word(ws, _FOLDER_THINGS) or head in _FOLDER_THINGS and not ws[:-1]:
            return folder_name  # (`invoices-2024`, no `Warehouse Directory`)
        if head == "file" and not ws[:-1]:
            path = _file_path(tuple(words(f.table)))
            return lambda d: path(d).rsplit("/", 1)[-1]  # (`budget-final.pdf`, no `Lotus File`)
        if has_word(ws, ("city", "town")) or head in ("city", "town", "village"):
            return fake_method("city")  # (a city's name is a city's)
        # (`league_name` of a scorer, `custom_script_name` of an instance: a league's, a script's)
        named = tuple(w for w in ws[:-1] if w not in _NOT_KINDS)
        if has_word(named, ("product", "item")):
            return product_name
        if named[-1:] and singular(named[-1]) in _DISH_THINGS or not named and head in _DISH_THINGS:
            return dish_name  # (`Creamy Mushroom Risotto`, no `Vendor Recipe`)
        if not named and head in _TODO_THINGS:
            return todo_line
        if named[-1:] and singular(named[-1]) in _WORKS or not named and head in _WORKS:
            return work_title  # (a movie's `movie_name` too)
        if not named and head in _MEETINGS:
            return meeting_title
        if named[-1:] == ("genre",) or not named and head == "genre":
            return genre_name  # (`True Crime`, no `Inventory Genre`)
        if last == "name" and named and singular(named[-1]) not in {singular(w) for w in words(f.table)}:
            return thing_name("_".join(named))
        if kind == "person":
            return full_name
        if kind == "company":
            return fake_method("company")
        if head == "country":
            return fake_method("country")
        if kind == "place":
            return place_name(f.table)
        if kind == "product":
            return product_name
        return thing_name(f.table)
    if (
        has_word(ws, ("signed", "received"))
        and has_word(ws, ("by",))
        or has_word(ws, ("author", "assignee"))
        or ws in _PERSON_FIELDS
    ):
        return full_name
    if joined == "summary" and (head in _MEETINGS or head == "event"):
        return meeting_title  # (a calendar event's summary is its title: `Weekly budget sync`)
    if last in ("title", "subject") or joined == "headline":
        if kind == "person" or head in JOB_TABLES:
            return fake_method("job")
        if head in _DISH_THINGS:
            return dish_name
        if head in _WORKS:
            return work_title  # (`The Hidden Orchard`, no `Promo Movie`)
        if head in _MEETINGS:
            return meeting_title  # (`Weekly budget sync`, no `Office Call`)
        if head in _TODO_THINGS and last == "title":
            return todo_line  # (`Renew the subscription`, no `South Task`)
        if last == "subject" or head in WRITTEN:
            return subject_line  # (a post or a ticket is titled as a person writes: `Order update`)
        return thing_name(f.table, titled=True)  # (`Quarterly Report`: what people title things)
    if has_word(
        ws,
        (
            "company",
            "employer",
            "organization",
            "organisation",
            "merchant",
            "vendor",
            "brand",
            "manufacturer",
            "carrier",
        ),
    ):
        return fake_method("company")
    if joined in ("street", "street_address", "line1", "address1", "address_line1", "line_1"):
        return fake_method("street_address")
    if (
        (has_word(ws, ("address", "ship", "shipping", "billing", "mailing")) or joined == "ship_to")
        and not has_word(ws, ("ip", "ipv4", "ipv6", "mac", "email", "wallet", "web"))
        and last not in _ADDRESS_PARTS  # (`address_city` is a city)
    ):
        return lambda d: str(d.fake.address()).replace("\n", ", ")
    if joined in ("line2", "address2", "address_line2", "line_2", "suite", "apartment"):
        return fake_method("secondary_address")
    if has_word(ws, ("city", "town", "location", "place", "venue")):
        return fake_method("city")
    if joined == "state" and kind not in ("person", "place", "company"):
        return lambda d: d.rng.choice(VOCABULARY["status"])  # (an asset's state is no US state)
    if has_word(ws, ("state", "province")) and not has_word(ws, ("status",)):
        return fake_method("state_abbr") if _short(f, 3) or "code" in ws else fake_method("state")
    if has_word(ws, ("zip", "postcode", "zipcode")) or joined in ("postal_code", "post_code"):
        return fake_method("postcode")
    if "country" in ws or "3166" in joined:
        return fake_method("country_code") if "code" in ws or _short(f, 3) else fake_method("country")
    if "currency" in ws:
        return fake_method("currency_code")
    if "language" in ws or joined == "lang" or "639" in joined:
        return fake_method("language_code")
    if "locale" in ws:
        return fake_method("locale")
    if "timezone" in ws or joined in ("time_zone", "tz"):
        return fake_method("timezone")
    if has_word(ws, ("color", "colour")):
        return fake_method("hex_color") if "hex" in ws or _short(f, 7) else fake_method("color_name")
    if "ipv6" in ws:
        return fake_method("ipv6")
    if has_word(ws, ("ip", "ipv4")) or joined == "ip_address":
        return fake_method("ipv4_public")
    if "mac" in ws:
        return fake_method("mac_address")
    if has_word(ws, ("hostname", "host", "domain")):
        return fake_method("domain_name")
    if "slug" in ws:
        return fake_method("slug")
    if has_word(ws, ("mime", "content_type")) or joined == "content_type":
        return fake_method("mime_type")
    if joined in ("last4", "last_four", "last_4"):
        return digits(4)
    if "iban" in ws:
        return fake_method("iban")
    if has_word(ws, ("swift", "bic")):
        return fake_method("swift")
    if "ssn" in ws:
        return fake_method("ssn")
    if "isbn" in ws:
        return fake_method("isbn13")
    if has_word(ws, ("plate",)):
        return fake_method("license_plate")
    if has_word(ws, ("uuid", "guid")):
        return uuid_value
    if joined == "password":
        return lambda d: d.fake.password(length=12)
    if has_word(ws, ("token", "secret", "hash", "sha", "fingerprint", "etag", "checksum", "signature")):
        return hex_digits(32)
    if "tag" in ws and singular(last) == "key":
        return lambda d: d.rng.choice(_TAG_KEYS)  # (`team`, `env`: no stray word)
    if last in ("id", "sid", "uid", "key") or joined in ("external_id", "reference"):
        return hex_digits(12)
    if has_word(ws, ("sku", "serial", "number", "code", "ref", "barcode")):
        return lambda d: (
            f"{''.join(d.rng.choice(string.ascii_uppercase) for _ in range(3))}-{d.rng.randint(10000, 99999)}"
        )
    if "version" in ws:
        return lambda d: f"{d.rng.randint(0, 5)}.{d.rng.randint(0, 20)}.{d.rng.randint(0, 9)}"
    options = VOCABULARY.get(joined) or (VOCABULARY.get(last) if last in _VOCABULARY_LAST else None)
    if options:
        return lambda d: d.rng.choice(options)
    if last in _NUMERIC_TEXT:  # `count: "25"`: a number the API passes as text
        low, high, decimals = _NUMERIC_TEXT[last]
        return lambda d: (
            f"{d.rng.uniform(low, high):.{decimals}f}" if decimals else str(d.rng.randint(low, high))
        )
    if has_word(ws, ("type", "kind", "tier", "plan", "level")):
        # the spec's own examples (a class type `warrior`), else plain qualifiers (a room type
        # `premium`, not `firmware`)
        said = [
            e
            for e in examples_of(f.hint)
            if isinstance(e, str) and 0 < len(e) <= 30 and not is_placeholder(e)
        ]
        return lambda d: d.rng.choice(said or _TYPE_WORDS)
    if has_word(ws, ("category", "genre", "tag", "group", "segment", "industry")):
        return noun
    if has_word(ws, _KEY_MATERIAL) and has_word(ws, ("body", "content", "material", "data", "value")):
        return lambda d: base64.b64encode(d.rng.randbytes(48)).decode()  # (a key's body is no sentence)
    if has_word(ws, ("bio", "biography")) or joined == "about_me":
        return lambda d: f"{job_title(d)} based in {d.fake.city()}."  # (a bio says who one is)
    if last in ("description", "summary") and kind not in ("person", "company"):
        return description_of(f.table)  # (what the record is for, not a note)
    system = _system_message(ws)
    if system is not None:
        return system
    if has_word(ws, TEXT_WORDS):
        return note_about(f.table) if kind not in ("person", "company") else sentence
    if has_word(ws, DATE_WORDS) or is_birth(ws) or is_future(ws):
        return datetime_maker(ws, "date")
    if joined == "time":  # (a flight's or a show's `time` beside its `date`: `14:35`, no timestamp)
        return datetime_maker(ws, "clock")
    if last in ("at", "time", "timestamp", "datetime") or has_word(ws, ("created", "updated", "modified")):
        return datetime_maker(ws)
    return None


#: the messages a system sends, by a word of what they are for (`two_factor_message`)
_SYSTEM_MESSAGES = (
    (("two", "factor", "2fa", "otp", "verification", "verify", "pin", "passcode"),
     "Your verification code is {digits}."),
    (("welcome", "greeting", "onboarding", "invite", "invitation"), "Welcome to {company}! We are glad to have you."),
    (("error", "failure", "invalid", "validation", "rejection", "decline"),
     "Something went wrong. Please check your details and try again."),
    (("confirmation", "success", "thanks", "receipt"), "Thanks! We have received your request."),
    (("reminder",), "Reminder: your appointment is on {day}."),
    (("away", "vacation", "absence", "auto"), "I am away until {day} and will reply when I am back."),
    (("commit",), "Update the {topic} page"),
)  # fmt: skip


def _system_message(ws: tuple[str, ...]) -> Maker | None:
    """A message a system sends, for a field that says what its message is for (`welcome
    message`, `two factor message`, a commit's `message`), else None."""
    if not ws or ws[-1] not in ("message", "text", "template", "msg") or len(ws) < 2:
        return None
    text = next((text for marks, text in _SYSTEM_MESSAGES if has_word(ws[:-1], marks)), None)
    if text is None:
        return None

    def make(d: Draw) -> str:
        return text.format(
            digits=f"{d.rng.randint(0, 999999):06d}",
            company=d.fake.company(),
            day=d.fake.day_of_week(),
            topic=d.rng.choice(("pricing", "install", "contributing", "changelog", "faq")),
        )

    return make


#: what a type, a kind or a tier with no listed values is said as
_TYPE_WORDS = "standard premium basic custom shared private".split()
#: words of a key or a certificate, whose body is key material
_KEY_MATERIAL = ("key", "certificate", "cert", "pem")
#: a quoted value that reads as one of a field's options (`round_trip`, `v2.1`), not a symbol
_OPTION = re.compile(r"[A-Za-z0-9][\w.-]*")
#: the kind of file a path names, by the words of its column and table (faker's categories)
_FILE_KINDS = {
    "image": "image photo picture avatar thumbnail screenshot logo icon banner".split(),
    "audio": "audio song track sound recording podcast voice".split(),
    "video": "video movie clip film stream".split(),
    "text": "log code script source repository repo commit".split(),
}


#: formats a path's words may name, and the extension a file of it has
_EXTENSIONS = {
    **{w: w for w in "json csv xml yaml pdf png jpg jpeg gif svg zip txt html docx xlsx parquet".split()},
    "markdown": "md",
    "yml": "yaml",
    "excel": "xlsx",
    "word": "docx",
    "spreadsheet": "xlsx",
    # (the file a paragraph or a footnote goes into is a word processor's)
    **{w: "docx" for w in "paragraph heading footnote endnote".split()},
}
#: extensions of a document when no word says which (no `.pages` or `.numbers`)
_DOCUMENTS = ("pdf", "docx", "xlsx", "csv", "txt")
#: a description that says a field holds a file, not a place
_ARCHIVE = re.compile(r"\b(?:file|archive|upload|folder|zipped)\b", re.IGNORECASE)


def _file_path(ws: tuple[str, ...]) -> Maker:
    """A path to a file of the format these words name, else of the kind they say (an image, a
    song), else a document."""
    extension = next((_EXTENSIONS[w] for w in ws if w in _EXTENSIONS), None)
    kind = next((kind for kind, said in _FILE_KINDS.items() if has_word(ws, said)), None)

    def made(d: Draw) -> str:  # (`/exports/site-export-2024.zip`, not Faker's `/such/already.zip`)
        ext = extension or (d.fake.file_extension(category=kind) if kind else d.rng.choice(_DOCUMENTS))
        stem = d.rng.choice(_FILE_STEMS.get(kind or "", _FILE_STEMS[""]))
        stem += d.rng.choice(("", f"-{d.rng.randint(2019, 2026)}", "-final"))
        return f"/{d.rng.choice(_FOLDERS)}/{stem}.{ext}"

    return made


#: folders and file names people keep files under
_FOLDERS = "uploads exports reports backups shared projects assets downloads documents releases".split()
_FILE_STEMS = {
    "": "report summary backup invoice contract notes site-export release budget plan".split(),
    "image": "photo logo banner avatar screenshot cover".split(),
    "audio": "recording voice-note episode interview".split(),
    "video": "clip demo recording trailer".split(),
}


#: last words whose vocabulary a column takes (`broadcast_status`: a status)
#: fields that hold a person's name by themselves (`artist`, `composer`)
_PERSON_FIELDS = frozenset(
    (w,)
    for w in "artist actor actress director composer singer writer player coach creator photographer".split()
)
#: the last words of a part of an email that is no address
_EMAIL_PARTS = frozenset("subject body text template content message".split())
#: the last words of a part of an address, made by the rules for that part
_ADDRESS_PARTS = frozenset("city town state province country zip postcode code region".split())
_VOCABULARY_LAST = frozenset("status priority severity visibility".split())
#: last words of a text column that holds a number: (low, high, decimals)
_NUMERIC_TEXT: dict[str, tuple[int, int, int]] = {
    **dict.fromkeys("count quantity qty total".split(), (1, 50, 0)),
    **dict.fromkeys("amount price cost fee balance".split(), (5, 2000, 2)),
    **dict.fromkeys("year".split(), (1990, 2026, 0)),
    **dict.fromkeys("days hours minutes seconds duration age".split(), (1, 90, 0)),
    **dict.fromkeys("weight height width length radius".split(), (1, 500, 1)),
    **dict.fromkeys("percent percentage rating score".split(), (1, 100, 0)),
}


def _short(f: Field, limit: int) -> bool:
    most = f.hint.get("maxLength")
    return isinstance(most, int) and most <= limit


#: providers' real region codes: one shaped as a spec's example is drawn, not the shape redrawn
_REGIONS = (
    "nyc1 nyc3 sfo2 sfo3 ams3 fra1 lon1 sgp1 tor1 blr1 syd1 us-east-1 us-east-2 us-west-1 us-west-2 "
    "eu-west-1 eu-west-2 eu-central-1 ap-south-1 ap-southeast-1 ap-northeast-1 westeurope eastus "
    "westus2 northeurope centralus"
).split()


def _known_codes(ws: tuple[str, ...], example: str) -> Maker | None:
    """Real region codes shaped as the spec's example (`nyc3`: `ams3`, `fra1`, not `xop3`)."""
    if not ws or ws[-1] not in ("region", "regions", "location", "zone"):
        return None
    same = [r for r in _REGIONS if _runs(r) == _runs(example)]
    return (lambda d: d.rng.choice(same)) if len(same) > 1 else None


def _runs(code: str) -> str:
    """A code's shape by runs: letters `a`, digits `0`, the rest kept (`us-east-1` -> `a-a-0`)."""
    return re.sub(r"[a-z]+", "a", re.sub(r"[0-9]+", "0", code))


def _example_shape(example: str) -> Maker:
    """A code-like example's shape: each digit redrawn, and each letter too when it has no digit
    (`SKU-10442` -> `SKU-38271`, `db-s-2vcpu-4gb` -> `db-s-8vcpu-2gb`, `JFK` -> `QXR`): the
    letters beside digits are words (`gpt-4o`), not noise (`qyg-1l`)."""
    keep_letters = any(c.isdigit() for c in example)

    def make(d: Draw) -> str:
        out = []
        for char in example:
            if char.isdigit():
                out.append(d.rng.choice(string.digits))
            elif keep_letters:
                out.append(char)
            elif char.isascii() and char.isupper():
                out.append(d.rng.choice(string.ascii_uppercase))
            elif char.isascii() and char.islower():
                out.append(d.rng.choice(string.ascii_lowercase))
            else:
                out.append(char)
        return "".join(out)

    return make


def _code_like(value: Any) -> bool:
    """An identifier-like text (`SKU-10442`, `JFK`): short ASCII, no spaces, digits or capitals."""
    return (
        isinstance(value, str)
        and 2 <= len(value) <= 40
        and " " not in value
        and value.isascii()
        and (any(c.isdigit() for c in value) or value.isupper())
    )


_QUOTED = re.compile(r"'([^'\s]{1,40})'|\"([^\"\s]{1,40})\"|`([^`\s]{1,40})`")


#: a date or time format written out (`YYYY-MM-DD`, `HH:MM`): how values look, never a value
_FORMAT_WORD = re.compile(r"(?:[YMDHhms]{1,4}[-/.: T]?){2,}[YMDHhms]*")


def _quoted(description: str) -> list[str]:
    """The distinct quoted words of a description (`'one_way' or 'round_trip'`), in order; a format
    it quotes (`'YYYY-MM-DD'`) is left out."""
    found = ("".join(groups) for groups in _QUOTED.findall(description))
    return list(dict.fromkeys(w for w in found if w.strip(".,;:") and not _FORMAT_WORD.fullmatch(w)))


def _quoted_format(description: str) -> str | None:
    """`date` or `datetime` when a description quotes such a format (`in the format 'YYYY-MM-DD'`)."""
    for groups in _QUOTED.findall(description):
        word = "".join(groups)
        if _FORMAT_WORD.fullmatch(word) and "D" in word.upper():
            return "datetime" if "H" in word.upper() else "date"
    return None


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    """A spec's `pattern` compiled (None: not a Python regex); its warnings are the spec's, not ours."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # ("possible nested set": `[[`)
            return re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return None


#: a description of a yes-or-no field (`Whether ...`, `If true, ...`)
_YES_OR_NO = re.compile(r"(?i)\s*(?:whether|if (?:true|false|set|enabled|yes|this is true))\b")


def string_maker(f: Field) -> Maker:
    hint = f.hint
    fmt = str(hint.get("format") or "")
    ws = words(f.name)
    base: Maker | None = None
    if fmt in DATE_FORMATS:
        shape = DATE_FORMATS[fmt]
        base = datetime_maker(ws, "datetime" if shape == "epoch" else shape)
    elif fmt in FORMATS:
        base = FORMATS[fmt]
    elif written := _quoted_format(f.description or ""):
        base = datetime_maker(ws, written)
    quoted = [q for q in _quoted(f.description or "") if not is_placeholder(q)]
    options = [q for q in quoted if _OPTION.fullmatch(q)]
    if base is None and len(options) >= 2:  # "such as 'one_way' or 'round_trip'" (not `"+"`)
        return _bounded_string(lambda d: d.rng.choice(options), hint)
    if base is None and _YES_OR_NO.match(f.description or ""):  # (not `If provided, ...`: an email)
        return _bounded_string(lambda d: d.rng.choice(("yes", "no")), hint)
    if base is None:
        base = _string_by_name(f)
    examples = [e for e in examples_of(hint) if isinstance(e, str)] + quoted
    if base is None and examples and _code_like(examples[0]):
        base = _known_codes(ws, examples[0]) or _example_shape(examples[0])
    if base is None:
        base = code_of(f.name)
    return _bounded_string(base, hint)


#: the most work one draw from a pattern may take (`pattern_draw`: a node visited or a character
#: made); a draw over it is abandoned, and the column's later values skip the pattern (a `*` or a
#: `+` repeats up to 100 times, so nested ones multiply: `^(?:[^|]*\|?)+$` asks for 10,000 characters)
PATTERN_DRAW_BUDGET = 100_000


def _slugs(value: str) -> list[str]:
    """`value`'s words as a pattern of letters, digits and a joiner may accept them, most like a
    person's name for a thing first: `Regional Hardware` -> `regional-hardware`, `regional_hardware`,
    `regional.hardware`, `regionalhardware`, then the same with capitals kept."""
    ws = re.findall(r"[A-Za-z0-9]+", value)
    if not ws:
        return []
    lowered = [w.lower() for w in ws]
    return [j.join(form) for form in (lowered, ws) for j in ("-", "_", ".", "")]


def _bounded_string(base: Maker, hint: Mapping[str, Any]) -> Maker:
    pattern = hint.get("pattern")
    # a pattern only a backtracking engine runs is not enforced (the schema keeps it as words): ignored
    runs = isinstance(pattern, str) and linear_time_problem(pattern) is None
    compiled = _compiled(pattern) if runs and isinstance(pattern, str) else None
    # whether a value meets the pattern is asked as the server asks it: on RE2, in time linear in
    # the value (Python's `re` backtracks: `^(?:[^|]*\|?)+$` on a 30-character value never ends)
    matches = search_pattern(pattern) if compiled is not None and isinstance(pattern, str) else None
    low = whole(hint, "minLength") or 0
    high = whole(hint, "maxLength") or None
    if high is not None and high < low:
        high = None

    def fit(d: Draw, value: str) -> str:
        if high is not None and len(value) > high:  # at a word's end when there is one
            cut = value[:high]
            value = (cut.rsplit(" ", 1)[0] if " " in cut and value[high] != " " else cut).rstrip() or cut
        if len(value) < low:
            value += "".join(d.rng.choice(string.ascii_lowercase) for _ in range(low - len(value)))
        return value

    costly = False  # a draw went over PATTERN_DRAW_BUDGET: this column's values skip the pattern

    def make(d: Draw) -> str:
        nonlocal costly
        value = fit(d, str(base(d)))
        if compiled is None or matches is None or costly or matches(value):
            return value
        for slug in _slugs(value):  # `Regional Hardware` as `regional-hardware`, when it may be
            if matches(slug) and low <= len(slug) and (high is None or len(slug) <= high):
                return slug
        for _ in range(4):
            try:
                drawn = draw_pattern(compiled.pattern, d.rng, PATTERN_DRAW_BUDGET)
            except TooCostly:
                costly = True
                break
            except (Unsupported, RecursionError):
                break
            if matches(drawn) and (high is None or len(drawn) <= high) and len(drawn) >= low:
                return drawn
        return value  # a pattern the generator cannot meet: the realistic value, unconstrained

    return make
