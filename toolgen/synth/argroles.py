"""What an operation's argument is for, from its name and schema: a request control, a range end,
a condition in a query language, a page of a listing, or data.

    control_role(prop, schema, kind, entity) -> Role | None   # "limit", "option", ... or data
    range_role(prop, schema) -> ("min" | "max", column) | None
    paging_field(name, record) -> bool                 # a response field that pages, never a column

`toolgen.synth.schema` binds every argument with these; a request control is never a column.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from toolgen.model import Operation
from toolgen.naming import singular, words

from .columns import column_type, flat

Role = Literal[
    "key", "parent", "field", "in", "search", "min", "max", "limit", "offset", "page", "sort", "option"
]

OPENAPI = frozenset(("openapi-3.0", "openapi-3.1", "swagger-2.0"))
_LIMIT = frozenset(
    "limit per_page perpage page_size pagesize max_results maxresults max_items maxitems max_count "
    "top size num_results number_of_results results_per_page max_records count_limit".split()
)
_OFFSET = frozenset("offset skip start_index startindex first_result".split())
_PAGE = frozenset("page page_number pagenumber page_no page_index".split())
_SORT = frozenset(
    "sort sort_by sortby order_by orderby sort_order sortorder order direction sort_direction "
    "sort_dir dir sort_field ordering".split()
)
#: names that may select what a response includes, and how a description says it does
_SELECTORS = frozenset("part parts view projection".split())
_SELECTS = re.compile(
    r"\b(propert(y|ies)|fields?|parts?)\b[^.]{0,80}\b(response|returns?|returned|include[sd]?)\b", re.I
)
_OPTION = frozenset(
    "fields field expand include includes select pretty pretty_print prettyprint callback alt "
    "format output_format response_format verbose debug dry_run dryrun async page_token pagetoken "
    "cursor next_token nexttoken continuation_token continuation starting_after ending_before "
    "next_page_token marker next_marker prev_marker previous_marker next_cursor prev_cursor "
    "start_after page_token max_items quota_user quotauser user_ip userip key_only fields_mask lang locale "
    "language hl jsonp prefer x_fields api_version version exclude_fields include_fields exclude_default "
    "result_format results_format send_notifications send_updates notify".split()
)
_CONTROLS = _LIMIT | _OFFSET | _PAGE | _SORT
#: the size of a picture an action renders, in pixels: how it is drawn, no field of the record
_DIMENSIONS = frozenset("width height size resolution dpi".split())
_PIXELS = re.compile(r"(?i)\b(pixels?|px)\b")
#: things that are pictures, whose size in pixels is their own
_PICTURES = frozenset(
    "image picture photo screenshot thumbnail banner avatar icon logo sticker video frame".split()
)
#: response fields that page a list, and the lists they page
_PAGE_STATE = frozenset(
    "total_count total_results total_records num_found has_more total_pages is_truncated truncated next_page prev_page previous_page next_link "
    "next_url start_cursor end_cursor has_next_page has_previous_page".split()
)
#: names of a field selection, which in an answer, holding an object, are what was selected
_SELECTED = frozenset("fields field include includes expand expanded select".split())
#: a cursor a listing pages with (Stripe's and OpenAI's `after=obj_123`), when it is no date
_CURSOR = frozenset("after before".split())
#: how a cursor's name starts (DynamoDB's `ExclusiveStartKey`, `LastEvaluatedTableName`)
_CURSOR_HEADS = frozenset({("exclusive", "start"), ("last", "evaluated")})
#: counts of a page beside its list (DynamoDB's `Count`, `ScannedCount` beside `Items`)
_PAGE_COUNTS = frozenset("count scanned_count".split())
_PAYLOADS = frozenset("entries items results records data".split())
#: the prefixes normalization gives an argument whose name another location already took
_LOCATIONS = frozenset("path query header cookie body form_data formdata".split())
#: control names that are data in a write (`size` of a disk, `order` of an item, a `direction`)
_AMBIGUOUS = frozenset("size top order direction dir".split())
#: read arguments that carry a query language or a facet selection, which no column holds
QUERY_LANGUAGE = frozenset("where filter filters having group_by groupby refine exclude facet facets".split())
#: last words of an argument written in a query language (DynamoDB's `FilterExpression`,
#: `KeyConditions`, `ScanFilter`): conditions on rows, which no column holds
_CONDITION_TAILS = frozenset("expression expressions conditions".split())
#: read arguments that say how the answer is written (dates in a zone, CSV's delimiter), not what it holds
_RENDERING = frozenset(
    "timezone time_zone tz delimiter separator text_format date_format number_format thumbnail_size "
    "indent encoding charset".split()
)
#: first words of a read's switches that add to each answer (`include_app_metas=true`)
_ADDS = frozenset("include with show return".split())
SEARCH = frozenset("q query search keyword keywords term terms search_term search_query text".split())
_LOW = frozenset("min from since after start gte gt lower begin earliest".split())
_HIGH = frozenset("max to until before end lte lt upper latest".split())


def control_role(prop: str, schema: Mapping[str, Any], kind: str, entity: str = "") -> Role | None:
    enum = schema.get("enum")
    if "const" in schema or (isinstance(enum, list) and len(enum) == 1):
        return "option"  # one possible value (an RPC target, a fixed version): it carries no data
    ws = words(prop)
    if len(ws) > 1 and ws[0] in _LOCATIONS:  # `body_Marker`: renamed apart from a query `Marker`
        ws = ws[1:]
    joined = "_".join(ws)
    numeric = schema.get("type") in ("integer", "number")
    pictured = bool(words(entity)) and singular(words(entity)[-1]) in _PICTURES
    if (
        ws[-1:]
        and ws[-1] in _DIMENSIONS
        and not pictured
        and _PIXELS.search(str(schema.get("description") or ""))
    ):
        return "option"  # PayPal's `generate-qr-code(width)`: the picture's size, not the invoice's
    if len(ws) > 1 and ws[0] in ("max", "min") and "_".join(ws[1:]) in _CONTROLS | _OPTION:
        # `MaxResultsPerPage`, `max_cursor`: a bound on a control, not a range over a column
        return "limit" if kind == "read" and numeric and ws[0] == "max" else "option"
    if kind == "read":
        if joined in _CURSOR and not numeric and schema.get("format") not in ("date", "date-time"):
            return "option"  # `after=obj_123`: a cursor over the listing, not a column
        if joined in _LIMIT and (numeric or not schema.get("type")):
            return "limit"
        if joined in _OFFSET and (numeric or not schema.get("type")):
            return "offset"
        if joined in _PAGE and (numeric or not schema.get("type")):
            return "page"
        if joined in _SORT:
            return "sort"
        if joined in _CONTROLS and schema.get("type") == "boolean":
            return "option"  # `top=true` (top-level only): a switch on the listing, not a field
        if joined in _RENDERING or (len(ws) > 1 and ws[0] in _ADDS and schema.get("type") == "boolean"):
            return "option"  # `timezone=UTC`, `include_app_metas=true`: how the answer is written
    if joined in _SELECTORS and _SELECTS.search(str(schema.get("description") or "")):
        return "option"  # YouTube's `part=snippet`: which properties the response includes
    if joined in _OPTION or (joined in _CONTROLS and joined not in _AMBIGUOUS):
        return "option"  # a request control that shapes no data here: never a column
    if ws[:3] == ("on", "behalf", "of"):
        return "option"  # YouTube's `onBehalfOfContentOwner`: who the caller acts for, not data
    if ws[:2] in _CURSOR_HEADS:
        return "option"  # `ExclusiveStartKey`: where a page starts, not data
    if _condition(ws, schema):
        return "option"  # `ConditionExpression`, `Expected`: a condition in a query language
    values = flat(schema).get("enum") if len(ws) > 1 and ws[0] == "return" else None
    if isinstance(values, list) and any(str(v).lower() == "none" for v in values):
        return "option"  # `ReturnValues: NONE | ALL_OLD`: what the answer holds, not data
    return None


def _condition(ws: Sequence[str], schema: Mapping[str, Any]) -> bool:
    """An argument written in a query language: an expression (`KeyConditionExpression`) or its
    placeholders (`ExpressionAttributeValues`), a map of conditions (`QueryFilter`, `Expected`)
    or how conditions combine (`ConditionalOperator`)."""
    if not ws:
        return False
    if ws[-1] in _CONDITION_TAILS or (len(ws) > 1 and ws[0] == "expression"):
        return True
    if ws[-1] == "operator" and len(ws) > 1 and ws[-2] == "conditional":
        return True
    shape = flat(schema)
    mapped = shape.get("type") == "object" and not shape.get("properties")
    return mapped and len(ws) <= 2 and ws[-1] in ("filter", "expected")


def paging_field(name: str, record: Mapping[str, Any]) -> bool:
    """A response field that pages or shapes the answer (`has_more`, `nextPageToken`, `Marker`,
    `LastEvaluatedKey`, `fields`), or the list such fields page (`results` beside `next_page`) and
    its counts (`Count` beside `Items` and `LastEvaluatedKey`): never a column."""
    joined = "_".join(words(name))
    value = record.get(name)
    if joined in _SELECTED and isinstance(value, Mapping) and flat(value).get("type") == "object":
        return False  # OpenDataSoft's `fields: {name: …}`: the record's own values, not a selection
    if joined in _OPTION or joined in _PAGE_STATE or (joined in _CONTROLS and joined not in _AMBIGUOUS):
        return True
    ws = joined.split("_")
    if tuple(ws[:2]) in _CURSOR_HEADS:
        return True  # `LastEvaluatedKey`: where the next page starts
    if joined in _PAYLOADS or joined in _PAGE_COUNTS:
        others = [o for o in record if o != name]
        if joined in _PAGE_COUNTS and not any("_".join(words(o)) in _PAYLOADS for o in others):
            return False  # a count of the record's own
        return any(paging_field(other, {}) for other in others)
    return ws[0] in ("next", "prev", "previous") and ws[-1] in (
        "page",
        "token",
        "cursor",
        "marker",
        "url",
        "link",
    )


def range_role(prop: str, schema: Mapping[str, Any]) -> tuple[Role, str] | None:
    """("min" | "max", the column's name) for `min_price`, `priceMax`, `created_after`, `start_date`."""
    ws = words(prop)
    if len(ws) < 2:
        return None
    numeric = schema.get("type") in ("integer", "number")
    dated = schema.get("format") in ("date", "date-time") or any(w in ("date", "time", "at") for w in ws)
    if not (numeric or dated):
        return None
    for end, role in ((_LOW, "min"), (_HIGH, "max")):
        if ws[0] in end:
            rest = ws[1:]
        elif ws[-1] in end:
            rest = ws[:-1]
        else:
            continue
        if rest in (("date",), ("time",)) or not rest:
            return role, "date"  # type: ignore[return-value]
        if "_".join(rest) in _CONTROLS:
            return None  # `lower_limit` of an integral: a bound itself, not a range over `limit`
        return role, "_".join(rest)  # type: ignore[return-value]
    return None


def request_only(op: Operation, prop: str, schema: Mapping[str, Any]) -> bool:
    """Whether an argument the record does not hold shapes the request rather than carrying data:
    one sent in the query string, any of a delete's, or a whole document with no properties (a
    patch's `body`)."""
    shape = flat(schema)
    document = shape.get("type") == "object" and not shape.get("properties")
    return prop in op.query or (op.kind == "delete" and op.format in OPENAPI) or document


#: keywords that say what a value is; an argument with none of them is taken as text
_SHAPED = frozenset(
    ("type", "enum", "const", "anyOf", "oneOf", "allOf", "properties", "items", "$ref", "format")
)


def as_text(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """An argument's schema for its column: one that says nothing of its shape (function lists
    often give only a description, `ticker: {description: "Stock ticker"}`) is a string column,
    so its rows can be named and asked about; any other as it is."""
    if isinstance(schema, Mapping) and not (_SHAPED & set(schema)):
        return {**schema, "type": "string"}
    return schema


def listed_values(prop: str, schema: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(the column's name, its schema) for a read's list of wanted values (`statuses: [..]`)."""
    items = schema.get("items")
    if schema.get("type") != "array" or not isinstance(items, dict):
        return None
    if column_type(items)[0] == "json":
        return None
    ws = words(prop)
    if not ws:
        return None
    return "_".join([*ws[:-1], singular(ws[-1])]), dict(items)
