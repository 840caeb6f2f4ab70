"""What an operation acts on and how: its entity (a snake_case singular noun) and its kind.

`guess` reads the path first (the last static noun segment; a trailing verb segment names the
kind), then the tags, the response or request schema's name, and the function name without its
leading verb. An HTTP method decides the kind (POST by its target); a function's verb decides
otherwise; what the spec declares (READ / WRITE, MCP annotations) overrides every guess. Names
that are not words, codes and process nouns are skipped for the next candidate.
Design notes: docs/design/toolgen.md.
Over 500 lines: the path, name and schema readings all feed the one `guess`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from toolgen.model import Declared, Kind
from toolgen.naming import singular, singular_phrase, words

_VERB_KINDS: dict[str, Kind] = {}
for _kind, _verbs in (
    (
        "read",
        "get list search find fetch lookup look check query retrieve read show view count describe "
        "browse explore download export lookup scan poll watch head peek preview inspect resolve "
        "autocomplete suggest match compare is has can exists locate select recommend assess",
    ),
    (
        "create",
        "create add new book place register insert post make upload reserve schedule import "
        "enroll open allocate provision issue generate write",
    ),
    (
        "update",
        "update modify set change edit rename patch put replace upsert save assign toggle configure "
        "adjust mark increment decrement append tag label move reorder rate update_ switch",
    ),
    ("delete", "delete remove destroy erase purge drop clear unset del rm"),
    (
        "action",
        "send cancel approve reject capture refund void charge pay transfer start stop restart pause "
        "resume run execute trigger invoke call play skip seek enable disable activate deactivate "
        "archive unarchive restore verify validate confirm complete close lock unlock login logout "
        "signin signout sign authorize authenticate reset sync share invite accept decline follow "
        "unfollow like unlike subscribe unsubscribe publish unpublish deploy install uninstall "
        "convert calculate compute translate analyze analyse predict classify detect recognize "
        "summarize render compress encrypt decrypt encode decode hash sort filter merge split copy "
        "clone attach detach link unlink connect disconnect mute unmute pin unpin notify ping test "
        "submit process resend retry rollback revert apply estimate simulate evaluate solve plot "
        "draw shuffle flip roll transcribe extract parse format optimize train evaluate reboot "
        "shutdown suspend release revoke renew refresh redeem claim dispatch ship fulfill deliver "
        "print scrape crawl order buy sell purchase checkout withdraw deposit exchange swap mint "
        "stake vote report flag ban block unblock kick mention reply forward dismiss acknowledge "
        "ack snooze escalate assign_ resolve_ import_ generate_ login_ upgrade downgrade migrate "
        "backup install_ cast broadcast speak say tell ask chat respond answer finalize fill click "
        "navigate scroll hover press type screenshot wait drag tap upload_ execute_ sleep "
        "authenticate_ login_ logon register_ recalculate reconcile split_ mark_ notify_ "
        "review score grade approve_ reopen reassign unassign transition setup onboard offboard calc "
        "annotate anonymize bind snooze upsert_ freeze unfreeze unban hide unhide deny terminate reinstate "
        "undo redo reverse expire rotate prune "
        "think reflect ponder brainstorm acquire obtain recycle resize punch satisfy initialize "
        "initiate init invalidate recover remix remind redact propose succeed ignore",
    ),
):
    for _v in _verbs.split():
        _VERB_KINDS.setdefault(_v.rstrip("_"), _kind)  # type: ignore[arg-type]

# Verbs that are not also nouns of records: found in the middle of a name, they start it
# ("house_prices_get_market_activity", "notion_append_block_children").
_MID_VERBS = frozenset(
    "get fetch retrieve create add update delete remove calc calculate compute append find".split()
)
# A verb's third person that no record is named by ("gets_products", "retrievesUser").
_THIRD_PERSON = {
    f"{v}{'es' if v.endswith(('ch', 'sh')) else 's'}": v
    for v in "get fetch retrieve find create delete remove add search generate".split()
}
# Verbs that start a path segment naming an operation, not a thing ("GetContentById").
_LEADING_VERBS = _MID_VERBS | frozenset("search set list".split())
# Verbs whose arguments after them in a path are what is searched by, not a record's key.
_SEARCHES = frozenset("search find list query lookup filter".split())
#: words that only ever say which of the records (`popular movies`, `shows airing today`)
QUALIFIERS = frozenset(
    "daily hourly weekly monthly yearly quarterly annual minutely nightly current latest recent "
    "popular trending upcoming featured recommended similar related random outgoing incoming "
    "optional available today tonight now eligible".split()
)
# Verbs that are as often the records they make ("order_create", "get_report", "list_tags").
_NOUN_VERBS = frozenset(
    "order report match review score tag label call play test ping flag block post book schedule "
    "transfer charge refund exchange vote reply share invite backup import export upload download "
    "release deposit purchase sale print plot draw check view count query sort filter link hash "
    "copy split merge scan watch grade rate chat answer shuffle roll deploy install run screenshot trigger".split()
)
# Words that qualify a verb rather than name a thing ("batch_get_items", "bulk_delete").
VERB_MODIFIERS = frozenset("batch bulk async multi mass try do perform auto re transact".split())
# Words after which a function name stops naming its entity ("get_user_by_id").
_PREPOSITIONS = frozenset(
    "by for from with in on at to of via using per into within between near under over after "
    "before as than about across around without against toward towards through during behind "
    "beside beneath inside outside along".split()
)
# Words that add nothing to an entity: dropped at the end ("user_info" → user) or the start.
_GENERIC_TAIL = frozenset(
    "info information details detail data list lists collection page paged paginated response "
    "request result results dto model input output wrapper body payload object resource schema "
    "entity item_list json xml api apis v1 v2 v3 by id ids all resp".split()
)
_SAYS_MORE = frozenset("info information details detail metadata detailed".split())
_GENERIC_TAIL = _GENERIC_TAIL | {"metadata"}  # (`album_metadata` is an album's)
_PATH_TAIL = frozenset("json xml api apis".split())
#: generic words that lead a compound noun (`page_break`, `page_rule`): kept before another word
_COMPOUND_HEADS = frozenset(("page",))
#: last words of a name for a record of other records (`conversations.history`): its rows are
#: the records its answer lists, when it lists some
_RECORD_OF = frozenset("history histories timeline feed log logs".split())
#: names of listed records that say no more than that (`entries` of an audit log)
_BARE_ITEMS = frozenset("entry item record row line node edge hit element history log".split())
# Schema names that say how a call went, not what it returns.
_SAYS_NOTHING = frozenset("success successful error failure ok empty void ack".split())
#: names of an answer's list that say nothing of what it lists
_PAYLOAD_STOP = frozenset("results data content values response objects list".split())
# File formats name a representation of a record, never a record (`/invoices/{id}/pdf` → invoice).
_FORMATS = frozenset(
    "csv tsv excel xls xlsx pdf pdfs json jsonl xml yaml yml html htm txt markdown md docx odt rtf "
    "png jpg jpeg gif svg webp bmp tiff mp3 mp4 wav ogg zip gz tgz base64 ics vcf rss geojson kml gpx "
    "ical ov2 shp rdf ttl parquet avro jsonld".split()
)
# Words that end a noun phrase the way a preposition does: a state or a negation follows
# ("order_is_ready_for_pickup" → order, "video_no_watermark" → video).
_PHRASE_ENDS = frozenset("is are was were be has have no not non".split())
# Verbs that name a process more often than a record: beside a namespace that names one, the
# namespace is the record (`spaces.completeImport` → space).
_PROCESS_NOUNS = frozenset("import export upload download backup sync".split())
# A number and a short unit after it measure the noun before them (`item_100_g_serving` → item).
_UNIT = re.compile(r"^[a-z]{1,2}$")
_GENERIC_HEAD_MORE = frozenset("most least top best latest recent detailed metadata".split())
_ID_NOISE = frozenset(
    "first last next prev previous request trace correlation idempotency external unique object "
    "resource entity client_request".split()
)
_GENERIC_HEAD = frozenset("all my the a an current specific single multiple one any each every".split())
# Path segments that are plumbing, not nouns.
_STOP_SEGMENTS = frozenset(
    "api apis rest restapi service services public private internal external admin beta alpha "
    "preview latest current me self my json xml rpc ws web www v version versions openapi swagger "
    "graphql odata data default global common core base root index _ management manage operations "
    "endpoint endpoints".split()
)
_TAG_STOP = frozenset("api apis management service services endpoint endpoints rest public".split())
_API_VERSION = re.compile(r"^v\d+[a-z]*\d*$")
_VERSION = re.compile(r"^(v\d+[a-z0-9.]*|\d[\d._-]*|\d+(\.\d+)*[a-z]*\d*)$", re.IGNORECASE)
_EXTENSION = re.compile(
    r"\.(json|xml|csv|ya?ml|txt|html?|php|aspx?|jsp|cgi|do|pdf|png|jpe?g)$", re.IGNORECASE
)
_PARAM = re.compile(r"\{[^}]*\}|<[^>]*>|^:[A-Za-z_]\w*$")
_QUERYISH = re.compile(r"[#?]")
_QUERY_SPLIT = re.compile(r"[#?&]")
_ID_SUFFIX = frozenset("id ids uuid guid sid".split())


@dataclass(frozen=True, slots=True)
class Guess:
    """An entity and a kind, and whether each came from a rule or a fallback."""

    entity: str
    kind: Kind
    entity_fallback: bool
    kind_fallback: bool


@dataclass(frozen=True, slots=True)
class _Name:
    """A function-like name split into its verb's kind and its noun."""

    kind: Kind | None
    noun: str
    namespace_noun: str


@dataclass(frozen=True, slots=True)
class _Segment:
    text: str  # the static text (extension cut), "" for a parameter
    param: str | None  # the parameter's name, for `{id}` segments
    rpc: str | None  # an RPC method name carried by the segment (`chat.postMessage`, `:cancel`)


@dataclass(frozen=True, slots=True)
class PathInfo:
    """What a path template says about its operation."""

    noun: str  # the entity noun, "" when the path has none
    verb_kind: Kind | None  # the kind named by a trailing verb segment or an RPC method
    ends_with_param: bool
    prefix: str | None  # leading static segments
    collection_of: dict[str, str]  # path parameter → the noun of the segment before it
    params: tuple[str, ...]  # the template's parameter names, in order
    name_words: tuple[str, ...]  # the static, non-plumbing words, for a tool name
    verb: str  # the trailing verb segment's or RPC method's verb word, "" when none


def noun_of(
    parts: tuple[str, ...] | list[str], limit: int = 3, generic: frozenset[str] = _GENERIC_TAIL
) -> str:
    """The singular snake_case noun phrase of `parts`, generic words dropped, at most `limit` words."""
    kept = [w for w in parts if w not in _GENERIC_HEAD and w not in ("and", "or") and w not in _FORMATS]
    while kept and (kept[0] in _PREPOSITIONS or (len(kept[0]) == 1 and len(kept) > 1)):
        kept.pop(0)  # "of_regions", "at_delivery_address"; "fMRI", "oTask": a letter before a word
    cut = next(
        (
            i
            for i, w in enumerate(kept)
            if i > 0
            and (
                w in _PREPOSITIONS
                or w in _PHRASE_ENDS
                or (w.isdigit() and i + 1 < len(kept) and _UNIT.match(kept[i + 1]))
            )
        ),
        None,
    )
    if cut is not None:  # "fact_about_cats" → fact, "roles_by_id" → role, "item_100_g" → item
        kept = kept[:cut]
    while kept and (kept[-1] in generic or _VERSION.match(kept[-1]) or _participle(kept[-1])):
        kept.pop()
    while kept and (kept[0] in generic or _VERSION.match(kept[0]) or kept[0] in _GENERIC_HEAD_MORE):
        if kept[0] in _COMPOUND_HEADS and len(kept) > 1:
            break  # ("add_page_break": a page break, no `break`)
        kept.pop(0)
    kept = [w for w in kept if not w.isdigit()]
    # "tweet_detail_conversation": the details of a thing between its words say nothing
    kept = [w for i, w in enumerate(kept) if not (0 < i < len(kept) - 1 and w in _SAYS_MORE)]
    return singular_phrase(kept[-limit:])[:64].strip("_") if kept else ""


def _says_which(ws: tuple[str, ...]) -> bool:
    """A path segment that says which of the records before it (`popular`, `now_playing`,
    `on_the_air`, `top_rated`), not a record of its own."""
    return bool(ws) and (
        ws[-1] in QUALIFIERS or ws[0] in QUALIFIERS or (len(ws) > 1 and ws[0] in ("on", "in", "at"))
    )


def is_verb(word: str) -> bool:
    """Whether `word` is a verb this module knows (`cancel`, `reactivate`)."""
    return _verb_at((word,), 0) is not None


def _participle(word: str) -> bool:
    """`cached`, `archived`, `followed`: a state or a filter, not a thing (but `feed`, `seed`)."""
    return len(word) > 4 and word.endswith("ed") and not word.endswith("eed")


def _verb_at(ws: tuple[str, ...], index: int) -> Kind | None:
    if not -len(ws) <= index < len(ws):
        return None
    w = _THIRD_PERSON.get(ws[index], ws[index])
    found = _VERB_KINDS.get(w)
    if found is None and len(w) >= 5 and w.startswith(("re", "un")) and w[2:] in _VERB_KINDS:
        return _VERB_KINDS[w[2:]]  # "reactivate", "resend", "unassign": the verb's own kind
    return found


@lru_cache(maxsize=65536)
def analyse_name(name: str) -> _Name:
    """Kind and noun of a function-like name: `getUserById`, `search_flights`, `Spotify.play`."""
    namespace, _, method = name.rpartition(".") if "." in name else ("", "", name)
    ws = words(method)
    start = 0
    while start < len(ws) - 1 and (ws[start] in VERB_MODIFIERS or _API_VERSION.match(ws[start])):
        start += 1  # "batch_get_items", "v1_search_music"
    kind = _verb_at(ws, start)
    body: tuple[str, ...]
    trailing = _verb_at(ws, -1) if len(ws) - start > 1 else None
    if kind == "action" and trailing not in (None, "action") and ws[start] in _NOUN_VERBS:
        kind, body = trailing, ws[start:-1]  # "order_create": the noun-verb is a noun
    elif kind is not None:
        body = ws[start + 1 :]
        while len(body) > 1 and body[0] in _PREPOSITIONS:  # "transfer_to_human_agents", "search_for_x"
            body = body[1:]
        # "get_and_update_x", "list_or_search": skip further verbs joined to the first
        while len(body) >= 2 and body[0] in ("and", "or") and body[1] in _VERB_KINDS:
            body = body[2:]
    elif len(ws) > 1 and _verb_at(ws, -1) is not None:  # "order_create"
        middle = next((i for i in range(start + 1, len(ws) - 1) if ws[i] in _MID_VERBS), None)
        if middle is not None:  # "event_create_trigger": it creates a trigger, no `event`
            kind, body = _VERB_KINDS[ws[middle]], ws[middle + 1 :]
        else:
            kind, body = _verb_at(ws, -1), ws[:-1]
    else:
        body = ws[start:]
        middle = next((i for i in range(start + 1, len(ws) - 1) if ws[i] in _MID_VERBS), None)
        if middle is None:  # "html_extract_resources", "wildlife_population_assess_growth"
            middle = next(
                (
                    i
                    for i in range(start + 1, len(ws) - 1)
                    if ws[i] in _VERB_KINDS and ws[i] not in _NOUN_VERBS
                ),
                None,
            )
        if middle is not None:  # "house_prices_get_market_activity": a namespace, then the name
            kind, body = _VERB_KINDS[ws[middle]], ws[middle + 1 :]
    while len(body) > 1 and body[0] in _VERB_KINDS and body[0] not in _NOUN_VERBS:
        body = body[1:]  # "get_recognize_document": the second verb names no thing
    if body and all(w in _VERB_KINDS and w not in _NOUN_VERBS for w in body):  # "download_optimize"
        body = ()
    for i, w in enumerate(body):
        if (w in _PREPOSITIONS or w in _MID_VERBS) and i > 0:  # "…_by_id", "…_info_get_free_token"
            body = body[:i]
            break
    while body and body[-1] in VERB_MODIFIERS:  # "tryAcquireAsync": how, not what
        body = body[:-1]
    verb = ws[start] if kind is not None and start < len(ws) else ""
    if (
        body
        and all(w in ("info", "information", "details", "detail") for w in body)
        and verb not in _MID_VERBS
        and _VERB_KINDS.get(verb) not in (None, "read")
    ):
        kind, body = "read", (verb,)  # "Sign Info": the verb is the noun the info is about
    ns_words = words(namespace)
    if any(w.isdigit() and len(w) >= 6 for w in ns_words):
        ns_words = ()  # `DynamoDB_20120810.Scan`: a service and its dated version name no record
    namespace_noun = noun_of(ns_words[-2:]) if ns_words else ""
    noun = noun_of(body)
    if namespace_noun and noun in _PROCESS_NOUNS:  # "spaces.completeImport": the import of a space
        noun = namespace_noun
    return _Name(kind=kind, noun=noun, namespace_noun=namespace_noun)


def _split_segment(raw: str) -> _Segment:
    if raw.startswith(("#", "?")) or "=" in raw:
        # AWS query APIs: "#Action=CreateUser&Version=..." / "#X-Amz-Target=DynamoDB.CreateTable"
        head = _QUERYISH.split(raw, maxsplit=1)[0]
        pairs = [p.partition("=") for p in _QUERY_SPLIT.split(raw[len(head) :]) if "=" in p]
        for key, _, value in pairs:
            if key.lower() in ("action", "x-amz-target", "operation", "method", "op"):
                return _Segment("", None, value)
        if head and "=" not in head:  # "responses?beta=true": the responses, an option set
            return _split_segment(head)
        return _Segment("", None, pairs[0][2] if pairs and pairs[0][2] else None)
    raw = _QUERYISH.split(raw, maxsplit=1)[0]
    if raw.startswith("{") and raw.endswith("}") and raw.count("{") == 1:
        return _Segment("", raw[1:-1], None)
    if raw.startswith(":") and len(raw) > 1 and "{" not in raw:  # express-style ":id"
        return _Segment("", raw[1:], None)
    if "{" in raw or "<" in raw:
        rest = _PARAM.sub("", raw)
        name = raw[raw.find("{") + 1 : raw.find("}")] if "{" in raw else ""
        if rest.startswith(":") and len(rest) > 1:  # Google "{name}:cancel"
            return _Segment("", name, rest[1:])
        rest = _EXTENSION.sub("", rest).strip(".:-_()")
        return _Segment(rest, None, None) if rest and not rest.startswith(".") else _Segment("", name, None)
    raw = _EXTENSION.sub("", raw)
    if ":" in raw:  # "instances:batchCreate"
        head, _, verb = raw.partition(":")
        return _Segment(head, None, verb or None)
    if "." in raw.strip("."):  # Slack "chat.postMessage"; a host name ("apps.k8s.io") is plumbing
        method = raw.strip(".").rsplit(".", 1)[-1]
        if len(method) <= 3 and method.islower() and _verb_at(words(method), 0) is None:
            return _Segment("", None, None)
        return _Segment("", None, raw.strip("."))
    return _Segment(raw, None, None)


def _format_segment(seg: _Segment) -> bool:
    """A static segment that only names a representation (`csv`, `json`) or is plumbing."""
    return seg.param is None and seg.rpc is None and (_is_stop(seg.text) or words(seg.text)[-1] in _FORMATS)


def _is_stop(text: str) -> bool:
    lowered = text.lower()
    if lowered.startswith("@"):  # Discord's `/messages/@original`, `/users/@me`: one of them, by a name
        return True
    return lowered in _STOP_SEGMENTS or bool(_VERSION.match(lowered)) or not words(text)


#: nouns that name a thing only with the noun before them (`/anonymization/keys`: an anonymization key)
_VAGUE = frozenset("key value setting option entry field property attribute rule".split())


#: words that say which kind of the collection before them a segment names (`/IncomingPhoneNumbers/Local`)
_KIND_ADJECTIVES = frozenset("local mobile toll free national international remote domestic".split())


def _qualified(noun: str, before: list[_Segment]) -> str:
    """`noun`, led by the one word of the static segment just before it when the noun alone
    is vague and that word names no collection (`/anonymization/keys` → anonymization_key;
    `/users/{id}/keys` and `/users/keys` stay key: a user's); an adjective follows by the
    collection it picks from (`/IncomingPhoneNumbers/{id}/Local` → local_incoming_phone_number)."""
    if noun and set(words(noun)) <= _KIND_ADJECTIVES:
        static = [s for s in before if s.param is None and s.rpc is None and s.text and not _is_stop(s.text)]
        if static and (ws := words(static[-1].text)) and singular(ws[-1]) != ws[-1]:
            return f"{noun}_{noun_of(ws, generic=_PATH_TAIL)}"
        return noun
    last = before[-1] if before else None
    if noun not in _VAGUE or last is None or last.param is not None or last.rpc is not None:
        return noun
    ws = words(last.text)
    if len(ws) != 1 or _is_stop(last.text) or singular(ws[0]) != ws[0] or ws[0] in _VERB_KINDS:
        return noun
    return f"{ws[0]}_{noun}"


@lru_cache(maxsize=65536)
def analyse_path(path: str) -> PathInfo:
    """Entity noun, trailing verb, prefix and parameter owners of a path template."""
    segments = [_split_segment(s) for s in path.split("/") if s]
    prefix_parts: list[str] = []
    for seg in segments:
        if seg.param is not None or seg.rpc is not None or not seg.text:
            break
        prefix_parts.append(seg.text)
    prefix = "/" + "/".join(prefix_parts[:3]) if prefix_parts else None

    collection_of: dict[str, str] = {}
    last_noun = ""
    for at, seg in enumerate(segments):
        if seg.param is not None and last_noun:
            collection_of[seg.param] = last_noun
        if seg.text and not _is_stop(seg.text):
            ws = words(seg.text)
            if len(ws) > 1 and ws[0] in _SEARCHES:
                last_noun = ""  # "/SearchDestinyPlayer/{displayName}": what it searches by, no key
            elif len(ws) > 1 and ws[0] in _LEADING_VERBS and ws[0] not in _NOUN_VERBS:
                last_noun = noun_of(ws[1:], generic=_PATH_TAIL)  # "/GetContentById/{id}": a content's
            elif not (len(ws) == 1 and ws[0] in _VERB_KINDS):
                last_noun = _qualified(noun_of(ws, generic=_PATH_TAIL), segments[:at])

    verb_kind: Kind | None = None
    noun = ""
    ends_with_param = bool(segments) and segments[-1].param is not None and segments[-1].rpc is None
    for index in range(len(segments) - 1, -1, -1):
        seg = segments[index]
        if seg.rpc is not None and index == len(segments) - 1:
            named = analyse_name(seg.rpc)
            verb_kind = named.kind
            noun = named.noun or named.namespace_noun or noun_of(words(seg.text), generic=_PATH_TAIL)
            if named.noun and all(w in _VERB_KINDS for w in words(named.noun)) and last_noun:
                noun = last_noun  # "/spaces/{id}:completeImport": the import of a space
            if noun:
                break
            continue
        if not seg.text or _is_stop(seg.text):
            continue
        ws = words(seg.text)
        if index > 0 and _says_which(ws) and any(s.text and not _is_stop(s.text) for s in segments[:index]):
            continue  # "/movie/popular", "/tv/on_the_air": which of the records before it
        kind = _verb_at(ws, 0)
        after_noun = any(s.param is not None or (s.text and not _is_stop(s.text)) for s in segments[:index])
        at_end = index == len(segments) - 1
        if not at_end and all(_format_segment(s) for s in segments[index + 1 :]):
            at_end = True  # "/datasets/{id}/exports/csv": a format after the verb names no record
            if len(ws) == 1 and singular(ws[0]) in _PROCESS_NOUNS:
                kind, ws = _VERB_KINDS[singular(ws[0])], (singular(ws[0]),)
        if (
            kind is not None
            and at_end
            and verb_kind is None
            and not (len(ws) > 1 and ws[1] in _PHRASE_ENDS)  # "order-is-ready": a noun, then its state
            # "/admin/logout": a verb alone names no record; "/upload" may
            and (len(ws) > 1 or after_noun or ws[0] not in _NOUN_VERBS)
            # "rate_limits" is a noun; "unlink_users", "disable_credential_types" are not
            and (
                len(ws) == 1 or singular(ws[-1]) == ws[-1] or ws[0] in _MID_VERBS or ws[0] not in _NOUN_VERBS
            )
        ):
            # a trailing verb segment: "/orders/{id}/cancel", "/pets/{id}/uploadImage"
            verb_kind = kind
            rest = noun_of(ws[1:])
            if rest and index == 0:
                noun = rest
                break
            continue
        if kind is not None and (len(ws) == 1 or ws[0] in _LEADING_VERBS) and ws[0] not in _NOUN_VERBS:
            # RPC-style segments before parameters: "/Content/GetContentById/{id}" names a
            # content; "/CommunityContent/Get/{sort}" names what comes before it
            ws = ws[1:]
        noun = noun_of(ws, generic=_PATH_TAIL)
        if noun in _SAYS_MORE:  # "/screenshot/info": the screenshot's
            noun = ""
        if noun:
            noun = _qualified(noun, segments[:index])
            break
    params = tuple(seg.param for seg in segments if seg.param)
    name_words: list[str] = []
    for seg in segments:
        if seg.rpc is not None:
            name_words.extend(words(seg.rpc))
        elif seg.text and not _is_stop(seg.text):
            name_words.extend(words(seg.text))
    verb = ""
    last = segments[-1] if segments else None
    last_ws = words(last.rpc or last.text) if last is not None else ()
    # "/alerts/{id}/undoAcknowledge", "/messages/{id}/markAsRead": the segment's first verb
    led = len(last_ws) > 1 and last_ws[0] in _VERB_KINDS
    if verb_kind is not None and name_words and name_words[-1] in _VERB_KINDS and not led:
        verb = name_words.pop()
    elif verb_kind is not None and last is not None:
        ws = last_ws
        if ws and ws[0] in _VERB_KINDS:
            verb = ws[0]
            if tuple(name_words[-len(ws) :]) == ws:
                del name_words[-len(ws) :]
                name_words.extend(ws[1:])
    return PathInfo(noun, verb_kind, ends_with_param, prefix, collection_of, params, tuple(name_words), verb)


_NO_PATH = PathInfo("", None, False, None, {}, (), (), "")
_KIND_VERB = {"create": "create", "update": "update", "delete": "delete", "action": "call"}


def path_tool_name(method: str, info: PathInfo, kind: Kind) -> str:
    """A tool name from a path: `list_pets`, `get_pets` (one), `cancel_users_orders`."""
    if info.verb:
        verb = info.verb
    elif kind == "read":
        last = info.name_words[-1] if info.name_words else ""
        verb = "get" if info.ends_with_param or (last and singular(last) == last) else "list"
    else:
        verb = _KIND_VERB.get(kind, method)
    return "_".join((verb, *info.name_words))


def component_noun(name: str | None) -> str:
    """The thing a schema component's name names (`MessageResponse` -> `message`), "" for one
    that says how a call went (`SuccessResp`)."""
    if not name:
        return ""
    named = analyse_name(name.rsplit(".", 1)[-1])
    head = named.noun.split("_")[0]
    return "" if head in _SAYS_NOTHING else named.noun  # `SuccessResp`, `ErrorResponse`


def _tag_noun(tags: list[str]) -> str:
    for tag in tags[:1]:
        ws = [w for w in words(tag) if w not in _TAG_STOP]
        if any(w.isdigit() for w in ws):
            return ""  # "2FA", "v2 beta": a code, not a noun
        if len(ws) > 1 and ws[0] in _VERB_KINDS and (ws[0] not in _NOUN_VERBS or ws[0] in _PROCESS_NOUNS):
            ws = ws[1:]  # "export catalog": what the tag's operations export
        noun = noun_of(ws)
        if noun:
            return noun
    return ""


def _method_kind(method: str, path: PathInfo) -> Kind | None:
    if method in ("get", "head", "options"):
        return "read"
    if method in ("put", "patch"):
        return "update"
    if method == "delete":
        return "delete"
    if method == "post":
        if path.verb_kind is not None:
            return path.verb_kind
        return "update" if path.ends_with_param else "create"
    return None


def guess(
    *,
    method: str | None,
    path: str | None,
    operation_id: str | None,
    tags: list[str],
    response_schema_name: str | None,
    request_schema_name: str | None,
    api: str,
    declared: Declared | None = None,
    id_nouns: tuple[str, ...] = (),
    payload: str | None = None,
    fields: tuple[str, ...] = (),
) -> tuple[Guess, PathInfo | None]:
    """The entity and kind of one operation (see the module docstring for the rules); `id_nouns`
    are the entities its id arguments name (`line` for `line_id`), in order; `payload` names the
    one list of records its answer holds (DynamoDB's `Query` answers `Items`); `fields` are the
    names of its request's and answer's top-level fields."""
    info = analyse_path(path) if path else None
    named = analyse_name(operation_id) if operation_id else None
    if declared == "write" and named is not None and named.kind is None:
        named = _declared_verb(operation_id or "", named, id_nouns)
    rpc_path = info is not None and info.verb_kind is not None and info.ends_with_param is False

    kind: Kind | None = None
    if method and info is not None:
        if rpc_path and method in ("get", "post") and info.verb_kind is not None:
            kind = info.verb_kind
        else:
            kind = _method_kind(method, info)
    elif method and method != "post":  # an HTTP operation known by name only (RapidAPI)
        kind = _method_kind(method, _NO_PATH)
    if kind is None and named is not None:
        kind = named.kind
        if kind is None and named.noun:
            kind = "read"  # a bare noun phrase names what it returns
    if declared == "read":
        kind = "read"
    elif declared == "write" and kind in (None, "read"):
        kind = "action"  # a declared write whose name reads like a read: it acts on its record
    kind_fallback = kind is None

    entity = ""
    for candidate in (
        info.noun if info else "",
        _tag_noun(tags),
        component_noun(response_schema_name),
        component_noun(request_schema_name),
        named.noun if named else "",
        named.namespace_noun if named else "",
    ):
        if candidate and _wordlike(candidate):
            entity = candidate
            break
    entity_fallback = not entity
    listed = noun_of(words(payload)) if payload and words(payload)[-1] not in _PAYLOAD_STOP else ""
    if (
        entity
        and words(entity)[-1] in _RECORD_OF
        and listed
        and _wordlike(listed)
        and listed not in _BARE_ITEMS
    ):
        entity = listed  # (Slack's `conversations.history` answers `messages`: a message)
    elif entity in ("log", "logs"):
        entity = "log_entry"  # (Slicebox's `/log`: its entries, no `slicebox`)
    if entity and operation_id:
        entity = _compound(entity, operation_id, (response_schema_name, request_schema_name, *fields))
    if not entity:  # no noun anywhere: the record its first id argument names, else the records
        api_noun = _api_noun(api)  # it answers with, else the api's
        entity = (
            (id_nouns[0] if id_nouns else "")
            or (listed if _wordlike(listed) else "")
            or (api_noun if _wordlike(api_noun) else "")
            or "item"
        )
    return Guess(entity, kind or "action", entity_fallback, kind_fallback), info


def _compound(noun: str, name: str, names: tuple[str | None, ...]) -> str:
    """`time_to_live` for `time` in `DescribeTimeToLive`: a noun the operation's name joins to
    more words by a preposition, when a schema or field is named by the whole phrase
    (`TimeToLiveDescription`; a schema named after the operation, `DescribeTimeToLiveOutput`,
    does not count); `noun` otherwise (`send_money_to_friend` keeps `money`)."""
    ws, own = words(name.rsplit(".", 1)[-1]), tuple(noun.split("_"))
    size = len(own)
    for i in range(len(ws) - size - 1):
        end = i + size
        if tuple(singular(w) for w in ws[i:end]) != own or ws[end] not in _PREPOSITIONS:
            continue
        tail = next((j for j in range(end + 1, len(ws)) if ws[j] in _PREPOSITIONS), len(ws))
        phrase = ws[i:tail]
        for other in names:
            spelled = words(other or "")
            if spelled[: len(ws)] == ws:
                continue  # `DescribeTimeToLiveOutput`: the operation's own name
            if any(spelled[k : k + len(phrase)] == phrase for k in range(len(spelled))):
                return "_".join((*phrase[:-1], singular(phrase[-1])))[:64]
        return noun
    return noun


_CONSONANT_RUN = re.compile(r"[bcdfghjklmnpqrstvwxz]{5,}")


def _wordlike(noun: str) -> bool:
    """Whether every word of `noun` could be a word: `fdfdf` (no vowel) and `isbehindcdn` (five
    consonants in a row, words glued together) are not; `sms`, `cdn` and `dns` are."""
    return all(
        not _CONSONANT_RUN.search(w) and (len(w) < 5 or re.search(r"[aeiouy\d]", w)) for w in noun.split("_")
    )


def _api_noun(api: str) -> str:
    """The noun of an api's name (`Get Guidelines` → guideline); "" when it is only a verb (`fetch`)."""
    named = analyse_name(api)
    return named.noun if named.kind is not None else noun_of(words(api))


def _declared_verb(name: str, named: _Name, id_nouns: tuple[str, ...]) -> _Name:
    """A name the spec declares a write but whose first word is no verb we know (`onboard_line`
    with a `line_id`): when the rest names a record one of its id arguments names, its first
    word is the verb and the rest the noun; else the name stays a noun phrase."""
    method = name.rpartition(".")[2]
    ws = words(method)
    if len(ws) < 2:
        return named
    rest = ws[1:]
    for i, w in enumerate(rest):
        if w in _PREPOSITIONS and i > 0:
            rest = rest[:i]
            break
    noun = noun_of(rest)
    if not noun or noun not in id_nouns:
        return named
    return _Name(kind="action", noun=noun, namespace_noun=named.namespace_noun)


def id_entity(param: str) -> str:
    """The entity whose id a parameter name carries (`order_id`, `orderId`, `AccountSid`), or ""."""
    ws = words(param)
    if len(ws) >= 4 and ws[0] == "x":  # (`x-apideck-consumer-id`: an extension header's vendor is no part)
        ws = ws[2:]
    if len(ws) >= 2 and ws[-1] in _ID_SUFFIX and ws[-2] not in _ID_NOISE:
        return noun_of(ws[:-1], limit=2)
    return ""


def id_properties(schema: Any, own: str) -> list[str]:
    """Entities whose ids a response schema's top-level properties hold (`id` is `own`'s)."""
    if not isinstance(schema, dict):
        return []
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        schema = schema["items"]
    props = schema.get("properties")
    if not isinstance(props, dict):
        return []
    found: list[str] = []
    for key in props:
        if not isinstance(key, str):
            continue
        if key.lower() in _ID_SUFFIX:
            found.append(own)
        else:
            ent = id_entity(key)
            if ent:
                found.append(ent)
    return found
