"""RawOperation → Operation: ids, tool names, one input schema, entity, kind, record, id links.

`normalize(raw)` is pure and deterministic: the same operations in any order give the same
result, sorted by source then pointer. Parameters of every location merge into one input schema
(names a tool-calling API rejects made valid, credentials and transport headers dropped, each
with its reason); entity and kind come from `toolgen.entities`.
Design notes: docs/design/toolgen.md.
Over 500 lines: one pass whose steps feed each other (parameters, input schema, record, links).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from toolgen.entities import Guess, PathInfo, component_noun, guess, id_entity, id_properties, path_tool_name
from toolgen.model import Operation, RawOperation, SkippedOperation
from toolgen.naming import property_name, short_hash, singular, slug, tool_base_name, unique_name, words

__all__ = ["normalize", "normalize_one"]

MAX_DESCRIPTION = 1024
_LOCATION_ORDER = {"path": 0, "query": 1, "header": 2, "cookie": 3, "formData": 4, "body": 5, "argument": 6}
_TRANSPORT_HEADERS = frozenset(
    "content-type content-length content-encoding content-language content-md5 accept accept-encoding "
    "accept-language accept-charset user-agent host connection cache-control pragma origin referer "
    "if-match if-none-match if-modified-since if-unmodified-since expect te upgrade "
    "x-requested-with idempotency-key x-idempotency-key traceparent tracestate".split()
)
_TRACING_WORDS = frozenset("request correlation trace tracking".split())
#: words of the headers that sign a request (AWS SigV4: `X-Amz-Content-Sha256`, `X-Amz-SignedHeaders`)
_SIGNING_WORDS = frozenset("sha256 sha1 md5 algorithm signed".split())
#: words of the headers that say which application calls (`x-apideck-app-id`): the caller's, like its key
_CALLER_WORDS = frozenset("app application client appid clientid applicationid".split())
_CREDENTIAL_WORDS = frozenset(
    "authorization auth apikey token secret signature credential credentials bearer".split()
)
_CREDENTIAL_QUERY = frozenset(
    "api_key apikey access_token oauth_token auth_token auth authorization x_api_key api_token "
    "apitoken client_secret signature".split()
)
_PY_TYPES = {
    "dict": "object",
    "list": "array",
    "tuple": "array",
    "float": "number",
    "int": "integer",
    "str": "string",
    "bool": "boolean",
    "string[]": "array",
    "array[]": "array",
    "file": "string",
}
_OPENAPI = frozenset(("openapi-3.0", "openapi-3.1", "swagger-2.0"))
# What pages a list envelope: its paging state.
_PAGING = frozenset(
    "limit offset page per_page page_size page_number total_pages has_more start_cursor end_cursor "
    "continuation_token continuation starting_after ending_before max_results is_truncated "
    "total_count total_results total_records num_found".split()
)
#: names of the property of a status envelope that holds what was asked for
_PAYLOAD_NAMES = frozenset("response data result results payload body content".split())
#: words of the properties beside it that say how the call went
_STATUS_WORDS = frozenset(
    "error errors status message messages code throttle success ok trace warning warnings "
    "timestamp took elapsed".split()
)
#: the words of a reply that only says how a call went (`{message}`, `{success, error}`)
_REPLY_WORDS = frozenset("message success ok error errors".split())
_PAGING_HEADS = frozenset("next prev previous has".split())
#: what pages a list only when nothing but paging stands beside it (`{backups, links, meta}`,
#: `{vector_dbs, total}`); beside an order's own fields, `total` is the order's
_PAGING_ALONE = frozenset("total count meta".split())
_PAGING_TAILS = frozenset("marker cursor".split())
_JSON_TYPES = frozenset("object array string number integer boolean null".split())
#: an operation the API calls on its client's server (`This webhook will be invoked whenever ...`),
#: which no client calls
_CALLBACK = re.compile(
    r"(?i)\bthis (?:webhook|callback) (?:is|will be|gets) (?:invoked|called|sent|triggered|fired)\b"
)
#: schema keywords whose value maps names to schemas (a key there is a name, not a keyword)
_SCHEMA_MAPS = frozenset("properties patternProperties $defs definitions dependentSchemas".split())


def normalize(raw: Iterable[RawOperation]) -> tuple[list[Operation], list[SkippedOperation]]:
    """Normalize every operation; returns (operations, skipped), both sorted by source and pointer."""
    ordered = _distinct_apis(sorted(raw, key=lambda r: (r.source, r.pointer, r.api)))
    names: dict[str, set[str]] = {}
    ids: set[str] = set()
    seen: dict[tuple[str, str], str] = {}
    operations: list[Operation] = []
    skipped: list[SkippedOperation] = []
    for r in ordered:
        g, info = _guess(r)
        op_id, base = _make_id(r, ids, g, info)
        key = (r.source, r.pointer)
        if key in seen:
            skipped.append(
                SkippedOperation(id=op_id, reason=f"listed twice: same source and pointer as {seen[key]}")
            )
            continue
        seen[key] = op_id
        if r.format in _OPENAPI and _CALLBACK.search(f"{r.summary} {r.description}"):
            skipped.append(
                SkippedOperation(id=op_id, reason="a webhook the API calls on its client, no call to it")
            )
            continue
        name = unique_name(base, names.setdefault(r.api, set()), r.source + "#" + r.pointer)
        operations.append(_operation(r, op_id, name, g, info))
    return operations, skipped


def _distinct_apis(ordered: list[RawOperation]) -> list[RawOperation]:
    """Tell apart OpenAPI documents that share a title (several versions or editions of one API,
    e.g. GitHub's public and enterprise specs): each becomes its own api, named by the title and
    the part of its file path that differs from the others' (`GitHub v3 REST API (ghes-3.0)`)."""
    sources: dict[str, set[str]] = {}
    for r in ordered:
        if r.format in _OPENAPI:
            sources.setdefault(r.api, set()).add(r.source)
    renamed: dict[tuple[str, str], str] = {}
    for api, files in sources.items():
        if len(files) < 2:
            continue
        parts = {f: f.replace("!", "/").split("/") for f in files}
        lists = list(parts.values())
        head = 0
        while all(len(p) > head + 1 for p in lists) and len({p[head] for p in lists}) == 1:
            head += 1
        tail = 0
        while all(len(p) > head + tail + 1 for p in lists) and len({p[-1 - tail] for p in lists}) == 1:
            tail += 1
        for f, p in parts.items():
            tag = "/".join(p[head : len(p) - tail]) or short_hash(f)
            renamed[(api, f)] = f"{api} ({tag})"
    if not renamed:
        return ordered
    return [
        r.model_copy(update={"api": renamed[(r.api, r.source)]}) if (r.api, r.source) in renamed else r
        for r in ordered
    ]


def _id_nouns(r: RawOperation) -> tuple[str, ...]:
    """The entities the operation's id arguments name (`line_id` → `line`), required ones first."""
    names = [(not p.required, p.name) for p in r.parameters]
    props = (r.input_schema or {}).get("properties") if isinstance(r.input_schema, dict) else None
    if isinstance(props, dict):
        required = (r.input_schema or {}).get("required")
        wanted = set(required) if isinstance(required, list) else set()
        names += [(k not in wanted, str(k)) for k in props]
    found = (id_entity(n) for _, n in sorted(names, key=lambda x: x[0]))
    return tuple(dict.fromkeys(e for e in found if e))


def _guess(r: RawOperation) -> tuple[Guess, PathInfo | None]:
    return guess(
        method=r.method,
        path=r.path,
        operation_id=r.operation_id,
        tags=r.tags,
        response_schema_name=r.response_schema_name,
        request_schema_name=r.request_schema_name,
        api=r.api,
        declared=r.declared,
        id_nouns=_id_nouns(r),
        payload=_payload(r.response_schema),
        fields=_field_names(r),
    )


def _field_names(r: RawOperation) -> tuple[str, ...]:
    """The top-level field names of an operation's arguments, request body and answer."""
    out: list[str] = [p.name for p in r.parameters]
    for schema in (r.input_schema, r.request_schema, r.response_schema):
        props = schema.get("properties") if isinstance(schema, dict) else None
        if isinstance(props, dict):
            out += [str(k) for k in props]
    return tuple(out[:200])


def _payload(schema: Any) -> str | None:
    """The name of the one list of records an answer holds (`Items` beside `Count`), if any."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return None
    lists = [str(name) for name, sub in props.items() if _records(sub)]
    return lists[0] if len(lists) == 1 else None


def _records(schema: Any) -> bool:
    """Whether a property holds a list of records (an `allOf` adding a description included)."""
    parts = schema.get("allOf") if isinstance(schema, dict) else None
    if isinstance(parts, list):
        schema = {k: v for p in parts if isinstance(p, dict) for k, v in p.items()}
    items = schema.get("items") if isinstance(schema, dict) and schema.get("type") == "array" else None
    return isinstance(items, dict) and items.get("type") in ("object", None) and "enum" not in items


def _make_id(r: RawOperation, ids: set[str], g: Guess, info: PathInfo | None) -> tuple[str, str]:
    fallback = path_tool_name(r.method or "call", info, g.kind) if info else g.entity
    base = tool_base_name(r.operation_id or "", fallback)
    prefix = f"{slug(r.api)}:{base}@"
    op_id = prefix + short_hash(r.source, r.pointer)
    if op_id in ids:
        op_id = prefix + short_hash(r.source, r.pointer, length=16)
        counter = 2
        while op_id in ids:  # only an exact duplicate (same source and pointer) gets here
            op_id = f"{prefix}{short_hash(r.source, r.pointer, length=16)}-{counter}"
            counter += 1
    ids.add(op_id)
    return op_id, base


def normalize_one(r: RawOperation, *, op_id: str, name: str) -> Operation:
    """One operation, given its id and its (already de-duplicated) tool name."""
    g, info = _guess(r)
    return _operation(r, op_id, name, g, info)


def _operation(r: RawOperation, op_id: str, name: str, g: Guess, info: PathInfo | None) -> Operation:
    schema, dropped, renamed, kept = _input_schema(r)
    return Operation(
        id=op_id,
        source=r.source,
        pointer=r.pointer,
        format=r.format,
        api=r.api,
        name=name,
        description=_description(r, name),
        input_schema=schema,
        entity=g.entity,
        kind=g.kind,
        declared=r.declared,
        declared_by=r.declared_by,
        record_schema=_record_schema(r, g),
        consumes=_consumes(kept, g, info),
        produces=_produces(r, g),
        path_prefix=info.prefix if info else None,
        query=[prop for prop, _original, location in kept if location == "query"],
        dropped=dropped,
        renamed=renamed,
    )


def _description(r: RawOperation, name: str) -> str:
    parts = [p.strip() for p in (r.summary, r.description) if p and p.strip()]
    if len(parts) == 2 and parts[1].startswith(parts[0]):
        parts = parts[1:]
    text = "\n\n".join(parts) or " ".join(words(name)).capitalize()
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1].rstrip() + "…"


def _parameters(r: RawOperation) -> list[_Param]:
    """Every parameter: the declared ones, a function's input schema's, an unsplit request body."""
    params = [_Param(p.name, p.location, p.required, p.description, p.schema_) for p in r.parameters]
    schema = r.input_schema
    if isinstance(schema, dict):
        declared = {p.name for p in params if p.location in ("argument", "query")}  # (a ToolBench GET's)
        required = schema.get("required")
        required_set = set(required) if isinstance(required, list) else set()
        props = schema.get("properties")
        if isinstance(props, dict):
            for key, sub in props.items():
                if str(key) not in declared:
                    params.append(_param(str(key), "argument", key in required_set, sub))
    if r.path and "{" in r.path:
        declared_path = {p.name for p in params if p.location == "path"}
        for name in _template_params(r.path):
            if name not in declared_path:
                params.append(_param(name, "path", True, {"type": "string"}))
    body = r.request_schema
    if isinstance(body, dict) and not any(p.location in ("body", "formData") for p in params):
        props = body.get("properties")
        if isinstance(props, dict) and props:
            required = body.get("required")
            required_set = set(required) if isinstance(required, list) else set()
            params.extend(_param(str(k), "body", k in required_set, v) for k, v in props.items())
        elif props is None and body:
            params.append(_param("body", "body", True, body))
    params.sort(key=lambda p: _LOCATION_ORDER.get(p.location, 9))
    return params


def _template_params(path: str) -> list[str]:
    return [part.split("}", 1)[0] for part in path.split("{")[1:] if "}" in part]


@dataclass(frozen=True, slots=True)
class _Param:
    name: str
    location: str
    required: bool
    description: str
    schema: dict[str, Any]


def _param(name: str, location: str, required: bool, schema: Any) -> _Param:
    sub = schema if isinstance(schema, dict) else {}
    desc = sub.get("description")
    return _Param(name, location, required, desc if isinstance(desc, str) else "", sub)


def _drop_reason(p: _Param) -> str | None:
    if p.location == "cookie":
        return "cookie: session state the client keeps, not an argument"
    lowered = p.name.lower()
    ws = words(p.name)
    if p.location == "header":
        if lowered in _TRANSPORT_HEADERS or lowered.startswith(("accept-", "x-forwarded-", "sec-")):
            return "transport header: set by the client"
        if _CREDENTIAL_WORDS.intersection(ws) or ("api" in ws and "key" in ws) or lowered == "cookie":
            return "credential header: the environment authenticates the agent"
        if _TRACING_WORDS.intersection(ws) and ("id" in ws or "key" in ws):
            return "tracing header: set by the client"
        if _CALLER_WORDS.intersection(ws) and ws[-1] in ("id", "appid", "clientid", "applicationid"):
            return "caller header: which application calls, as its key does"
        if {"tenant", "consumer"} & set(ws) and ws[-1] in (
            "id",
            "key",
        ):  # (Apideck's `x-apideck-consumer-id`)
            return "tenant header: which account the session acts for, as its credential says"
        if _SIGNING_WORDS.intersection(ws) or ws[-2:] == ("security", "token"):
            return "signing header: the client signs each request"
        if ws == ("date",) or (len(ws) == 3 and ws[0] == "x" and ws[-1] == "date"):
            return "transport header: the client stamps the request's time"
        enum = p.schema.get("enum")
        if "const" in p.schema or (isinstance(enum, list) and len(enum) == 1):
            return "fixed header: it has one value (`X-Amz-Target`), the operation's own"
    if p.location == "query":
        joined = "_".join(ws)
        if joined in _CREDENTIAL_QUERY:
            return "credential: the environment authenticates the agent"
        if joined in ("key", "token") and any(
            w in p.description.lower() for w in ("api key", "auth", "access token", "credential")
        ):
            return "credential: the environment authenticates the agent"
    return None


def _input_schema(
    r: RawOperation,
) -> tuple[dict[str, Any], list[dict[str, str]], list[dict[str, str]], list[tuple[str, str, str]]]:
    """(schema, dropped, renamed, kept) where kept lists (property, original name, location)."""
    props: dict[str, Any] = {}
    origin: dict[str, str] = {}
    required: list[str] = []
    dropped: list[dict[str, str]] = []
    renamed: list[dict[str, str]] = []
    kept: list[tuple[str, str, str]] = []
    memo: dict[int, Any] = {}
    deep = r.format not in _OPENAPI  # function lists may use Python type names at any depth
    for p in _parameters(r):
        reason = _drop_reason(p)
        if reason is not None:
            dropped.append({"name": p.name, "location": p.location, "reason": reason})
            continue
        prop = property_name(p.name)
        if prop != p.name:
            renamed.append(
                {"from": p.name, "to": prop, "reason": "not a valid property name for tool calling"}
            )
        if prop in props:
            if origin[prop] == p.location and prop == p.name:
                dropped.append(
                    {"name": p.name, "location": p.location, "reason": f"declared twice in {p.location}"}
                )
                continue
            clash = prop
            prop = property_name(f"{p.location}_{prop}")
            counter = 2
            while prop in props:
                prop = property_name(f"{p.location}_{clash}_{counter}")
                counter += 1
            renamed.append(
                {
                    "from": p.name,
                    "to": prop,
                    "reason": f"{p.location} parameter clashes with the {origin[clash]} parameter {clash!r}",
                }
            )
        sub = _json_schema(p.schema, memo, 0) if deep else _top_type(p.schema)
        sub = _readable(sub, 0)
        if p.description and "description" not in sub:
            sub = {**sub, "description": p.description}
        props[prop] = sub
        origin[prop] = p.location
        kept.append((prop, p.name, p.location))
        if p.required or p.location == "path":
            required.append(prop)
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema, dropped, renamed, kept


def _top_type(node: dict[str, Any]) -> dict[str, Any]:
    """`node` with a non-JSON-Schema type at its top fixed (Swagger's `file`); nested ones are valid."""
    t = node.get("type")
    if not isinstance(t, str) or t in _JSON_TYPES:
        return node
    fixed = _PY_TYPES.get(t.lower())
    result = {k: v for k, v in node.items() if k != "type"}
    if fixed is not None:
        result["type"] = fixed
    return result


def _json_schema(node: Any, memo: dict[int, Any], depth: int) -> Any:
    """`node` with Python-style type names made JSON Schema ones; unchanged nodes are not copied."""
    if isinstance(node, list):
        if depth > 64:
            return node
        items = [_json_schema(x, memo, depth + 1) for x in node]
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    if not isinstance(node, dict):
        return node if depth else {}
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = node  # a cycle returns the node as it is
    if depth > 64:
        return node
    changed: dict[str, Any] = {}
    t = node.get("type")
    if isinstance(t, str) and t not in _JSON_TYPES:
        fixed = _PY_TYPES.get(t.lower())
        changed["type"] = fixed if fixed is not None else None
    for k in ("properties", "items", "additionalProperties", "allOf", "anyOf", "oneOf", "not"):
        v = node.get(k)
        if k == "properties" and isinstance(v, dict):
            new_props = {pk: _json_schema(pv, memo, depth + 1) for pk, pv in v.items()}
            if any(new_props[pk] is not pv for pk, pv in v.items()):
                changed[k] = new_props
        elif isinstance(v, dict | list):
            nv = _json_schema(v, memo, depth + 1)
            if nv is not v:
                changed[k] = nv
    if not changed:
        return node
    result = {**node, **changed}
    if result.get("type") is None:
        result.pop("type", None)
    memo[key] = result
    return result


def _readable(node: Any, depth: int, schema: bool = True) -> Any:
    """`node` without the `pattern`s Python's `re` cannot compile (`\\p{L}`: no validator here
    could check them); unchanged nodes are not copied. `schema` is False for a map of names to
    schemas (`properties`), where a key named `pattern` is a property."""
    if depth > 64:
        return node
    if isinstance(node, list):
        items = [_readable(x, depth + 1) for x in node]
        return node if all(a is b for a, b in zip(items, node, strict=True)) else items
    if not isinstance(node, dict):
        return node
    if not schema:
        out = {k: _readable(v, depth + 1) for k, v in node.items()}
    else:
        out = {
            k: _readable(v, depth + 1, schema=k not in _SCHEMA_MAPS)
            for k, v in node.items()
            if k != "pattern" or _readable_pattern(v)
        }
    same = len(out) == len(node) and all(out[k] is v for k, v in node.items())
    return node if same else out


def _readable_pattern(pattern: Any) -> bool:
    """Whether `pattern` is a string Python's `re` (which checks a schema's `pattern`) compiles."""
    return isinstance(pattern, str) and _compiles(pattern)


@lru_cache(maxsize=4096)
def _compiles(pattern: str) -> bool:
    try:
        with warnings.catch_warnings():  # ("possible nested set": the spec's, not ours to report)
            warnings.simplefilter("ignore")
            re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def _record_schema(r: RawOperation, g: Guess) -> dict[str, Any] | None:
    answers = None if _names_another(r.response_schema_name, g) else r.response_schema
    for schema in (answers, r.request_schema if g.kind == "create" else None):
        if isinstance(schema, dict) and schema:
            schema = _status_unwrapped(schema)
            if _answers_other(schema, g.entity, r.path):
                continue
            items = schema.get("items")
            if schema.get("type") == "array" and isinstance(items, dict):
                return _wrapped_record(items)
            found = _unwrapped(schema)
            found = _wrapped_record(found) if found is schema else found
            return _named_part(found, g.entity) or found
    return None


def _names_another(component: str | None, g: Guess) -> bool:
    """Whether a write answers with a record its schema names as another thing (Discord's `POST
    /webhooks/{id}/{token}` answers `MessageResponse`: the message it sent, not the webhook)."""
    noun = component_noun(component)
    if g.kind == "read" or not noun or not g.entity:
        return False
    said, own = noun.replace("_", ""), g.entity.replace("_", "")
    heads = {singular(noun.split("_")[-1]), singular(g.entity.split("_")[-1])}
    return not any(h in said and h in own for h in heads)


#: last words of a root key that say no more than what it holds (`indexing_info`)
_SAYS_MORE = frozenset("info information details detail data record object result".split())


def _answers_other(schema: dict[str, Any], entity: str, path: str | None) -> bool:
    """Whether the answer holds, under its one root key, another record the path names (`POST
    /agents/{agent_uuid}/knowledge_bases/{kb_uuid}` answers `{agent: {...}}`; `GET
    /scheduled-indexing/knowledge-base/{uuid}` answers `{indexing_info: {...}}`): not the entity's."""
    raw = schema.get("properties")
    if not path or not entity or not isinstance(raw, dict) or len(raw) != 1:
        return False
    name, inner = next(iter(raw.items()))
    inner = _flat(inner)
    if not isinstance(inner, dict) or not isinstance(inner.get("properties"), dict):
        return False  # (`GET /things/count` answers `{count}`: a value, no record)
    key = tuple(singular(w) for w in words(str(name)))
    while len(key) > 1 and key[-1] in _SAYS_MORE:
        key = key[:-1]  # (`indexing_info`: the indexing's)
    if not key or key[-1] in {singular(w) for w in words(entity)}:
        return False
    said = {tuple(singular(w) for w in words(part)) for part in re.split(r"[/{}]+", path) if part}
    said |= {k[:-1] for k in said if len(k) > 1 and k[-1] in ("id", "uuid", "key", "name")}
    n = len(key)
    return any(part[i : i + n] == key for part in said for i in range(len(part) - n + 1))


def _named_part(schema: dict[str, Any], entity: str) -> dict[str, Any] | None:
    """The record of `entity` inside an answer that holds it as a field by its name (`PUT
    /users/me/location` answers the user, whose `location` is the location), or None."""
    raw = schema.get("properties")
    if not isinstance(raw, dict) or not entity:
        return None
    for key, value in raw.items():
        if words(str(key)) == words(entity):
            inner = _flat(value)
            if isinstance(inner, dict) and isinstance(inner.get("properties"), dict) and inner["properties"]:
                return inner
    return None


def _is_records(node: Any) -> bool:
    """An array of objects (records), not of scalars; of one of several kinds of object too
    (OpenAI's conversation `data: [anyOf: [message, function call, ...]]`)."""
    if not isinstance(node, dict) or node.get("type") not in ("array", None):
        return False
    items = node.get("items")
    if not isinstance(items, dict):
        return False
    kinds = items.get("anyOf") or items.get("oneOf")
    if isinstance(kinds, list) and kinds and "properties" not in items:
        return all(isinstance(k, dict) and (k.get("type") == "object" or "properties" in k) for k in kinds)
    return items.get("type") == "object" or "properties" in items


def _unwrapped(schema: dict[str, Any]) -> dict[str, Any]:
    """The records of a list envelope (`{entries: [...], limit, next_marker}`, Stripe's `{object,
    data, has_more, url}`, Google's `{kind, etag, items, nextPageToken}`, OpenDataSoft's
    `{total_count, links, datasets: [{links, dataset}]}`): the items of its one array of records
    (unwrapped from their links), when another property pages and none but that array and the
    links holds an object or an array (a page of values keeps the values and drops the paging: `{AccountAliases: [..],
    IsTruncated, Marker}`); what a root key holds (`{vector_db: {..}}`, `{backups: [..]}`); any
    other schema as it is (an order's `items` beside its `total`)."""
    raw = schema.get("properties")
    parts = schema.get("allOf")
    if raw is None and isinstance(parts, list) and all(isinstance(p, dict) for p in parts):
        raw = {}  # a paging object extended with its items: `allOf: [Paging, {items: [Album]}]`
        for part in parts:
            raw.update(part.get("properties") if isinstance(part.get("properties"), dict) else {})
    if isinstance(raw, dict) and len(raw) == 1:  # a root key: `{vector_db: {...}}`, `{backups: [...]}`
        inner = _flat(next(iter(raw.values())))
        if _is_records(inner) and isinstance(inner.get("items"), dict):
            return _wrapped_record(inner["items"])
        if isinstance(inner, dict) and isinstance(inner.get("properties"), dict) and inner["properties"]:
            return inner
    if not isinstance(raw, dict) or len(raw) < 2:
        return schema
    props = {k: _flat(v) for k, v in raw.items()}
    data = {k: v for k, v in props.items() if not _is_links(str(k))}  # hypermedia `links` page too
    arrays = [k for k, v in data.items() if isinstance(v, dict) and v.get("type") == "array"]
    arrays = arrays or [k for k, v in data.items() if _is_records(v)]
    if len(arrays) != 1:
        return schema
    others = {k: v for k, v in props.items() if k != arrays[0]}
    paging = {k for k in others if _is_paging(str(k)) or _is_links(str(k))}
    alone = {k for k in others if "_".join(words(str(k))) in _PAGING_ALONE}
    if not paging and not (alone and len(alone) == len(others)):
        return schema
    if any(
        isinstance(v, dict) and (v.get("type") in ("object", "array") or "properties" in v)
        for k, v in others.items()
        if not _is_links(str(k)) and k not in alone
    ):
        return schema
    items = props[arrays[0]].get("items")
    if _is_records(props[arrays[0]]) and isinstance(items, dict):
        return _wrapped_record(items)
    # a page of values (`{AccountAliases: [string], IsTruncated, Marker}`): the list, not its paging
    kept = {k: v for k, v in raw.items() if not _is_paging(str(k)) and k not in alone}
    required = [r for r in schema.get("required") or [] if r in kept]
    base = {k: v for k, v in schema.items() if k not in ("allOf", "properties", "required")}
    return {**base, "type": "object", "properties": kept, **({"required": required} if required else {})}


def _status_unwrapped(schema: dict[str, Any]) -> dict[str, Any]:
    """The payload of a status envelope (Bungie's `{Response, ErrorCode, ErrorStatus, Message,
    ThrottleSeconds}`, `{success, data}`): the one property named like a payload, when each
    other property says how the call went; any other schema as it is."""
    raw = schema.get("properties")
    if not isinstance(raw, dict) or not raw:
        return schema
    said = {k: words(str(k)) for k in raw}
    payloads = [
        k for k, ws in said.items() if ws and ws[-1] in _PAYLOAD_NAMES and not set(ws) & _STATUS_WORDS
    ]
    if not payloads and all(set(ws) & _REPLY_WORDS for ws in said.values()):
        return {"type": "object", "properties": {}}  # `{message}`: how the call went, no record
    if len(payloads) != 1 or not all(set(ws) & _STATUS_WORDS for k, ws in said.items() if k != payloads[0]):
        return schema
    inner = _flat(raw[payloads[0]])
    if not isinstance(inner, dict):
        return schema
    return inner  # a record, a list of them, or a scalar (`true`: how the call went, no record)


def _flat(node: Any) -> Any:
    """A property whose `allOf` only adds keywords to one value (a type, then its description)
    as one schema; any other node as it is."""
    parts = node.get("allOf") if isinstance(node, dict) else None
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        return node
    merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
    for part in parts:
        for key, value in part.items():
            merged.setdefault(key, value)
    return merged


def _is_links(name: str) -> bool:
    """Hypermedia links (`links`, `_links`): where to go next, not data."""
    return words(name) in (("links",), ("link",))


def _wrapped_record(item: dict[str, Any]) -> dict[str, Any]:
    """An element of a list that wraps its record with links (OpenDataSoft's `{links, dataset}`):
    the record; any other element as it is."""
    raw = item.get("properties")
    if not isinstance(raw, dict):
        return item
    rest = [v for k, v in raw.items() if not _is_links(str(k))]
    if len(rest) != len(raw) and len(rest) == 1:
        inner = _flat(rest[0])
        if isinstance(inner, dict) and (inner.get("type") == "object" or "properties" in inner):
            return inner
    return item


def _is_paging(name: str) -> bool:
    ws = words(name)
    return bool(ws) and ("_".join(ws) in _PAGING or ws[0] in _PAGING_HEADS or ws[-1] in _PAGING_TAILS)


def _consumes(kept: list[tuple[str, str, str]], g: Guess, info: PathInfo | None) -> list[str]:
    found: set[str] = set()
    owners = info.collection_of if info else {}
    for _prop, original, location in kept:
        if location == "path" and original in owners:
            found.add(owners[original])
            continue
        ent = id_entity(original)
        if ent:
            found.add(ent)
        elif original.lower() in ("id", "ids", "uuid"):
            found.add(g.entity)
    return sorted(found)


def _produces(r: RawOperation, g: Guess) -> list[str]:
    found = set(id_properties(r.response_schema, g.entity))
    if g.kind == "create":
        found.add(g.entity)
    return sorted(found)
