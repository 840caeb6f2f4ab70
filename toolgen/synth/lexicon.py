"""What names mean to the seed generator: which tables describe people, companies, places or
products, which columns hold a row's person (first / last / full name, email, username), and which
column a person would use to point at a row (`handle_column`: an email, a name, a title, a code).

Words come from `toolgen.naming.words` (any case style); tables are read in the singular.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from simulator.format.spec import Table

from ..entities import QUALIFIERS
from ..naming import plural_phrase, singular, words

__all__ = ["handle_column", "handle_columns", "has_person", "person_role", "said_as_a_thing", "table_kind"]


PERSON_TABLES = frozenset(
    "person people user customer client member employee staff contact patient student teacher "
    "driver author owner guest passenger traveler traveller agent manager candidate applicant "
    "subscriber recipient sender attendee participant player athlete buyer seller tenant "
    "volunteer doctor physician nurse instructor speaker host admin administrator account_holder "
    "profile reviewer assignee worker operator pilot rider courier donor beneficiary payee cast crew "
    "actor actress artist director musician creator follower friend cardholder payer".split()
)
COMPANY_TABLES = frozenset(
    "company organization organisation org vendor supplier merchant business firm employer "
    "brand carrier bank partner provider manufacturer distributor agency institution publisher "
    "store shop retailer airline insurer lender".split()
)
PLACE_TABLES = frozenset(
    "warehouse location branch office venue hotel restaurant airport station depot facility "
    "region zone building campus store clinic hospital school property".split()
)
PRODUCT_TABLES = frozenset("product item sku variant good article merchandise listing offer".split())
JOB_TABLES = frozenset("job position role employee staff vacancy opening".split())
PERSON_NAME_WORDS = frozenset(
    "contact recipient sender owner author driver customer user person passenger guest holder "
    "assignee reviewer manager agent signer cardholder beneficiary payee payer employee "
    "attendee organizer organiser patient doctor student teacher requester approver artist actor "
    "actress director musician composer singer writer player athlete coach instructor speaker "
    "photographer designer creator billing shipping".split()
)
COMPANY_NAME_WORDS = frozenset(
    "company organization organisation org business vendor merchant employer brand carrier bank "
    "supplier provider manufacturer publisher".split()
)
TEXT_WORDS = frozenset(
    "description summary body content text message comment comments notes note bio about details "
    "detail reason memo remarks instructions feedback explanation narrative review answer "
    "question caption excerpt".split()
)
PRODUCT_NOUNS = (
    "Backpack Blender Bookcase Boots Camera Chair Coffee Maker Desk Lamp Drone Headphones Jacket "
    "Kettle Keyboard Laptop Stand Monitor Mouse Notebook Printer Rug Scarf Sneakers Speaker "
    "Sunglasses Table Tent Toaster Umbrella Vacuum Wallet Watch Water Bottle"
).split()
PRODUCT_ADJECTIVES = (
    "Classic Compact Deluxe Eco Ergonomic Essential Lightweight Modern Portable Premium Pro Rugged "
    "Sleek Smart Ultra Vintage Wireless"
).split()
#: what a team names a thing after: its use (`Billing Webhook`, `Payroll Deduction`)
PURPOSE_WORDS = (
    "Sales Marketing Billing Support Finance Payroll Onboarding Research Design Product Engineering "
    "Operations Legal Security Compliance Training Hiring Partner Customer Vendor Inventory Shipping "
    "Returns Orders Analytics Feedback Pricing Checkout Loyalty Referral Procurement Accounting "
    "Logistics Fulfillment Growth Data Platform Recruiting Benefits Facilities Reporting Invoicing "
    "Payments Subscriptions Partnerships Content Events Community"
).split()
#: code names, which people give projects, releases and workspaces (`Phoenix Project`), not deductions
CODENAME_WORDS = (
    "Alpha Bravo Delta Phoenix Atlas Orion Falcon Harbor Summit Maple Cedar Willow Riverside Lakeside "
    "Evergreen Sunrise Horizon Pioneer Frontier Legacy Premier Express Prime Apex Pinnacle Zenith "
    "Aurora Nova Comet Beacon Compass Anchor Keystone Lighthouse Meadow Orchard Granite Copper Silver "
    "Golden Crystal Emerald Sapphire Ruby Amber Indigo Scarlet Azure Cobalt Jade Coral Aspen Juniper "
    "Magnolia Glacier"
).split()
#: every word a made-up name may start with
NAME_WORDS = PURPOSE_WORDS + CODENAME_WORDS
#: plausible values of free-text columns that are really categories (no enum in the spec)
VOCABULARY: dict[str, tuple[str, ...]] = {
    "status": ("active", "inactive", "pending", "archived"),
    "priority": ("low", "medium", "high", "urgent"),
    "severity": ("low", "medium", "high", "critical"),
    "gender": ("female", "male", "non-binary"),
    "visibility": ("public", "private", "internal"),
    "role": ("admin", "member", "viewer", "editor"),
    "level": ("beginner", "intermediate", "advanced"),
    "method": ("GET", "POST", "PUT", "PATCH", "DELETE"),
    "department": (
        "Engineering",
        "Sales",
        "Marketing",
        "Finance",
        "Human Resources",
        "Operations",
        "Support",
        "Legal",
    ),
}
FUTURE_WORDS = frozenset(
    "expires expiry expiration expire due deadline until scheduled end ends ending valid_to "
    "renewal renews upcoming departure arrival checkout".split()
)
DATE_WORDS = frozenset("date day birthday dob birthdate".split())
TIME_WORDS = frozenset("at time timestamp datetime when created updated modified deleted".split())


#: container names inside nested JSON that say nothing of what their items are
GENERIC_CONTAINERS = frozenset(
    "results items data list records entries values nodes edges objects rows hits".split()
)


def has_word(ws: tuple[str, ...], vocabulary: Iterable[str]) -> bool:
    return any(w in ws for w in vocabulary)


#: short forms a name may use for a thing, said in full (`dir_name` -> `directory name`)
SHORT_NOUNS = {"dir": "directory", "repo": "repository", "org": "organization", "env": "environment",
               "config": "configuration", "db": "database", "msg": "message", "img": "image",
               "addr": "address", "desc": "description", "lib": "library"}  # fmt: skip


#: things whose body is bytes or code, and the words of that body: no request types one out
_PAYLOAD_THINGS = frozenset(
    "attachment file function script image photo picture blob object asset artifact upload archive "
    "package layer module lambda binary media video audio font certificate".split()
)
_PAYLOAD_WORDS = frozenset("body content contents data blob payload source code bytes".split())


def is_payload(entity: str, column: str) -> bool:
    """Whether a column is the body of a file-like thing (an attachment's `body`, a function's
    `source`): bytes or code, which no request says in words."""
    ws, own = words(column), words(entity)
    return bool(ws and own) and ws[-1] in _PAYLOAD_WORDS and singular(own[-1]) in _PAYLOAD_THINGS


#: acronyms with a vowel, said in capitals all the same (`API key`, `BYOIP prefix`)
_SPELLED = frozenset(
    "api url uri ip ui aws iam ai byoip scu ami acl faq seo iot erp crm ocr sdk gpu cpu vpn".split()
)


def is_acronym(word: str) -> bool:
    """Whether a word is said in capitals: a short one without a vowel (`nfs`, `vpc`; not `rhythm`),
    or a known one (`api`)."""
    return (
        word.lower() in _SPELLED
        or len(word) <= 4
        and word.isalpha()
        and not set(word.lower()) & set("aeiouy")
    )


#: last words of a table whose rows sort others (`account_types`): a row is of one, not for one
_CLASSIFIERS = frozenset("type types kind kinds class classes category categories sort sorts".split())


def is_classifier(entity: str) -> bool:
    """Whether `entity` names a sort of other rows (`the type whose name is ...` owns nothing)."""
    ws = words(entity)
    return bool(ws) and ws[-1] in _CLASSIFIERS


#: adjectives an API writes after the noun (`files_remote`), said before it (`remote file`)
AFTER_ADJECTIVES = frozenset("remote local public private shared archived pending".split())


def in_full(word: str) -> str:
    """A word of a name said in full (`repo` -> `repository`, `repos` -> `repositories`)."""
    if word in SHORT_NOUNS:
        return SHORT_NOUNS[word]
    one = singular(word)
    return plural_phrase(SHORT_NOUNS[one]) if one != word and one in SHORT_NOUNS else word


#: what software keeps in a store (`vector_store`, `key_value_store`), which makes it no shop
_KEPT_THINGS = frozenset(
    "vector data object key value secret feature document blob file config configuration state session "
    "token cache event record metric log artifact credential parameter".split()
)


def table_kind(table: str) -> str:
    """`person`, `company`, `place`, `product` or `thing`: what a row of the table describes."""
    ws = tuple(singular(w) for w in words(table))
    last = ws[-1] if ws else ""
    if last == "profile" and len(ws) > 1 and ws[-2] not in PERSON_TABLES:
        return "thing"  # (an instance profile, a scan profile: no one's; a user profile is a person's)
    if last == "store" and len(ws) > 1 and ws[-2] in _KEPT_THINGS:
        return "thing"  # (a vector store keeps vectors: no shop; a grocery store is one)
    for kind, vocabulary in (
        ("person", PERSON_TABLES),
        ("company", COMPANY_TABLES),
        ("place", PLACE_TABLES),
        ("product", PRODUCT_TABLES),
    ):
        if last in vocabulary or "_".join(ws) in vocabulary:
            return kind
    return "thing"


#: columns of a row that runs a model, not a person (DigitalOcean's GenAI `agents`)
_SOFTWARE = frozenset(
    "model model_id model_uuid instruction instructions prompt system_prompt temperature max_tokens "
    "top_p top_k llm".split()
)


def row_kind(table: str, columns: Iterable[str]) -> str:
    """`table_kind`, but a person's table whose rows run a model (`agents` with a `model` and an
    `instruction`) describes a thing: its rows are named `Billing Agent`, not `Susan Garrison`."""
    kind = table_kind(table)
    if kind == "person" and any("_".join(words(c)) in _SOFTWARE for c in columns):
        return "thing"
    return kind


def person_role(name: str, table: str, columns: Iterable[str]) -> str | None:
    """`first`, `last`, `full`, `email` or `username` when the column holds part of the row's person."""
    ws = words(name)
    joined = "_".join(ws)
    if joined in ("first_name", "given_name", "firstname", "fname", "forename"):
        return "first"
    if joined in ("last_name", "surname", "family_name", "lastname", "lname"):
        return "last"
    if joined in ("email", "email_address", "contact_email", "e_mail", "mail"):
        return "email"
    if joined in ("username", "user_name", "login", "handle", "screen_name"):
        return "username"
    if joined in ("full_name", "fullname", "contact_name", "display_name", "legal_name", "name"):
        if joined == "name" and row_kind(table, columns := list(columns)) != "person":
            names = {"_".join(words(c)) for c in columns}
            if not names & {"first_name", "last_name", "given_name", "surname", "family_name"}:
                return None
        return "full"
    return None


def has_person(table: str, columns: Iterable[str]) -> bool:
    """Whether a row of the table describes a person (its name, email, username agree)."""
    cols = list(columns)
    roles = {person_role(c, table, cols) for c in cols} - {None}
    kind = row_kind(table, cols)  # (a company with a contact's first and last name is no person)
    return kind == "person" and bool(roles) or kind == "thing" and len(roles) >= 2


MAPPING_WORDS = frozenset(
    "options settings attributes metadata properties details params parameters headers config "
    "configuration preferences extra data context annotations".split()
)


def is_future(ws: tuple[str, ...]) -> bool:
    """A name for a moment still to come (`expires_at`, `due_date`, `valid_until`)."""
    return has_word(ws, FUTURE_WORDS) or "_".join(ws[-2:]) in FUTURE_WORDS


def is_birth(ws: tuple[str, ...]) -> bool:
    return has_word(ws, ("birth", "birthday", "dob", "birthdate", "born"))


_EMAILS = ("email", "email_address")
HANDLE_ORDER = (
    _EMAILS,
    ("name", "full_name", "display_name", "company_name", "contact_name"),
    ("username", "user_name", "login", "handle"),
    ("title", "subject", "headline", "label"),
    ("code", "number", "sku", "slug", "plate", "reference", "serial", "iban"),
)


#: things whose own email a person names them by (`the invite whose email is ...`)
_MAILED = frozenset("account invite invitation submission registration signup lead login identity".split())
#: things a person does not name, whatever field the API calls `name` (a Slack message's)
_UNNAMED = frozenset(
    "message comment reply reaction notification transaction payment charge refund session authorization "
    "token".split()
)


def is_unnamed(entity: str) -> bool:
    """Whether a person never names a row of `entity`, whatever its `name` field holds (a Slack
    message's, a session's): no row is named by it, and no question asks it."""
    ws = words(entity)
    return bool(ws) and singular(ws[-1]) in _UNNAMED


#: things a person writes and titles in words (`Invoice reminder`, not `Bridge Post`)
WRITTEN = frozenset(
    "post article thread topic story question ticket issue task discussion announcement message "
    "comment note conversation email memo todo reminder request case activity meeting appointment".split()
)
#: what labels and tags name on a written thing: a kind of it (`bug`), shared by many
_LABELS = frozenset(("label", "labels", "tag", "tags"))


def labels_written(column: str, table: str) -> bool:
    """Whether `column` is a label of a written thing (an issue's `bug`): a kind, no name of it."""
    ws = words(table)
    return "_".join(words(column)) in _LABELS and bool(ws) and singular(ws[-1]) in WRITTEN


def handle_columns(table: Table, named: str = "") -> list[str]:
    """The columns a person would point at a row with (an email, a name, a title, a code), best
    first: string columns, neither key nor foreign key; unique ones before the rest. With the
    table's name, an email names only a person's, a company's or an account's row (not `the card
    whose email is ...`), and a column named as the thing itself is its name (an artist's `artist`)."""
    keys = set(table.key_columns)
    ws = words(named)
    mailed = (
        not named or table_kind(named) in ("person", "company") or bool(ws) and singular(ws[-1]) in _MAILED
    )
    own = tuple(singular(w) for w in ws)
    ranked: list[tuple[int, int, int, str]] = []
    for position, (name, column) in enumerate(table.columns.items()):
        if name in keys or column.references or column.type != "string" or column.enum:
            continue
        if not mailed and "_".join(words(name)) in _EMAILS:
            continue
        if is_unnamed(named) and words(name) == ("name",):
            continue  # (no `the messages whose names are "Valley Message"`)
        if labels_written(name, named):
            continue  # (an issue's label `bug` is no name of it)
        rank = 1 if own and named_as(name, own) else _handle_rank(name)
        if rank == len(HANDLE_ORDER) * 2 - 1 and _others_code(words(name), own):
            continue  # (a transaction's `package_code` is the package's: no `the transaction whose package code is`)
        if rank is not None:
            ranked.append((0 if column.unique else 1, rank, position, name))
    return [name for *_, name in sorted(ranked)]


#: words before `code` or `number` that say which of the row's own codes it is (`tracking_number`)
_OWN_CODES = frozenset(
    "tracking confirmation booking reservation reference serial registration license licence plate "
    "record document invoice receipt ticket case order account member membership customer employee "
    "policy claim access short part model catalog catalogue item "
    "product article sku unique external internal public display phone mobile fax vat tax".split()
)


def _others_code(ws: tuple[str, ...], own: tuple[str, ...]) -> bool:
    """Whether a code or number column (`package_code`) is another thing's: words before it that
    neither name the row's own thing nor say which of its codes it is."""
    said = [singular(w) for w in ws[:-1]]
    return bool(said) and not set(said) <= _OWN_CODES | set(own)


def named_as(column: str, entity: tuple[str, ...]) -> bool:
    """Whether a column is named as its table's thing itself (an artist's `artist`, a city's
    `city`): the thing's name, said `the artist "Ada Lovelace"`."""
    return tuple(singular(w) for w in words(column)) == entity


def _handle_rank(name: str) -> int | None:
    ws = words(name)
    joined = "_".join(ws)
    for rank, names in enumerate(HANDLE_ORDER):
        if joined in names:
            return rank
    for rank, names in enumerate(HANDLE_ORDER):
        if ws and ws[-1] in names:
            return rank + len(HANDLE_ORDER)
    return None


def handle_column(table: Table) -> str | None:
    """The best column to name a row of `table` by in an instruction, or None when it has none."""
    found = handle_columns(table)
    return found[0] if found else None


#: words before a noun that make it a thing (`the order`, `each of the orders`)
_DETERMINERS = frozenset(
    "a an the each every this that your its their all any some one no of specific given new single "
    "multiple particular".split()
)
#: words after a noun that end its phrase (`the votes for a match`), so it was the head noun;
#: after a preposition or a word for what is said of it (`Get Cake Recipe by ID`, `Get menu
#: details`) it needs no determiner
_PREPOSITIONS = frozenset(
    "of for in on by with from to at into using via within under over per about "
    "details detail profile info information data record records summary".split()
)
_PHRASE_ENDS = (
    _PREPOSITIONS
    | _DETERMINERS
    | frozenset(
        "that which who whose and or is are was were as if when based it these given containing you we i they".split()
    )
)


#: words that only ever qualify a thing (`a daily forecast`, `popular movies`, `shows airing
#: today`): a table whose name ends in one names no thing
ONLY_QUALIFIERS = QUALIFIERS


#: verbs that are no noun: a table whose name starts with one is named after a call
#: (`get membership`, `detect object`, `apply missing offer`), not a thing
ONLY_VERBS = frozenset(
    "apply detect generate calculate compute convert get fetch retrieve find send validate verify "
    "analyze analyse extract translate summarize summarise predict recognize classify estimate "
    "geolocate create delete update remove add".split()
)


def said_as_a_thing(noun: str, texts: Iterable[str]) -> bool:
    """Whether some text says `noun` (a phrase, `concert ticket`) as a thing: the head of its
    phrase (what follows ends it: `the votes for a match`, `menu details`; not `tirto news`), in
    the plural (`Buy concert tickets.`), after a determiner (`a`, `the`, `each`, ...) or before a
    preposition (`Get Cake Recipe by ID`; not `Get Popular`)."""
    single = noun.lower().split()
    several = plural_phrase(noun.lower()).split()
    for text in texts:
        tokens = re.findall(r"[a-z0-9]+|[^\sa-z0-9]", text.lower())
        for form in (single, several):
            n = len(form)
            for i in range(len(tokens) - n + 1):
                if tokens[i : i + n] != form:
                    continue
                after = tokens[i + n] if i + n < len(tokens) else "."
                if after[0].isalnum() and after not in _PHRASE_ENDS:
                    continue
                if (form is several and several != single) or after in _PREPOSITIONS:
                    return True
                if _DETERMINERS.intersection(tokens[max(0, i - 3) : i]):
                    return True
    return False
