"""Made-up names and titles, as the people who keep such things give them: a project a code
name, a server a slug, a deduction its use (`Payroll Deduction`), a film a title, a dish a cook's
name, a meeting a calendar's title, a to-do a line on a list.
"""

from __future__ import annotations

from ..naming import singular, words
from .draws import Draw, Maker, head_noun
from .lexicon import CODENAME_WORDS, PRODUCT_ADJECTIVES, PRODUCT_NOUNS, PURPOSE_WORDS

__all__ = [
    "dish_name",
    "genre_name",
    "meeting_title",
    "product_name",
    "thing_name",
    "todo_line",
    "work_title",
]

#: things people give code names (`Phoenix Project`, `Atlas Workspace`)
_CODENAMED = frozenset(
    "project workspace initiative program programme release sprint milestone campaign space realm "
    "portfolio board".split()
)
#: machines and stores an engineer names by a slug (`billing-prod`, `web-staging`)
_SLUGGED = frozenset(
    "droplet server vm machine node host instance container volume bucket database db cluster "
    "snapshot function lambda queue repository repo namespace pipeline deployment registry "
    "cache firewall vpc network balancer loadbalancer".split()
)
_SLUG_HEADS = "api web app db worker cache billing orders auth search payments analytics".split()
_SLUG_STAGES = ("prod", "staging", "dev", "test", "01", "02", "eu", "us")
#: where people talk, named as a chat names its channels (`sales-team`, `support`)
_CHATS = frozenset("channel conversation chat room".split())
_CHAT_ENDS = ("", "-team", "-alerts", "-updates", "-chat")
#: groups of people, named by what they do (`Billing`, `Support Team`)
_GROUPS = frozenset("group usergroup team squad".split())
#: roles, named by a function and a rank (`Billing Admin`)
_ROLES = frozenset("role".split())
_RANKS = ("Admin", "Manager", "Viewer", "Editor", "Lead", "Agent")
#: tables of data, named by what their rows are (`orders`, `customers`)
_DATA_TABLES = frozenset("table collection dataset".split())
_RECORDS = (
    "orders customers invoices payments products users events sessions shipments subscriptions "
    "refunds tickets accounts employees suppliers reviews transactions messages contacts leads "
    "deals bookings inventory addresses coupons carts returns prices visits signups"
).split()


#: characters of a game or a story: named as people are, by a first name (`Gum`, `Rhyth`: a name)
_CHARACTERS = frozenset("character hero avatar npc".split())
#: what people call their playlists
_PLAYLISTS = frozenset("playlist mixtape".split())
_PLAYLIST_NAMES = (
    "Road Trip|Morning Run|Chill Evening|Focus Flow|Sunday Coffee|Workout Mix|Rainy Day|Dinner Party|"
    "Late Night Drive|Summer Hits|Study Session|Throwback Jams"
).split("|")
#: offers, named by what they give (`20% off`, `Spring sale`)
_OFFERS = frozenset("coupon discount promotion promo".split())
_OFFER_NAMES = ("{}% off", "Spring sale {}%", "Welcome {}% off", "Loyalty {}% off", "Holiday {}% off")


def thing_name(entity: str, titled: bool = False) -> Maker:
    """A made-up name of one of `entity`, as the people who keep such things name them: a project
    by a code name, a server by a slug, a channel as a chat does, anything else by its use
    (`Payroll Deduction`, not `Atlantic Deduction`). A title (`titled`) is never a slug: a Notion
    database's title is `Billing Database`, not `payments-prod`."""
    noun = head_noun(entity)  # (`Payroll Default Sound`, not `... Soundboard Default Sounds`)
    said = {w.lower() for w in noun.split()}
    head = singular(words(entity)[-1]).lower() if words(entity) else ""
    uses = [  # (not `Group Group`, nor `Accounting Account`)
        w for w in PURPOSE_WORDS if not any(w.lower().startswith(x) or x.startswith(w.lower()) for x in said)
    ]
    if titled:
        head = head if head in _CODENAMED else ""
    if head in _CHARACTERS:
        return lambda d: str(d.fake.first_name())
    if head in _PLAYLISTS:
        return lambda d: d.rng.choice(_PLAYLIST_NAMES) + d.rng.choice(("", "", " 2025", " Vol. 2"))
    if head in _OFFERS:
        return lambda d: d.rng.choice(_OFFER_NAMES).format(d.rng.choice((5, 10, 15, 20, 25, 30, 40, 50)))
    if head in _SLUGGED:
        return lambda d: f"{d.rng.choice(_SLUG_HEADS)}-{d.rng.choice(_SLUG_STAGES)}"
    if head in _CHATS:
        return lambda d: d.rng.choice(uses).lower() + d.rng.choice(_CHAT_ENDS)
    if head in _GROUPS:
        return lambda d: d.rng.choice(uses) + d.rng.choice(("", " Team"))
    if head in _ROLES:
        return lambda d: f"{d.rng.choice(uses)} {d.rng.choice(_RANKS)}"
    if head in _DATA_TABLES:
        return lambda d: d.rng.choice(_RECORDS)
    choices = uses + [w for w in CODENAME_WORDS if head in _CODENAMED]

    def make(d: Draw) -> str:
        word = d.rng.choice(choices)
        return f"{word} {noun}" if noun else word  # (a name says what it names)

    return make


def product_name(d: Draw) -> str:
    return f"{d.rng.choice(PRODUCT_ADJECTIVES)} {d.fake.color_name()} {d.rng.choice(PRODUCT_NOUNS)}"


#: what a dish is called: how it is made, what of, and what it is (`Roasted Salmon Salad`)
_DISH_STYLES = "Spicy Creamy Roasted Grilled Lemon Garlic Honey Smoky Crispy Classic Herb Baked".split()
_DISH_BASES = "Chicken Beef Salmon Mushroom Tofu Shrimp Pork Vegetable Lentil Chickpea Potato Spinach".split()
_DISHES = "Curry Tacos Risotto Pasta Stir-Fry Soup Salad Stew Casserole Burger Pie Skewers".split()


def dish_name(d: Draw) -> str:
    """A recipe's or a dish's name as a cook writes one (`Creamy Mushroom Risotto`)."""
    return f"{d.rng.choice(_DISH_STYLES)} {d.rng.choice(_DISH_BASES)} {d.rng.choice(_DISHES)}"


_WORK_ADJECTIVES = (
    "Silent Golden Hidden Last Broken Midnight Wild Distant Crimson Quiet Endless Northern".split()
)
_WORK_NOUNS = "River Garden Harbor Road Summer Letter Kingdom Station Promise Storm Mirror Orchard".split()


def work_title(d: Draw) -> str:
    """A film's, a book's or a song's title as its makers give one (`The Hidden Orchard`)."""
    adjective, noun = d.rng.choice(_WORK_ADJECTIVES), d.rng.choice(_WORK_NOUNS)
    return d.rng.choice((f"The {adjective} {noun}", f"{adjective} {noun}", f"The {noun}"))


#: what teams meet about, and how a calendar says the meeting (no `Weekly password sync`)
_MEETING_TOPICS = "budget sales roadmap hiring marketing product design support release launch".split()
_MEETING_FORMS = ("Weekly {} sync", "{} review", "{} planning", "Quarterly {} review", "{} standup")


def meeting_title(d: Draw) -> str:
    """A meeting's or a call's title as it shows in a calendar (`Weekly budget sync`)."""
    title = d.rng.choice(_MEETING_FORMS).format(d.rng.choice(_MEETING_TOPICS))
    return title[:1].upper() + title[1:]


#: what a person writes on a to-do list: a verb and what it is done to (no `Pay the payment`)
_TODOS = (
    ("Review", "contract report budget proposal estimate quote"),
    ("Send", "invoice report proposal estimate quote receipt"),
    ("Update", "address budget schedule password"),
    ("Check", "delivery shipment order refund warranty"),
    ("Renew", "subscription contract warranty"),
    ("Schedule", "meeting appointment inspection installation delivery"),
    ("Confirm", "booking appointment order meeting"),
    ("Prepare", "report budget proposal"),
    ("Sign", "contract lease"),
    ("Pay", "invoice rent"),
)


def todo_line(d: Draw) -> str:
    """A task as a person writes it on a list (`Renew the subscription`)."""
    verb, things = d.rng.choice(_TODOS)
    return f"{verb} the {d.rng.choice(things.split())}"


_GENRES = (
    "Comedy|True Crime|Jazz|Drama|History|Science Fiction|Business|Documentary|Hip Hop|Technology|"
    "Country|Horror|Classical|Sports|Health|Education"
).split("|")


def genre_name(d: Draw) -> str:
    """A genre as a catalogue names it (`True Crime`)."""
    return d.rng.choice(_GENRES)
