"""Are generated domains faithful to their specs? Three detectors over `toolgym generate`'s folders.

    python benchmarks/faithfulness.py [CORPUS...] [--domains DIR] [--json OUT] [--examples N]

With `--domains DIR` it reads the domain folders there (as `benchmarks/toolgen.py --out DIR` or
`toolgym generate --out DIR` wrote them); else it generates over CORPUS (default
`../shared/corpus/dev/`, without tasks) into a temporary folder first. `benchmarks/toolgen.py
--out` prints the same figures from its own folders. Each folder's README.md names its source
files and, per tool, the operation it was compiled from; domain.yaml gives the tools' kinds and
the tables. The detectors read the source files themselves and share no rule with the generator
(nothing of `toolgen.naming`, `toolgen.entities` or `toolgen.ingest` is imported): an operation id
ends in `@` + the first 8 (or 16) hex digits of BLAKE2b-128 over `source \\x1f pointer`, which
finds each tool's operation in its file.

**(a) Kinds.** What a spec declares an operation does: an HTTP method with a meaning (GET / HEAD
read; PUT / PATCH / DELETE write; POST, OPTIONS, TRACE nothing; a GET whose path selects an action
in its query, `/#Action=CreateUser`, nothing), a function's `type` READ / WRITE (any case), MCP
`annotations` (`readOnlyHint` true / false; `destructiveHint: true` write), `tool_type` read /
write or else `mutates_state` on the function or on the object wrapping it, ToolBench's `method`.
Agreement: a tool of kind `read` for a declared read, any other kind for a declared write; the
share is over the tools whose operation declares something.

**(b) Control columns.** A column is a request control when its name, in snake case, is one of
paging (`limit`, `offset`, `page`, `per_page`, `page_size`, `page_token`, `cursor`, `marker`,
`next_marker`, `prev_marker`, `starting_after`, `has_more`, `max_results`, …), sorting (`sort`,
`sort_by`, `order_by`, `sort_order`, `ordering`, …), a cursor named like DynamoDB's
(`last_evaluated_*`, `exclusive_start_*`), field selection or expansion (`fields`,
`expand`, `include`, `select`, `embed`, …) or output shaping (`output_format`, `response_format`,
`pretty`, `callback`, `jsonp`, …); a bare `format` counts when its description speaks of the
response or output. An `entries` / `items` / `results` / `records` json column beside one of
those is a list envelope's payload and counts too. Goal: 0.

**(c) Tables not named by a noun of the spec.** The nouns of a source file are: its schema
names (`components.schemas`, `definitions`), its path collection segments (a static segment
followed by a path parameter, or the last static segment of a path that has a GET), its fields
(property names whose value is an object or an array — in responses, bodies or a function's
arguments: scalar properties are attributes, not things), and the stems of its id parameters
and properties (`line_id`, `lineId`, `{lineId}`, `flight_number` → line, flight). Words are split
at case changes and non-letters and the last one made singular by a small rule set of this file.
A table (its `_2` suffix dropped; the generator's own `action_log` left out) is fine when its
singular name is such a noun, or each of its words is a word of one. A table is also flagged,
even where its words are found, when a word is a file format (csv, excel, pdf, json, xml, …) or
looks like a hash fragment (letters and digits interleaved, `a1b2`: a name and its number such as
`tier1` or `judge0`, a version and a known code are not; six consonants in a row; a single
letter other than x, y, z, unless a noun or a title of the spec (an API's, a tool's or a function's
name; not a path) has it beside the same word: `objective c`). `docs` is documentation, not the `.doc` format. Flagged tables are labelled by the first reason that holds: format,
hash, verb (a word of this file's verb list first in the name, or a participle last: `cacheds`,
not `allowed_directories`), function word (to, by, all, …), else "not a noun of the spec".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEV = (
    (ROOT.parent / "shared" if (ROOT.parent / "shared").is_dir() else Path("/work/shared")) / "corpus" / "dev"
)
EVENTS_TABLE = "action_log"

# -- words ---------------------------------------------------------------------------------------

_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")


@lru_cache(maxsize=200_000)
def split_words(text: str) -> tuple[str, ...]:
    """Lower-case words of an identifier in any case style (digits apart)."""
    out: list[str] = []
    for chunk in _NON_ALNUM.split(text):
        out.extend(w.lower() for w in _SPLIT.findall(chunk))
    return tuple(out)


_SAME = frozenset(
    "news series species status data metadata settings details statistics analytics metrics physics "
    "address access process business class glass bus campus analysis basis alias canvas bonus corpus "
    "virus gas lens credentials permissions always yes".split()
)
_IRREGULAR = {
    "people": "person",
    "children": "child",
    "men": "man",
    "women": "woman",
    "indices": "index",
    "analyses": "analysis",
}


@lru_cache(maxsize=200_000)
def one(word: str) -> str:
    """The singular of a lower-case English noun, by a few rules."""
    if len(word) <= 3 or word in _SAME or not word.isalpha():
        return word
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zzes", "uses")):
        return word[:-2]
    if word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("s"):
        return word[:-1]
    return word


def phrase(ws: Iterable[str]) -> tuple[str, ...]:
    """Words with the last one singular."""
    ws = tuple(ws)
    return (*ws[:-1], one(ws[-1])) if ws else ws


# -- request controls (b) --------------------------------------------------------------------------

CONTROLS = frozenset(
    """limit offset page per_page perpage page_size pagesize page_number page_no page_index page_token
    next_page_token prev_page_token previous_page_token pagetoken cursor next_cursor prev_cursor
    previous_cursor before_cursor after_cursor marker next_marker prev_marker previous_marker
    starting_after ending_before start_after continuation continuation_token next_token nexttoken
    has_more has_next has_previous next_page prev_page previous_page next_url previous_url prev_url
    next_link prev_link max_results maxresults max_items max_records results_per_page top skip
    sort sort_by sortby sort_order sortorder sort_direction sort_dir sort_field order_by orderby
    ordering fields field_mask fields_mask expand expansions include includes embed select
    exclude_fields include_fields output_format response_format return_format result_format
    pretty pretty_print prettyprint callback jsonp alt""".split()
)
_ENVELOPE = frozenset("entries items results records".split())
_SELECTIONS = frozenset("fields field include includes expand embed select".split())
_SHAPING = re.compile(r"\b(response|output|returned|result)s?\b", re.IGNORECASE)


def control_reason(name: str, column: dict[str, Any], objects: Set[str] = frozenset()) -> str | None:
    """Why the column `name` is a request control, or None. A selection's name (`fields`) on a
    JSON column that the spec gives as an object property (`objects`) is a record's own values."""
    key = "_".join(split_words(name))
    if key in _SELECTIONS and column.get("type") == "json" and name in objects:
        return None
    if key in CONTROLS:
        return key
    if key.startswith(("last_evaluated_", "exclusive_start_")):
        return "cursor (where a page starts)"
    if key == "format" and _SHAPING.search(str(column.get("description") or "")):
        return "format (of the response)"
    return None


# -- declared kinds (a) ----------------------------------------------------------------------------

_HTTP = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def op_hash(source: str, pointer: str, length: int = 8) -> str:
    digest = hashlib.blake2b(f"{source}\x1f{pointer}".encode("utf-8", "surrogatepass"), digest_size=16)
    return digest.hexdigest()[:length]


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def method_declares(method: str, path: str) -> str | None:
    if method in ("get", "head"):
        query = path.lower().partition("#")[2] or path.lower().partition("?")[2]
        return None if ("action=" in query or "x-amz-target=" in query) else "read"
    return "write" if method in ("put", "patch", "delete") else None


def _rw(value: Any) -> str | None:
    if isinstance(value, str) and value.strip().lower() in ("read", "write"):
        return value.strip().lower()
    return None


def node_declares(node: dict[str, Any], parent: dict[str, Any] | None) -> str | None:
    """What a function / tool object (or the object holding it) declares, or None."""
    inner = node.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else {}
    holders: list[tuple[dict[str, Any], bool]] = [(node, True), (fn, True), (parent or {}, False)]
    for holder, own in holders:
        found = _rw(holder.get("type")) if own else None  # a wrapper's `type` is "function"
        if found:
            return found
        notes = holder.get("annotations")
        if isinstance(notes, dict):
            if isinstance(notes.get("readOnlyHint"), bool):
                return "read" if notes["readOnlyHint"] else "write"
            if notes.get("destructiveHint") is True:
                return "write"
        found = _rw(holder.get("tool_type"))
        if found:
            return found
        if isinstance(holder.get("mutates_state"), bool):
            return "write" if holder["mutates_state"] else "read"
    method = node.get("method")  # ToolBench: the endpoint's HTTP method
    if isinstance(method, str) and method.lower() in _HTTP:
        return method_declares(method.lower(), "")
    return None


# -- reading a source file -------------------------------------------------------------------------


@dataclass
class Source:
    """What the detectors need of one source file."""

    ops: dict[str, str | None] = field(default_factory=dict)  # op hash (8 and 16) -> declared kind
    nouns: set[tuple[str, ...]] = field(default_factory=set)
    noun_words: set[str] = field(default_factory=set)
    #: the words of titles and names (an API's title, a tool's, a function's; not paths)
    titles: set[tuple[str, ...]] = field(default_factory=set)
    #: names of properties that hold an object (a record's `fields: {name: …}`)
    objects: set[str] = field(default_factory=set)


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """A safe loader that reads a tag it does not know (`=`, `!include`) as plain data."""


def _untagged(loader: Any, _suffix: str, node: Any) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)


_Loader.add_multi_constructor("", _untagged)
_Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


def _documents(path: Path) -> list[tuple[str, Any]]:
    """(pointer prefix, parsed document) of a file: one for JSON / YAML, one per JSON line."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix.lower() in (".yaml", ".yml"):
        return [("", yaml.load(text, Loader=_Loader))]  # noqa: S506 (a safe loader)
    try:
        return [("", json.loads(text))]
    except json.JSONDecodeError:
        docs = []
        for number, line in enumerate(text.split("\n")):
            if line.strip():
                try:
                    docs.append((f"/{number}", json.loads(line)))
                except json.JSONDecodeError:
                    continue
        return docs


def _walk(node: Any, pointer: str, parent: Any, depth: int = 0) -> Iterator[tuple[str, Any, Any]]:
    if depth > 40:
        return
    yield pointer, node, parent
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, dict | list):
                yield from _walk(value, f"{pointer}/{_escape(str(key))}", node, depth + 1)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            if isinstance(value, dict | list):
                yield from _walk(value, f"{pointer}/{i}", node, depth + 1)


_ID_TAIL = frozenset("id ids uuid guid identifier number".split())
_THING = frozenset(("object", "array"))


def _typename(node: dict[str, Any]) -> str:
    kind = node.get("type")
    return kind if isinstance(kind, str) else ""


def _is_thing(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    return _typename(schema) in _THING or "$ref" in schema or "properties" in schema or "items" in schema


def _add_noun(src: Source, ws: Iterable[str]) -> None:
    ws = tuple(w for w in ws if not w.isdigit())
    if ws:
        noun = phrase(ws)
        src.nouns.add(noun)
        src.noun_words.update(noun)
        src.noun_words.update(ws)


def _id_stem(src: Source, name: str) -> None:
    ws = split_words(name)
    if len(ws) >= 2 and ws[-1] in _ID_TAIL:
        _add_noun(src, ws[:-1])


def _openapi(src: Source, source: str, doc: dict[str, Any]) -> None:
    for holder in ("definitions",):
        for name in doc.get(holder) or {}:
            _add_noun(src, split_words(str(name)))
    for name in (doc.get("components") or {}).get("schemas") or {}:
        _add_noun(src, split_words(str(name)))
    for path, item in (doc.get("paths") or {}).items():
        if not isinstance(item, dict):
            continue
        segments = [s for s in str(path).split("?")[0].split("#")[0].split("/") if s]
        static = [i for i, s in enumerate(segments) if "{" not in s and ":" not in s]
        for i in static:
            follows = i + 1 < len(segments) and segments[i + 1].startswith("{")
            last = i == static[-1] and "get" in item
            if follows or last:
                _add_noun(src, split_words(segments[i].split(".")[0]))
        for s in segments:
            if s.startswith("{"):
                _id_stem(src, s.strip("{}"))
        for method in _HTTP:
            if method in item:
                pointer = f"/paths/{_escape(str(path))}/{method}"
                declared = method_declares(method, str(path))
                src.ops[op_hash(source, pointer)] = declared
                src.ops[op_hash(source, pointer, 16)] = declared


def read_source(source: str) -> Source:
    """The declared kinds, nouns and words of one source file (a path on disk)."""
    src = Source()
    path = Path(source)
    if "!" in source or not path.is_file():
        return src
    try:
        docs = _documents(path)
    except (OSError, yaml.YAMLError, RecursionError):
        return src
    files: set[str] = set()
    for prefix, doc in docs:
        openapi = isinstance(doc, dict) and ("openapi" in doc or "swagger" in doc) and "paths" in doc
        if openapi:
            _openapi(src, source, doc)
            info = doc.get("info")
            if isinstance(info, dict) and isinstance(info.get("title"), str):
                src.titles.add(split_words(info["title"]))
        for pointer, node, parent in _walk(doc, prefix, None):
            if isinstance(node, dict):
                ref = node.get("$ref")
                if openapi and isinstance(ref, str) and not ref.startswith("#") and "://" not in ref:
                    files.add(ref.split("#", 1)[0])
                props = node.get("properties")
                if isinstance(props, dict):
                    for name, schema in props.items():
                        if _is_thing(schema):
                            _add_noun(src, split_words(str(name)))
                        if isinstance(schema, dict) and _typename(schema) == "object":
                            src.objects.add(str(name))
                        _id_stem(src, str(name))
                name = node.get("name")
                if isinstance(name, str) and ("in" in node or "type" in node or "required" in node):
                    _id_stem(src, name)  # a parameter, or an argument of a list-form function
                    if _typename(node) in _THING and "description" in node:
                        _add_noun(src, split_words(name))
                for title in ("title", "tool_name", "api_name"):
                    if isinstance(node.get(title), str):
                        src.titles.add(split_words(node[title]))
                named = isinstance(name, str) or isinstance(node.get("api_name"), str)
                if not openapi and (named or isinstance(node.get("function"), dict)):
                    declared = node_declares(node, parent if isinstance(parent, dict) else None)
                    src.ops[op_hash(source, pointer)] = declared
                    src.ops[op_hash(source, pointer, 16)] = declared
    _referenced(src, path, files)
    return src


def _referenced(src: Source, entry: Path, files: set[str], limit: int = 3000) -> None:
    """The nouns of the files a multi-file spec refers to (`$ref: models/droplet.yml`): their
    names are schema names, their object properties fields, their id properties id stems."""
    seen: set[Path] = set()
    queue = [(entry.parent / f).resolve() for f in files if f]
    while queue and len(seen) < limit:
        path = queue.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        _add_noun(src, split_words(path.stem))
        try:
            docs = _documents(path)
        except (OSError, yaml.YAMLError, RecursionError, UnicodeDecodeError):
            continue
        for _, doc in docs:
            for _, node, _ in _walk(doc, "", None):
                if not isinstance(node, dict):
                    continue
                ref = node.get("$ref")
                if isinstance(ref, str) and not ref.startswith("#") and "://" not in ref:
                    queue.append((path.parent / ref.split("#", 1)[0]).resolve())
                props = node.get("properties")
                if isinstance(props, dict):
                    for name, schema in props.items():
                        if _is_thing(schema):
                            _add_noun(src, split_words(str(name)))
                        _id_stem(src, str(name))


# -- tables (c) ------------------------------------------------------------------------------------

FORMATS = frozenset(
    "csv tsv excel xls xlsx pdf json jsonl xml yaml yml html htm txt markdown md docx doc odt rtf png "
    "jpg jpeg gif svg webp bmp tiff mp3 mp4 wav ogg zip gz tar tgz base64 ics vcf rss".split()
)
VERBS = frozenset(
    """get list fetch lookup retrieve describe browse create add make insert upload generate register
    enroll reserve update modify edit rename patch replace upsert assign toggle configure adjust
    delete remove destroy erase purge unset cancel approve reject refund pay start restart pause
    resume execute trigger invoke enable disable activate deactivate reactivate archive unarchive
    restore verify validate confirm complete close unlock login logout signin signout authorize
    authenticate reset sync invite accept decline follow unfollow like unlike subscribe unsubscribe
    publish unpublish deploy install uninstall convert calculate calc compute translate analyze
    analyse predict classify detect recognize summarize render compress encrypt decrypt encode decode
    attach detach unlink connect disconnect mute unmute unpin notify submit resend retry rollback
    revert apply estimate simulate evaluate solve shuffle transcribe extract parse optimize reboot
    shutdown suspend revoke renew redeem claim dispatch fulfill deliver scrape crawl buy sell
    checkout withdraw mint unblock dismiss acknowledge snooze escalate upgrade downgrade migrate undo redo write tag
    broadcast speak tell ask respond finalize click navigate scroll hover press drag tap annotate
    anonymize append assess abdicate acquire bind setup onboard offboard download reopen reassign
    unassign find search export import""".split()
)
FUNCTION_WORDS = frozenset(
    "to by for from with in on at of via into within between about all my the a an and or as "
    "is are be this that these those any each every some no not only".split()
)
_KNOWN_CODES = re.compile(
    r"^(v\d+[a-z]*\d*|(alpha|beta)\d+|[a-z]+\d+|\d+[a-z]{1,3}|ipv[46]|base64|mp[34]|s3|ec2|h264|utf8|oauth2|x509|sha\d+|md5|\d+d|\d+k|"
    r"i18n|l10n|k8s|p2p|b2b|b2c|e164|iso\d+|brc20|erc\d+|bep\d+|web3|g\d|4g|5g|2fa|covid19|bet\d+)$"
)
_CONSONANTS = re.compile(r"[bcdfghjklmnpqrstvwxz]{6,}")


def _stems(word: str) -> tuple[str, ...]:
    """The word and what it is with a plural ending taken off (`dbs`, `settingses`, `bet365s`)."""
    out = [word, one(word)]
    for tail in ("es", "s"):
        if word.endswith(tail) and len(word) > len(tail) + 1:
            out.append(word[: -len(tail)])
    return tuple(out)


def _hash_like(word: str) -> bool:
    stems = _stems(word)
    if any(_KNOWN_CODES.match(w) for w in stems):
        return False
    if re.search(r"[a-z]\d+[a-z]|\d[a-z]+\d", word):  # interleaved: a1b2, 5f3a9
        return True
    return bool(_CONSONANTS.search(word)) or (len(word) == 1 and word.isalpha() and word not in "xyz")


def _verb_like(ws: tuple[str, ...]) -> bool:
    first = ws[0]
    if first in VERBS or (first.startswith(("re", "un")) and first[2:] in VERBS):
        return True
    last = ws[
        -1
    ]  # a participle naming the table (`cacheds`), not one before its noun (`allowed_directories`)
    return len(last) > 5 and last.endswith("ed") and not last.endswith("eed")


def _said_beside(raw: tuple[str, ...], i: int, nouns: set[tuple[str, ...]]) -> bool:
    """Whether a single letter stands beside the same word in a noun or a title of the spec
    (`objective c`, from the title `Objective-C Code Compiler`)."""
    if len(raw[i]) != 1:
        return False
    pairs = {raw[j : j + 2] for j in (i - 1, i) if j >= 0 and j + 2 <= len(raw)}
    return any(noun[k : k + 2] in pairs for noun in nouns for k in range(len(noun) - 1))


def table_verdict(
    table: str, nouns: set[tuple[str, ...]], noun_words: set[str], titles: set[tuple[str, ...]] | None = None
) -> str:
    """ "ok", or why the table is not named by a noun of its spec (see the module docstring)."""
    name = re.sub(r"_\d+$", "", table)
    raw = tuple(w for w in name.split("_") if w)
    if not raw:
        return "not a noun of the spec"
    ws = phrase(raw)
    if any(w in FORMATS or (one(w) in FORMATS and w != "docs") for w in raw):
        return "format"
    said = nouns | (titles or set())
    if any(_hash_like(w) and not _said_beside(raw, i, said) for i, w in enumerate(raw) if not w.isdigit()):
        return "hash"
    if ws in nouns or all(w in noun_words or one(w) in noun_words or w.isdigit() for w in ws):
        return "ok"  # (`times_to_live`: a plural head before its qualifier)
    if _verb_like(ws):
        return "verb"
    if any(w in FUNCTION_WORDS for w in raw):
        return "function word"
    return "not a noun of the spec"


# -- folders ---------------------------------------------------------------------------------------

_ROW = re.compile(r"^\|\s*(.+?)\s*\|\s*`(.+?)`\s*\|\s*(.+?)\s*\|$")


def read_folder(folder: Path) -> tuple[list[str], dict[str, str], dict[str, Any]]:
    """(source files, {tool: operation id}, domain.yaml) of one domain folder."""
    text = (folder / "README.md").read_text(encoding="utf-8")
    section = ""
    sources: list[str] = []
    ops: dict[str, str] = {}
    for line in text.split("\n"):
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        match = _ROW.match(line)
        if not match or match.group(1).startswith("---"):
            continue
        if section == "Sources":
            sources.append(match.group(2))
        elif section == "Tools":
            ops[match.group(1).strip("`")] = match.group(2)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    spec = yaml.load((folder / "domain.yaml").read_text(encoding="utf-8"), Loader=loader)  # noqa: S506
    return sources, ops, spec


@dataclass
class Figures:
    """The three detectors' counts and examples over many domains."""

    declared: int = 0
    agree: int = 0
    not_found: int = 0
    disagree: list[str] = field(default_factory=list)
    by_declared: Counter[str] = field(default_factory=Counter)
    columns: int = 0
    controls: list[str] = field(default_factory=list)
    control_names: Counter[str] = field(default_factory=Counter)
    tables: int = 0
    flagged: dict[str, list[str]] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)

    def as_dict(self, examples: int = 10) -> dict[str, Any]:
        flagged = sum(len(v) for v in self.flagged.values())
        return {
            "kinds": {
                "declared": self.declared,
                "agree": self.agree,
                "agree_share": round(self.agree / self.declared, 4) if self.declared else None,
                "declared_by_kind": dict(self.by_declared),
                "tools_whose_operation_was_not_found": self.not_found,
                "disagree": self.disagree[:examples],
            },
            "control_columns": {
                "columns": self.columns,
                "controls": len(self.controls),
                "by_name": dict(self.control_names.most_common(20)),
                "examples": self.controls[:examples],
            },
            "tables": {
                "tables": self.tables,
                "flagged": flagged,
                "verb_format_hash": sum(len(self.flagged.get(k, [])) for k in ("verb", "format", "hash")),
                "by_reason": {k: len(v) for k, v in sorted(self.flagged.items())},
                "examples": {k: v[:examples] for k, v in sorted(self.flagged.items())},
            },
        }


def measure(out: Path) -> Figures:
    """The three detectors over every domain folder under `out`."""
    figures = Figures()
    cache: dict[str, Source] = {}
    for folder in sorted(
        p for p in out.iterdir() if (p / "domain.yaml").is_file() and (p / "README.md").is_file()
    ):
        sources, tool_ops, spec = read_folder(folder)
        for s in sources:
            if s not in cache:
                cache[s] = read_source(s)
        index: dict[str, str | None] = {}
        nouns: set[tuple[str, ...]] = set()
        noun_words: set[str] = set()
        titles: set[tuple[str, ...]] = set()
        objects: set[str] = set()
        for s in sources:
            objects |= cache[s].objects
            index.update(cache[s].ops)
            nouns |= cache[s].nouns
            noun_words |= cache[s].noun_words
            titles |= cache[s].titles
        for tool in spec.get("tools") or []:
            op_id = tool_ops.get(tool["name"])
            digest = op_id.rpartition("@")[2].split("-")[0] if op_id else ""
            if digest not in index:
                figures.not_found += 1
                continue
            declared = index[digest]
            if declared is None:
                continue
            figures.declared += 1
            figures.by_declared[declared] += 1
            if (tool["kind"] == "read") == (declared == "read"):
                figures.agree += 1
            else:
                figures.disagree.append(
                    f"{folder.name}/{tool['name']}: declared {declared}, tool {tool['kind']}"
                )
        for table, body in (spec.get("tables") or {}).items():
            columns = body.get("columns") or {}
            found = []
            for name, column in columns.items():
                figures.columns += 1
                reason = control_reason(name, column or {}, objects)
                if reason is not None:
                    found.append(name)
                    figures.controls.append(f"{folder.name}/{table}.{name}")
                    figures.control_names[reason] += 1
            if found:
                for name, column in columns.items():
                    if "_".join(split_words(name)) in _ENVELOPE and (column or {}).get("type") == "json":
                        figures.controls.append(f"{folder.name}/{table}.{name} (envelope)")
                        figures.control_names["envelope payload"] += 1
            if table == EVENTS_TABLE:
                continue
            figures.tables += 1
            verdict = table_verdict(table, nouns, noun_words, titles)
            figures.verdicts[f"{folder.name}/{table}"] = verdict
            if verdict != "ok":
                figures.flagged.setdefault(verdict, []).append(f"{folder.name}/{table}")
    return figures


def print_figures(figures: Figures, examples: int = 5) -> None:
    report = figures.as_dict(examples)
    kinds, controls, tables = report["kinds"], report["control_columns"], report["tables"]
    share = f"{kinds['agree_share']:.1%}" if kinds["agree_share"] is not None else "n/a"
    print(
        f"faithfulness: kinds agree with the spec's declaration on {kinds['agree']} / {kinds['declared']} "
        f"tools ({share}; declared {kinds['declared_by_kind']}; operation not found for "
        f"{kinds['tools_whose_operation_was_not_found']} tools)"
    )
    for line in kinds["disagree"]:
        print(f"  disagree: {line}")
    print(
        f"faithfulness: request-control columns {controls['controls']} of {controls['columns']} ({controls['by_name']})"
    )
    for line in controls["examples"]:
        print(f"  control: {line}")
    print(
        f"faithfulness: tables not named by a noun of the spec {tables['flagged']} of {tables['tables']} "
        f"(verbs, formats, hashes: {tables['verb_format_hash']}; {tables['by_reason']})"
    )
    for reason, names in tables["examples"].items():
        print(f"  {reason}: {', '.join(names)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", nargs="*", type=Path, default=[DEV], help="specs (default: the dev corpus)")
    parser.add_argument("--domains", type=Path, help="measure the domain folders here instead of generating")
    parser.add_argument("--json", type=Path, help="write the figures here (with every table's verdict)")
    parser.add_argument("--examples", type=int, default=5, help="examples printed per figure")
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args(argv)
    if args.domains is not None:
        figures = measure(args.domains)
    else:
        sys.path.insert(0, str(ROOT))
        from toolgen.pipeline import generate
        from toolgen.synth.leftovers import toolbox_domains
        from toolgen.synth.run import synthesize

        with tempfile.TemporaryDirectory(prefix="faithfulness-") as tmp:
            generated = generate(args.corpus, min_tools=5, max_tools=40, seed=0, workers=args.workers)
            extra, _ = toolbox_domains(generated.plan, generated.operations)
            synthesize(
                [*generated.plan.domains, *extra], generated.operations, Path(tmp), seed=0,
                workers=args.workers, with_tasks=False,
            )  # fmt: skip
            figures = measure(Path(tmp))
    print_figures(figures, args.examples)
    if args.json:
        data = figures.as_dict(args.examples) | {"verdicts": figures.verdicts}
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
